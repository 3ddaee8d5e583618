public import Foundation
public import Logging
import NIOCore
import TaksiSchema
import TaksiScreens

/// Everything the server needs to run. Each setting comes from, in order of precedence:
/// a command-line flag, an environment variable (`TAKSI_PORT`, ...), the configuration file
/// (`config.json`), then the default below.
///
/// ```json
/// {"host": "0.0.0.0", "port": 8080, "screens": "Screens", "threads": 2, "log_level": "info"}
/// ```
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to listen on. `127.0.0.1` by default; `0.0.0.0` in a container.
    public var host: String = "127.0.0.1"
    /// The TCP port; 0 picks a free one (the bound port is logged).
    public var port: Int = 8080
    /// The screens directory. A relative path in the configuration file is relative to that file.
    public var screensDirectory: String = "Screens"
    /// Event loop threads; one per core by default.
    public var threads: Int = System.coreCount
    /// The lowest log level written.
    public var logLevel: Logger.Level = .info
    /// Whether the screens directory is watched and reloaded on change.
    public var watch: Bool = true
    /// How often the screens directory is checked for changes, in seconds.
    public var watchInterval: Double = 1
    /// Seconds a cache may serve a skeleton without revalidating (`Cache-Control: max-age`).
    public var skeletonMaxAge: Int = 60
    /// Seconds a cache may still serve a stale skeleton while it revalidates.
    public var skeletonStaleWhileRevalidate: Int = 300
    /// Connection cap, timeouts and request size limits.
    public var limits = ConnectionLimits()
    /// Seconds shutdown waits for in-flight requests before closing what is left.
    public var drainTimeout: Double = 30
    /// Whether one log line is written per request.
    public var accessLog: Bool = true
    /// Whether `/preview` serves the live preview. Off unless configured: the local example
    /// configuration turns it on, the container's and the Kubernetes manifest's leave it off.
    public var preview: Bool = false
    /// How log lines are written.
    public var logFormat: LogFormat = .text
    /// How access log lines are written; the application log's format when not set.
    public var accessLogFormat: LogFormat?
    /// Where access log lines go: standard error (the default), standard output or a file.
    public var accessLogOutput: AccessLog.Output = .standardError
    /// Bytes of data responses kept for requests with the same inputs (``ResponseMemo``); 0 keeps none.
    public var dataMemoMaxBytes: Int = 16 << 20
    /// Seconds an action's answer is replayed to a retry with the same `Idempotency-Key`.
    public var idempotencyWindow: Double = 86_400
    /// ``idempotencyWindow`` as a duration (to the millisecond), as the stores take it.
    public var idempotencyDuration: Duration { .milliseconds(Int64(idempotencyWindow * 1000)) }
    /// Bytes of action answers kept for retries by a server without the fleet's store (``MemoryFleetStore``); 0 keeps none.
    public var idempotencyMaxBytes: Int = 16 << 20
    /// Seconds one exposure record stands for a user's later exposures to the same experiment
    /// (``ExposureRecorder``).
    public var exposureWindow: Double = 86_400
    /// The OTLP/HTTP collector's base URL that exposure records go to as log records
    /// (`<endpoint>/v1/logs`); nil writes them to the application log.
    public var exposureEndpoint: String?
    /// Base URLs of the upstream APIs that `http` sources call, by name: `https://api.citybik.es`,
    /// or `file:DIR` to answer from JSON files (`DIR/v2/networks.json` for `/v2/networks`).
    public var upstreams: [String: String] = [:]
    /// What the file says of an upstream besides its URL (its OpenAPI document, its credential),
    /// by name: see ``UpstreamOptions``.
    public var upstreamOptions: [String: UpstreamOptions] = [:]
    /// The apps that open this server's universal links and App Links: see ``AppLinks``.
    public var appLinks = AppLinks()
    /// Spans of requests and their upstream calls, exported over OTLP/HTTP: see ``TracingSettings``.
    public var tracing = TracingSettings()
    /// A CDN in front: cache tags, shared caching, purges; off by default: see ``CDNSettings``.
    public var cdn: CDNSettings?
    /// The fleet's shared store (PostgreSQL); off by default: see ``StoreSettings``.
    public var store = StoreSettings()
    /// Where the served screens come from: the screens directory, or the bundles published to
    /// the store (``PublishedScreens``).
    public var screensSource: ScreensSource = .directory
    /// The keys that sign the tokens of lists that continue (the first signs, each verifies); none
    /// signs with a key made at start, good for one process only.
    public var pageTokenKeys: [PageTokenKeySetting] = []
    /// Seconds a page token is accepted past the time its data may be served.
    public var pageTokenLifetime: Double = 3600
    /// The pages of one list at most, the first included.
    public var listMaxPages: Int = PageTokens.defaultMaxPages

    /// One key of ``pageTokenKeys``: its id, in every token it signs, and its secret.
    public struct PageTokenKeySetting: Sendable, Equatable {
        public var id: String
        public var secret: Secret

        public init(id: String, secret: Secret) {
            self.id = id
            self.secret = secret
        }

        /// `[{"id": "2026-11", "secret": {"env": "PAGE_KEY_2026_11"}}, ...]`, the first signing.
        static func read(_ value: JSONValue, relativeTo directory: String, source: String) throws(ConfigurationError) -> [Self] {
            let shape =
                "page_token_keys is a list of keys, the first signing and every one verifying: [{\"id\": \"2026-11\", \"secret\": {\"env\": \"TAKSI_PAGE_KEY\"}}]"
            guard case .array(let elements) = value, !elements.isEmpty else { throw ConfigurationError(source: source, message: shape) }
            var keys: [Self] = []
            for element in elements {
                guard case .object(let members) = element, Set(members.keys) == ["id", "secret"], case .string(let id)? = members["id"]
                else {
                    throw ConfigurationError(source: source, message: shape)
                }
                guard PageTokenKey.isKeyID(id) else {
                    throw ConfigurationError(
                        source: source,
                        message: "\"\(id)\" is not a key id: 1 to 32 letters, digits, '-' or '_' (it travels in every token)")
                }
                guard !keys.contains(where: { $0.id == id }) else {
                    throw ConfigurationError(source: source, message: "page_token_keys has two keys with id \"\(id)\"; give each its own")
                }
                keys.append(Self(id: id, secret: try Secret.read(members["secret"], relativeTo: directory, source: source + " \"\(id)\"")))
            }
            return keys
        }

        /// The keys' secrets read, each at least ``PageTokenKey/minimumSecretBytes`` bytes; the
        /// problems, naming where each was looked for, never a value.
        static func keys(_ settings: [Self], environment: [String: String]) -> (keys: [PageTokenKey], problems: [ConfigurationError]) {
            var keys: [PageTokenKey] = []
            var problems: [ConfigurationError] = []
            for setting in settings {
                switch setting.secret.value(environment: environment) {
                case .failure(let error):
                    problems.append(
                        ConfigurationError(source: "page token key \"\(setting.id)\" in \(error.source)", message: error.message))
                case .success(let secret) where secret.utf8.count < PageTokenKey.minimumSecretBytes:
                    problems.append(
                        ConfigurationError(
                            source: "page token key \"\(setting.id)\" in \(setting.secret)",
                            message:
                                "it is \(secret.utf8.count) bytes; a key is \(PageTokenKey.minimumSecretBytes) random bytes or more (openssl rand -base64 32)"
                        ))
                case .success(let secret):
                    keys.append(PageTokenKey(id: setting.id, secret: Array(secret.utf8)))
                }
            }
            return (keys, problems)
        }
    }

    /// Where the served screens come from.
    public enum ScreensSource: String, Sendable, CaseIterable {
        /// The screens directory, reloaded when it changes.
        case directory
        /// The store's current bundle (`taksi-server publish`), followed as it moves.
        case store
    }

    /// Where and how spans are exported (the standard `OTEL_*` variables override these).
    public struct TracingSettings: Sendable, Equatable {
        /// Off by default: then a request does no tracing work at all.
        public var enabled = false
        /// The OTLP/HTTP collector's base URL; spans go to `<endpoint>/v1/traces`.
        public var endpoint = "http://localhost:4318"
        /// The share of traces started here that are recorded, 0 to 1; a request that arrives
        /// with a `traceparent` follows its sampled flag.
        public var sampling = 1.0
        public var serviceName = "taksi-server"
        /// Headers sent with each export, by name (a collector's API key); never logged.
        public var headers: [String: String] = [:]

        public init() {}

        /// The headers of `text`: `name=value` pairs separated by commas, each value
        /// percent-encoded where it holds a comma, an equals sign or a percent sign (the format of
        /// `OTEL_EXPORTER_OTLP_HEADERS`). Empty text is no headers.
        static func headers(_ text: String, source: String) throws(ConfigurationError) -> [String: String] {
            var headers: [String: String] = [:]
            for pair in text.split(separator: ",") where !pair.allSatisfy(\.isWhitespace) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                let written = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                guard parts.count == 2, HTTPSource.isHeaderName(name) else {
                    throw ConfigurationError(
                        source: source,
                        message:
                            "tracing_headers is name=value pairs separated by commas, like api-key=secret,x-tenant=shop; \"\(pair.prefix { $0 != "=" })\" is not a header name"
                    )
                }
                guard let value = written.removingPercentEncoding,
                    !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw ConfigurationError(
                        source: source,
                        message:
                            "the value of \(name) in tracing_headers is not valid: percent-encode a comma as %2C, an equals sign as %3D and a percent sign as %25; no control characters (line breaks)"
                    )
                }
                headers[name] = value
            }
            return headers
        }

        /// `headers` as `headers(_:source:)` reads them, each value percent-encoded where it must be.
        static func text(of headers: [String: String]) -> String {
            var allowed = CharacterSet.urlQueryAllowed
            allowed.remove(charactersIn: ",=%")
            return headers.sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
                .joined(separator: ",")
        }
    }

    /// How log lines are written: for people (`text`) or for log collectors (`json`, one object a line).
    public enum LogFormat: String, Sendable, CaseIterable {
        case text
        case json
    }

    public init() {}

    /// Applies a configuration file's settings over these.
    /// - Throws: ``ConfigurationError`` naming the file, the key and the fix.
    public mutating func apply(file path: String) throws(ConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(
                source: path, message: "the configuration file cannot be read; check the path given to --config or TAKSI_CONFIG")
        }
        let file = SourceFile(path: path, bytes: Array(data))
        let node: JSONNode
        do {
            node = try JSONParser.parse(file.bytes)
        } catch {
            throw ConfigurationError(source: "\(path):\(file.location(ofOffset: error.offset))", message: error.message)
        }
        guard let members = node.members else {
            throw ConfigurationError(source: path, message: "the configuration must be a JSON object of settings")
        }
        let keys = Self.settings.map(\.key)
        let directory = (path as NSString).deletingLastPathComponent
        for member in members {
            guard keys.contains(member.key) else {
                throw ConfigurationError(
                    source: path,
                    message: "unknown setting \"\(member.key)\"; the settings are \(keys.joined(separator: ", "))"
                        + NameSuggestion.hint(for: member.key, among: keys)
                )
            }
            let value = member.value.value
            if member.key == "upstreams" {
                try applyUpstreams(member.value, in: file, relativeTo: directory)
                continue
            }
            if member.key == "page_token_keys" {
                let source = "\(path):\(file.location(ofOffset: member.value.offset)): \"page_token_keys\""
                pageTokenKeys = try PageTokenKeySetting.read(value, relativeTo: directory, source: source)
                continue
            }
            if member.key == "cdn" {
                let source = "\(path):\(file.location(ofOffset: member.value.offset)): \"cdn\""
                guard case .object(let members) = value else {
                    throw ConfigurationError(source: source, message: "cdn is an object: tag_header, skeleton_shared_max_age, purge")
                }
                cdn = try CDNSettings(members, relativeTo: directory, source: source)
                continue
            }
            let text: String
            switch value {
            case .object(let entries) where member.key == "tracing_headers":
                guard let values = entries.mapValues(\.stringValue) as? [String: String] else {
                    throw ConfigurationError(
                        source: "\(path): \"tracing_headers\"", message: "tracing_headers is an object of header names and string values")
                }
                text = TracingSettings.text(of: values)
            case .array(let elements) where Self.setting(member.key)?.takesList == true:
                guard let strings = elements.map(\.stringValue) as? [String] else {
                    throw ConfigurationError(source: "\(path): \"\(member.key)\"", message: "\(member.key) must be a list of strings")
                }
                text = strings.joined(separator: ",")
            case .string(let string): text = string
            case .number, .bool: text = JSONWriter.string(value)
            default:
                throw ConfigurationError(
                    source: path, message: "\"\(member.key)\" must be a string, a number or a Boolean, found \(value.typeName)")
            }
            try apply(key: member.key, value: text, source: "\(path): \"\(member.key)\"")
            if member.key == "screens", !screensDirectory.hasPrefix("/"), !directory.isEmpty {
                screensDirectory = (directory as NSString).appendingPathComponent(screensDirectory)
            }
            if member.key == "access_log_output", case .file(let file) = accessLogOutput, !file.hasPrefix("/"), !directory.isEmpty {
                accessLogOutput = .file((directory as NSString).appendingPathComponent(file))
            }
        }
    }

    /// The file's `upstreams`: each a base URL, or an object of its url, OpenAPI document and
    /// credential; errors at the line and column the upstream is written at.
    private mutating func applyUpstreams(_ node: JSONNode, in file: SourceFile, relativeTo directory: String) throws(ConfigurationError) {
        guard let upstreams = node.members else {
            throw ConfigurationError(
                source: "\(file.path): \"upstreams\"",
                message: "upstreams must be an object of names and base URLs, like {\"citybikes\": \"https://api.citybik.es\"}")
        }
        for upstream in upstreams.sorted(by: { $0.key < $1.key }) {
            let name = upstream.key
            let source = "\(file.path):\(file.location(ofOffset: upstream.value.offset)): \"upstreams\".\(name)"
            switch upstream.value.value {
            case .string(let base):
                try setUpstream(name, base: base, relativeTo: directory, source: source)
            case .object(let members):
                guard case .string(let base)? = members["url"] else {
                    throw ConfigurationError(source: source, message: "an upstream's object needs \"url\", its base URL (or file:DIR)")
                }
                try setUpstream(name, base: base, relativeTo: directory, source: source)
                upstreamOptions[name] = try UpstreamOptions(members, relativeTo: directory, source: source)
            default:
                throw ConfigurationError(
                    source: source,
                    message: "an upstream is a base URL, or an object of its url, openapi (its OpenAPI document) and auth (its credential)")
            }
        }
    }

    /// Applies the `TAKSI_*` environment variables that are set. `TAKSI_UPSTREAM_CITYBIKES`
    /// sets (or overrides) the upstream `citybikes`: names upper-cased, `-` written `_`.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for setting in Self.settings where setting.key != "upstreams" {
            if let value = environment[setting.environment] {
                try apply(key: setting.key, value: value, source: setting.environment)
            }
        }
        let prefix = "TAKSI_UPSTREAM_"
        for (variable, base) in environment.sorted(by: { $0.key < $1.key })
        where variable.hasPrefix(prefix) && variable.count > prefix.count {
            let written = variable.dropFirst(prefix.count)
            let normalized = { (name: String) in name.uppercased().replacingOccurrences(of: "-", with: "_") }
            let name = upstreams.keys.first { normalized($0) == written } ?? written.lowercased()
            try setUpstream(name, base: base, relativeTo: "", source: variable)
        }
    }

    /// The folders of the upstreams that answer from files (`file:DIR`), by name: the screens'
    /// sources are checked against the files there.
    public var upstreamDirectories: [String: String] {
        upstreams.compactMapValues { UpstreamLocation($0).directory }
    }

    /// Why this configuration cannot run away from this machine as it is, or nil: an upstream that
    /// answers from files, whose folder stays here (`deploy kubernetes` and `validate --production`
    /// refuse it). The message names the file, the upstream and where it would run (`place`,
    /// "a pod"), and ends with `fix`.
    public func fileUpstreamProblem(file: String?, place: String, fix: String) -> String? {
        guard let (name, base) = upstreams.sorted(by: { $0.key < $1.key }).first(where: { UpstreamLocation($0.value).directory != nil })
        else { return nil }
        return "\(file ?? "the configuration"): upstream \"\(name)\" answers from files (\(base)), which \(place) does not have: \(fix)"
    }

    /// The paths of the upstreams' OpenAPI documents, by name: the screens' sources are checked against them.
    public var upstreamDocuments: [String: String] {
        upstreamOptions.compactMapValues(\.openAPIDocument)
    }

    /// Checks and records one upstream; a relative `file:` directory is taken relative to `directory`.
    private mutating func setUpstream(_ name: String, base: String, relativeTo directory: String, source: String) throws(ConfigurationError)
    {
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }) else {
            throw ConfigurationError(source: source, message: "upstream names use letters, digits, '_' and '-', like citybikes")
        }
        var base = base.trimmingCharacters(in: .whitespaces)
        if let path = UpstreamLocation(base).directory {
            guard !path.isEmpty else {
                throw ConfigurationError(source: source, message: "a file: upstream names a directory, like file:upstreams/citybikes")
            }
            let absolute = path.hasPrefix("/") || directory.isEmpty ? path : (directory as NSString).appendingPathComponent(path)
            base = UpstreamLocation.files(directory: absolute).text
        } else {
            // Credentials in the URL would never be sent (the client takes the base as a prefix) and
            // would be logged and shown wherever the URL is: refused, with the URL shown without them.
            if let url = URL(string: base), url.user != nil || url.password != nil {
                var shown = URLComponents(string: base)
                shown?.user = nil
                shown?.password = nil
                throw ConfigurationError(
                    source: source,
                    message: "upstream \"\(name)\" has credentials in its URL, which are never sent and would be logged with it: "
                        + "write \(shown?.string ?? "the URL without user:password@") and give the credential as the upstream's "
                        + "\"auth\" ({\"url\": ..., \"auth\": {\"basic\": {\"username\": {\"env\": ...}, \"password\": {\"env\": ...}}}}); "
                        + "to pass the app's own credential, forward its header with the source's headers: [Authorization]"
                )
            }
            guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
                url.query == nil, url.fragment == nil
            else {
                throw ConfigurationError(
                    source: source,
                    message: "\"\(base)\" is not a base URL; write http(s)://host[:port][/path] (no query), or file:DIR for JSON files"
                )
            }
            while base.hasSuffix("/") { base.removeLast() }
        }
        upstreams[name] = base
    }

    /// Applies one setting given as text.
    /// - Parameter source: where the value came from, for the error message.
    public mutating func apply(key: String, value: String, source: String) throws(ConfigurationError) {
        guard let setting = Self.setting(key) else { throw ConfigurationError(source: source, message: "unknown setting \"\(key)\"") }
        try setting.apply(&self, value, source)
    }

    /// The configuration file that ``resolve(file:environment:)`` reads: the one given, else
    /// `TAKSI_CONFIG`, else `config.json` in the working directory when it exists; nil for none.
    public static func filePath(
        given file: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        file ?? environment["TAKSI_CONFIG"] ?? (FileManager.default.fileExists(atPath: "config.json") ? "config.json" : nil)
    }

    /// The configuration from defaults, the file (when given, or `config.json` in the working
    /// directory when that exists) and the environment, in that order.
    public static func resolve(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        if let path = filePath(given: file, environment: environment) { try configuration.apply(file: path) }
        try configuration.apply(environment: environment)
        return configuration
    }
}

/// A configuration setting that is wrong: where it came from and how to fix it.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (and key), the environment variable or the flag the value came from.
    public var source: String
    public var message: String

    public init(source: String, message: String) {
        self.source = source
        self.message = message
    }

    public var description: String { "\(source): \(message)" }
}
