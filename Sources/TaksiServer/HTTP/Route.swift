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
        if equals(bytes, "/") {
            return .root
        } else if equals(bytes, "/healthz") {
            return .health
        } else if equals(bytes, "/readyz") {
            return .ready
        } else if equals(bytes, "/metrics") {
            return .metrics
        } else if equals(bytes, "/openapi.yaml") {
            return .openAPI
        } else if equals(bytes, "/links/resolve") {
            return .resolveLink
        } else if equals(bytes, "/.well-known/apple-app-site-association") {
            return .appleAppSiteAssociation
        } else if equals(bytes, "/.well-known/assetlinks.json") {
            return .assetLinks
        } else if equals(bytes.prefix(8), "/preview"), bytes.count == 8 || bytes.dropFirst(8).first == UInt8(ascii: "/") {
            return .preview(PreviewRoute(text(bytes.dropFirst(9))))
        }
        return screenRoute(bytes) ?? .notFound
    }

    private static func screenRoute(_ bytes: Bytes) -> Route? {
        for prefix in prefixes {
            let length = prefix.utf8CodeUnitCount
            guard bytes.count >= length, equals(bytes.prefix(length), prefix) else { continue }
            let rest = bytes.dropFirst(length)
            if rest.isEmpty { return .index }
            guard rest.first == UInt8(ascii: "/") else { continue }
            let name = rest.dropFirst()
            if ends(name, with: "/data") { return .data(text(name.dropLast(5))) }
            if let slash = name.lastIndex(of: UInt8(ascii: "/")) {
                let screen = name[..<slash]
                if screen.count > 8, ends(screen, with: "/actions") {
                    return .action(text(screen.dropLast(8)), text(name[name.index(after: slash)...]))
                }
            }
            return .skeleton(text(name))
        }
        return nil
    }

    private static func equals(_ bytes: Bytes, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { bytes.elementsEqual($0) }
    }

    private static func ends(_ bytes: Bytes, with literal: StaticString) -> Bool {
        bytes.count >= literal.utf8CodeUnitCount && equals(bytes.suffix(literal.utf8CodeUnitCount), literal)
    }

    /// The text of bytes cut from a path at ASCII characters: whole UTF-8 characters.
    private static func text(_ bytes: Bytes) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
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
