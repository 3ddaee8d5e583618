public import Foundation
import TaksiSchema
import TaksiScreens

/// What config.json's `cdn` says: the tags skeletons carry, how long a CDN may keep them, and
/// where to send a purge when a screen changes (see docs/operations.md, "A CDN in front").
///
/// ```json
/// "cdn": {
///   "tag_header": "Surrogate-Key",
///   "skeleton_shared_max_age": 3600,
///   "purge": [
///     {"varnish": ["http://varnish-1:6081", "http://varnish-2:6081"]},
///     {"fastly": {"service_id": "SU1Z0isxPaozGVKXdv0eY", "token": {"env": "FASTLY_API_TOKEN"}}},
///     {"cloudflare": {"zone_id": "023e105f4ecef8ad9ca31a8372d0c353", "token": {"env": "CLOUDFLARE_API_TOKEN"}}}
///   ]
/// }
/// ```
public struct CDNSettings: Sendable, Equatable {
    /// The tags' header and prefix.
    public var tags: CacheTags
    /// `s-maxage` of skeletons: how long a purged CDN may keep them; only with a purge target.
    public var skeletonSharedMaxAge: Int?
    /// Where purges go.
    public var targets: [PurgeTarget]
    /// The pauses between the attempts of one purge (not a setting of the file: 1, 2, 4 and 8 s).
    public var backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8)]
    /// How often tags whose purge failed are sent again, until they are purged (not a setting of
    /// the file: 30 s; they also go with the next purge).
    public var resend: Duration = .seconds(30)

    public init(tags: CacheTags = CacheTags(), skeletonSharedMaxAge: Int? = nil, targets: [PurgeTarget] = []) {
        self.tags = tags
        self.skeletonSharedMaxAge = skeletonSharedMaxAge
        self.targets = targets
    }

    /// One place a purge is sent.
    public enum PurgeTarget: Sendable, Equatable {
        /// Varnish nodes with vmod_xkey: `PURGE /` to each, the tags in `xkey-purge` (and `xkey`).
        case varnish([URL])
        /// Fastly's purge API: `POST /service/<id>/purge` with `Surrogate-Key`, soft by default.
        case fastly(serviceID: String, token: Secret, soft: Bool, api: URL)
        /// Cloudflare's purge API: `POST /client/v4/zones/<id>/purge_cache` with `{"tags": [...]}`.
        case cloudflare(zoneID: String, token: Secret, api: URL)

        /// How logs and metrics name it: `varnish`, `fastly`, `cloudflare`.
        public var kind: String {
            switch self {
            case .varnish: "varnish"
            case .fastly: "fastly"
            case .cloudflare: "cloudflare"
            }
        }

        /// Its secrets, checked at start like upstream credentials.
        public var secrets: [Secret] {
            switch self {
            case .varnish: []
            case .fastly(_, let token, _, _), .cloudflare(_, let token, _): [token]
            }
        }
    }

    static let keys = ["tag_header", "tag_prefix", "skeleton_shared_max_age", "purge"]

    init(_ members: [String: JSONValue], relativeTo directory: String, source: String) throws(ConfigurationError) {
        self.init()
        for key in members.keys.sorted() where !Self.keys.contains(key) {
            throw ConfigurationError(
                source: source,
                message: "unknown key \"\(key)\" of cdn; its keys are \(Self.keys.joined(separator: ", "))"
                    + NameSuggestion.hint(for: key, among: Self.keys))
        }
        if let header = members["tag_header"] {
            guard case .string(let name) = header, HTTPSource.isHeaderName(name) else {
                throw ConfigurationError(
                    source: "\(source).tag_header",
                    message: "tag_header is the response header the CDN reads: Surrogate-Key (Fastly, Varnish), Cache-Tag (Cloudflare), "
                        + "Edge-Cache-Tag (Akamai), or the one a CloudFront distribution names")
            }
            tags.header = name
        }
        if let prefix = members["tag_prefix"] {
            guard case .string(let text) = prefix, !text.isEmpty, text.count <= 32,
                text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") })
            else {
                throw ConfigurationError(
                    source: "\(source).tag_prefix", message: "tag_prefix is 1 to 32 letters, digits, '-' or '_', like shop-screens")
            }
            tags.prefix = text
        }
        if let purge = members["purge"] {
            guard case .array(let entries) = purge else {
                throw ConfigurationError(
                    source: "\(source).purge",
                    message: "purge is a list of targets, like [{\"varnish\": [\"http://varnish:6081\"]}]")
            }
            for (index, entry) in entries.enumerated() {
                targets.append(try Self.target(entry, relativeTo: directory, source: "\(source).purge[\(index)]"))
            }
        }
        if let age = members["skeleton_shared_max_age"] {
            guard case .number(let seconds) = age, seconds >= 0, seconds <= 31_536_000, seconds == seconds.rounded() else {
                throw ConfigurationError(
                    source: "\(source).skeleton_shared_max_age", message: "skeleton_shared_max_age is whole seconds from 0 to 31536000")
            }
            guard !targets.isEmpty else {
                throw ConfigurationError(
                    source: "\(source).skeleton_shared_max_age",
                    message: "a CDN keeping skeletons longer than phones do needs a purge target, or every change would be that late: "
                        + "add \"purge\": [...] (see docs/operations.md), or leave skeleton_shared_max_age out")
            }
            skeletonSharedMaxAge = Int(seconds)
        }
    }

    private static func target(_ entry: JSONValue, relativeTo directory: String, source: String) throws(ConfigurationError) -> PurgeTarget {
        let kinds = ["varnish", "fastly", "cloudflare"]
        guard case .object(let members) = entry, members.count == 1, let (kind, body) = members.first else {
            throw ConfigurationError(
                source: source, message: "a purge target is an object of one key: \(kinds.joined(separator: ", "))")
        }
        let at = "\(source).\(kind)"
        func string(_ members: [String: JSONValue], _ key: String, _ example: String) throws(ConfigurationError) -> String {
            guard case .string(let text)? = members[key], !text.isEmpty,
                text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") })
            else {
                throw ConfigurationError(source: "\(at).\(key)", message: "\(key) is the \(kind) \(example)")
            }
            return text
        }
        func api(_ members: [String: JSONValue], default base: String) throws(ConfigurationError) -> URL {
            guard let value = members["api"] else { return URL(string: base)! }
            guard case .string(let text) = value, let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else {
                throw ConfigurationError(source: "\(at).api", message: "api is the provider's API base URL, like \(base)")
            }
            return url
        }
        func only(_ members: [String: JSONValue], _ keys: [String]) throws(ConfigurationError) {
            for key in members.keys.sorted() where !keys.contains(key) {
                throw ConfigurationError(
                    source: at, message: "unknown key \"\(key)\"; a \(kind) target's keys are \(keys.joined(separator: ", "))")
            }
        }
        switch kind {
        case "varnish":
            guard case .array(let nodes) = body, !nodes.isEmpty else {
                throw ConfigurationError(source: at, message: "varnish is a list of its nodes' URLs, like [\"http://varnish-1:6081\"]")
            }
            var urls: [URL] = []
            for node in nodes {
                guard case .string(let text) = node, let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""),
                    url.host != nil
                else {
                    throw ConfigurationError(
                        source: at, message: "\(JSONWriter.string(node)) is not a Varnish node's URL, like http://varnish-1:6081")
                }
                urls.append(url)
            }
            return .varnish(urls)
        case "fastly":
            guard case .object(let members) = body else {
                throw ConfigurationError(source: at, message: "fastly is {\"service_id\": ..., \"token\": {\"env\": \"FASTLY_API_TOKEN\"}}")
            }
            try only(members, ["service_id", "token", "soft", "api"])
            var soft = true
            if let value = members["soft"] {
                guard case .bool(let flag) = value else { throw ConfigurationError(source: "\(at).soft", message: "soft is true or false") }
                soft = flag
            }
            return .fastly(
                serviceID: try string(members, "service_id", "service's ID, as its dashboard shows it"),
                token: try Secret.read(members["token"], relativeTo: directory, source: "\(at).token"), soft: soft,
                api: try api(members, default: "https://api.fastly.com"))
        case "cloudflare":
            guard case .object(let members) = body else {
                throw ConfigurationError(
                    source: at, message: "cloudflare is {\"zone_id\": ..., \"token\": {\"env\": \"CLOUDFLARE_API_TOKEN\"}}")
            }
            try only(members, ["zone_id", "token", "api"])
            return .cloudflare(
                zoneID: try string(members, "zone_id", "zone's ID, from its Overview page"),
                token: try Secret.read(members["token"], relativeTo: directory, source: "\(at).token"),
                api: try api(members, default: "https://api.cloudflare.com"))
        default:
            throw ConfigurationError(
                source: at,
                message: "unknown purge target \"\(kind)\"; the targets are \(kinds.joined(separator: ", "))"
                    + NameSuggestion.hint(for: kind, among: kinds))
        }
    }
}
