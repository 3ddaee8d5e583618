/// The endpoints, matched from a request path.
///
/// | path | route |
/// |---|---|
/// | `/screens`, `/interfaces` | ``index`` |
/// | `/screens/<name>`, `/interfaces/<name>` | ``skeleton(_:)`` |
/// | `/screens/<name>/data`, `/interfaces/<name>/data` | ``data(_:)`` |
/// | `/healthz` | ``health`` |
/// | `/readyz` | ``ready`` |
/// | `/metrics` | ``metrics`` |
/// | `/openapi.yaml` | ``openAPI`` |
///
/// Screen names may hold `/`, and never end in the segment `data`, so the last `/data` always
/// means the data endpoint.
enum Route: Sendable, Equatable {
    case index
    case skeleton(String)
    case data(String)
    case health
    case ready
    case metrics
    case openAPI
    case notFound

    private static let prefixes = ["/screens", "/interfaces"]

    init(path: Substring) {
        var path = path
        if path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        if path == "/healthz" {
            self = .health
            return
        }
        switch path {
        case "/readyz":
            self = .ready
            return
        case "/metrics":
            self = .metrics
            return
        case "/openapi.yaml":
            self = .openAPI
            return
        default:
            break
        }
        for prefix in Self.prefixes where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            if rest.isEmpty {
                self = .index
                return
            }
            guard rest.hasPrefix("/") else { continue }
            let name = rest.dropFirst()
            if name.hasSuffix("/data") {
                self = .data(String(name.dropLast("/data".count)))
            } else {
                self = .skeleton(String(name))
            }
            return
        }
        self = .notFound
    }
}
