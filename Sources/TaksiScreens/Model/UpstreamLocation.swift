/// Where an upstream answers from, as a configuration names it: an HTTP(S) base URL, or a
/// directory of JSON files (`file:upstreams/citybikes`, the offline fixtures). The one place the
/// `file:` form is recognised.
public enum UpstreamLocation: Sendable, Equatable {
    /// A base URL, which a call's path follows.
    case http(String)
    /// A directory of JSON files, one per call's path.
    case files(directory: String)

    /// The form a directory is written in.
    static let filePrefix = "file:"

    /// Reads a configured base (`https://api.citybik.es`, `file:upstreams/citybikes`).
    public init(_ base: String) {
        if base.hasPrefix(Self.filePrefix) {
            self = .files(directory: String(base.dropFirst(Self.filePrefix.count)))
        } else {
            self = .http(base)
        }
    }

    /// The directory, for one that answers from files.
    public var directory: String? {
        if case .files(let directory) = self { directory } else { nil }
    }

    /// As a configuration writes it.
    public var text: String {
        switch self {
        case .http(let base): base
        case .files(let directory): Self.filePrefix + directory
        }
    }
}
