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

    /// Matches on the path's UTF-8 bytes: String's Unicode-aware comparisons were a tenth of the
    /// hot path's time in the benchmark.
    init(path: Substring) {
        var bytes = path.utf8[...]
        if bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        if Self.equals(bytes, "/") {
            self = .root
        } else if Self.equals(bytes, "/healthz") {
            self = .health
        } else if Self.equals(bytes, "/readyz") {
            self = .ready
        } else if Self.equals(bytes, "/metrics") {
            self = .metrics
        } else if Self.equals(bytes, "/openapi.yaml") {
            self = .openAPI
        } else if Self.equals(bytes, "/links/resolve") {
            self = .resolveLink
        } else if Self.equals(bytes, "/.well-known/apple-app-site-association") {
            self = .appleAppSiteAssociation
        } else if Self.equals(bytes, "/.well-known/assetlinks.json") {
            self = .assetLinks
        } else if Self.equals(bytes.prefix(8), "/preview"), bytes.count == 8 || bytes.dropFirst(8).first == UInt8(ascii: "/") {
            self = .preview(PreviewRoute(bytes.dropFirst(9)))
        } else {
            self = Self.screenRoute(bytes) ?? .notFound
        }
    }

    private static func screenRoute(_ bytes: Substring.UTF8View.SubSequence) -> Route? {
        for prefix in prefixes {
            let length = prefix.utf8CodeUnitCount
            guard bytes.count >= length, equals(bytes.prefix(length), prefix) else { continue }
            let rest = bytes.dropFirst(length)
            if rest.isEmpty { return .index }
            guard rest.first == UInt8(ascii: "/") else { continue }
            let name = rest.dropFirst()
            let suffix = "/data".utf8
            if name.count >= suffix.count, name.suffix(suffix.count).elementsEqual(suffix) {
                return .data(String(Substring(name.dropLast(suffix.count))))
            }
            if let slash = name.lastIndex(of: UInt8(ascii: "/")) {
                let screen = name[..<slash]
                let marker = "/actions".utf8
                if screen.count > marker.count, screen.suffix(marker.count).elementsEqual(marker) {
                    let action = name[name.index(after: slash)...]
                    return .action(String(Substring(screen.dropLast(marker.count))), String(Substring(action)))
                }
            }
            return .skeleton(String(Substring(name)))
        }
        return nil
    }

    private static func equals(_ bytes: Substring.UTF8View.SubSequence, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { bytes.elementsEqual($0) }
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

    init(_ rest: Substring.UTF8View.SubSequence) {
        let text = String(Substring(rest))
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
