/// The family of endpoint that answered a response, as metrics (the `route` label), traces
/// (`http.route`) and the access log name it: `skeleton`, `data`, `index`, ... A closed set of
/// values, so a label's cardinality never depends on a request.
public struct MetricsLabel: Sendable, Hashable, CustomStringConvertible {
    /// The label's text.
    public let rawValue: String

    private init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let skeleton = MetricsLabel("skeleton")
    public static let data = MetricsLabel("data")
    public static let action = MetricsLabel("action")
    public static let options = MetricsLabel("options")
    public static let index = MetricsLabel("index")
    public static let links = MetricsLabel("links")
    public static let appleAppSiteAssociation = MetricsLabel("apple-app-site-association")
    public static let assetLinks = MetricsLabel("assetlinks")
    public static let openAPI = MetricsLabel("openapi")
    public static let preview = MetricsLabel("preview")
    public static let root = MetricsLabel("root")
    public static let health = MetricsLabel("health")
    public static let ready = MetricsLabel("ready")
    public static let metrics = MetricsLabel("metrics")
    /// An error decided before any endpoint (a malformed request, a limit, no such path).
    public static let error = MetricsLabel("error")
    /// Anything else.
    public static let other = MetricsLabel("other")
}
