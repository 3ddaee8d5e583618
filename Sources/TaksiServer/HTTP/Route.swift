/// The endpoints, matched from a request path.
///
/// | path | route |
/// |---|---|
/// | `/` | ``root`` |
/// | `/screens`, `/interfaces` | ``index`` |
/// | `/screens/<name>`, `/interfaces/<name>` | ``skeleton(_:)`` |
/// | `/screens/<name>/data`, `/interfaces/<name>/data` | ``data(_:)`` |
/// | `/screens/<name>/actions/<action>`, `/interfaces/<name>/actions/<action>` | ``action(_:_:)`` |
/// | `/healthz` | ``health`` |
/// | `/readyz` | ``ready`` |
/// | `/metrics` | ``metrics`` |
/// | `/openapi.yaml` | ``openAPI`` |
/// | `/links/resolve` | ``resolveLink`` |
/// | `/.well-known/apple-app-site-association` | ``appleAppSiteAssociation`` |
/// | `/.well-known/assetlinks.json` | ``assetLinks`` |
/// | `/preview`, `/preview/<name>`, `/preview/<file>.<ext>` | ``preview(_:)`` |
///
/// Screen names may hold `/`, and never end in the segment `data`, so the last `/data` always
/// means the data endpoint; nor is the segment before their last one `actions`, so
/// `<name>/actions/<action>` always means an action. Nor do their literal segments hold `.`, so the preview's own files
/// (`preview.js`, `events.stream`) never shadow a screen's preview page; only a screen whose whole
/// name is one parameter (`{slug}`) cannot be previewed with exactly those values.
enum Route: Sendable, Equatable {
    /// `/`: where a person who opens the server's address is sent.
    case root
    case index
    case skeleton(String)
    case data(String)
    /// A screen's path and the name of one of its actions.
    case action(String, String)
    case health
    case ready
    case metrics
    case openAPI
    case resolveLink
    case appleAppSiteAssociation
    case assetLinks
    case preview(PreviewRoute)
    case notFound

    /// Whether this is one of the preview's routes (they exist only while it is on).
    var isPreview: Bool {
        if case .preview = self { true } else { false }
    }

    private static let prefixes: [StaticString] = ["/screens", "/interfaces"]

    /// The paths that name an endpoint as they are.
    private static let exact: [(path: StaticString, route: Route)] = [
        ("/", .root), ("/healthz", .health), ("/readyz", .ready), ("/metrics", .metrics), ("/openapi.yaml", .openAPI),
        ("/links/resolve", .resolveLink), ("/.well-known/apple-app-site-association", .appleAppSiteAssociation),
        ("/.well-known/assetlinks.json", .assetLinks),
    ]

    /// Matches on the path's UTF-8 bytes where they lie: String's Unicode-aware comparisons were a
    /// tenth of the hot path's time in the benchmark, and a walk of a substring's UTF-8 view a byte
    /// at a time cost a data request more than the rest of its routing.
    init(path: Substring) {
        var path = path
        self = path.withUTF8 { Self.route($0[...]) }
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static func route(_ path: Bytes) -> Route {
        var bytes = path
        if bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        // The screens' routes first: nearly every request is one (none of the others begins so).
        if let route = screenRoute(bytes) { return route }
        if let found = exact.first(where: { equals(bytes, $0.path) }) { return found.route }
        if let rest = bytes.without(prefix: "/preview"), rest.isEmpty || rest.first == UInt8(ascii: "/") {
            return .preview(PreviewRoute(text(rest.dropFirst())))
        }
        return .notFound
    }

    private static func screenRoute(_ bytes: Bytes) -> Route? {
        for prefix in prefixes {
            guard let rest = bytes.without(prefix: prefix) else { continue }
            if rest.isEmpty { return .index }
            guard rest.first == UInt8(ascii: "/") else { continue }
            let name = rest.dropFirst()
            if let screen = name.without(suffix: "/data") { return .data(text(screen)) }
            if let slash = name.lastIndex(of: UInt8(ascii: "/")), let screen = name[..<slash].without(suffix: "/actions"), !screen.isEmpty {
                return .action(text(screen), text(name[name.index(after: slash)...]))
            }
            return .skeleton(text(name))
        }
        return nil
    }

    private static func equals(_ bytes: Bytes, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { HeaderList.equals(UnsafeBufferPointer(rebasing: bytes), $0) }
    }

    /// The text of bytes cut from a path at ASCII characters: whole UTF-8 characters.
    private static func text(_ bytes: Bytes) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
    }
}

extension Slice<UnsafeBufferPointer<UInt8>> {
    /// Whether these bytes begin with `literal`'s (compared as memory, ``HeaderList/equals(_:_:)``:
    /// a generic walk of two collections a byte at a time cost a tenth of routing).
    fileprivate func starts(with literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        return count >= length && literal.withUTF8Buffer { HeaderList.equals(UnsafeBufferPointer(rebasing: prefix(length)), $0) }
    }

    /// Whether these bytes end with `literal`'s.
    fileprivate func ends(with literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        return count >= length && literal.withUTF8Buffer { HeaderList.equals(UnsafeBufferPointer(rebasing: suffix(length)), $0) }
    }

    /// These bytes without `prefix`, if they begin with it.
    fileprivate func without(prefix: StaticString) -> Self? {
        starts(with: prefix) ? dropFirst(prefix.utf8CodeUnitCount) : nil
    }

    /// These bytes without `suffix`, if they end with it.
    fileprivate func without(suffix: StaticString) -> Self? {
        ends(with: suffix) ? dropLast(suffix.utf8CodeUnitCount) : nil
    }
}

/// The live preview's endpoints, under `/preview` (see ``Preview``).
enum PreviewRoute: Sendable, Equatable {
    /// `/preview`: the list of screens.
    case list
    /// `/preview/<screen path>`: one screen as an app shows it (`home`, `bikes/stations/velib`);
    /// the page reads the path itself.
    case screen
    /// `/preview/preview.js`, `/preview/preview.css`: the page's script and style.
    case asset(String)
    /// `/preview/catalog.json`: screens, variants, parameters and component schemas, for the page.
    case catalog
    /// `/preview/exchange.json`: one request to the screen endpoints, answered as the app receives it.
    case exchange
    /// `/preview/events.stream`: server-sent events, one per screen set version.
    case events

    init(_ text: String) {
        switch text {
        case "": self = .list
        case "catalog.json": self = .catalog
        case "exchange.json": self = .exchange
        case "events.stream": self = .events
        case "preview.js", "preview.css": self = .asset(text)
        default: self = .screen
        }
    }
}
