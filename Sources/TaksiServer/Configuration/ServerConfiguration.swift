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
    /// Bytes of data responses kept for requests with the same inputs (``DataMemo``); 0 keeps none.
    public var dataMemoMaxBytes: Int = 16 << 20
    /// Seconds an action's answer is replayed to a retry with the same `Idempotency-Key`.
    public var idempotencyWindow: Double = 86_400
    /// Bytes of action answers kept for retries (``IdempotencyStore``); 0 keeps none.
    public var idempotencyMaxBytes: Int = 16 << 20
    /// Base URLs of the upstream APIs that `http` sources call, by name: `https://api.citybik.es`,
    /// or `file:DIR` to answer from JSON files (`DIR/v2/networks.json` for `/v2/networks`).
    public var upstreams: [String: String] = [:]
    /// The apps that open this server's universal links and App Links: see ``AppLinks``.
    public var appLinks = AppLinks()

    /// How log lines are written: for people (`text`) or for log collectors (`json`, one object a line).
    public enum LogFormat: String, Sendable, CaseIterable {
        case text
        case json
    }

    public init() {}

    /// Each setting: its key in the configuration file, its environment variable and what it means.
    public static let settings: [(key: String, environment: String, summary: String)] = [
        ("host", "TAKSI_HOST", "address to listen on"),
        ("port", "TAKSI_PORT", "TCP port (0 picks a free one)"),
        ("screens", "TAKSI_SCREENS", "screens directory"),
        ("threads", "TAKSI_THREADS", "event loop threads"),
        ("log_level", "TAKSI_LOG_LEVEL", "trace, debug, info, notice, warning, error or critical"),
        ("watch", "TAKSI_WATCH", "reload the screens when they change: true or false"),
        ("watch_interval", "TAKSI_WATCH_INTERVAL", "seconds between checks of the screens directory"),
        ("skeleton_max_age", "TAKSI_SKELETON_MAX_AGE", "Cache-Control max-age of skeletons, in seconds"),
        ("skeleton_stale_while_revalidate", "TAKSI_SKELETON_STALE_WHILE_REVALIDATE", "Cache-Control stale-while-revalidate of skeletons, in seconds"),
        ("max_connections", "TAKSI_MAX_CONNECTIONS", "open client connections at most; more wait in the backlog"),
        ("idle_timeout", "TAKSI_IDLE_TIMEOUT", "seconds before an idle keep-alive connection is closed"),
        ("header_timeout", "TAKSI_HEADER_TIMEOUT", "seconds a client has to send a whole request head"),
        ("body_timeout", "TAKSI_BODY_TIMEOUT", "seconds a client has to send a whole request body"),
        ("write_timeout", "TAKSI_WRITE_TIMEOUT", "seconds a client may leave its responses unread before it is disconnected"),
        ("max_body_bytes", "TAKSI_MAX_BODY_BYTES", "largest request body accepted, in bytes; larger ones get 413"),
        ("max_pipelined_requests", "TAKSI_MAX_PIPELINED_REQUESTS", "requests read ahead of their responses per connection"),
        ("max_requests_per_connection", "TAKSI_MAX_REQUESTS_PER_CONNECTION", "requests answered on one connection before it closes"),
        ("drain_timeout", "TAKSI_DRAIN_TIMEOUT", "seconds shutdown waits for in-flight requests"),
        ("access_log", "TAKSI_ACCESS_LOG", "one log line per request: true or false"),
        ("log_format", "TAKSI_LOG_FORMAT", "text or json"),
        ("access_log_format", "TAKSI_ACCESS_LOG_FORMAT", "text or json (default: log_format's)"),
        ("access_log_output", "TAKSI_ACCESS_LOG_OUTPUT", "stderr, stdout or a file path (reopened on SIGHUP)"),
        ("preview", "TAKSI_PREVIEW", "serve the live preview at /preview: true or false (off unless set; never on in production)"),
        ("data_memo_max_bytes", "TAKSI_DATA_MEMO_MAX_BYTES", "bytes of data responses kept for requests with the same inputs (0 keeps none)"),
        ("idempotency_window", "TAKSI_IDEMPOTENCY_WINDOW", "seconds an action's answer is replayed to a retry with the same Idempotency-Key"),
        ("idempotency_max_bytes", "TAKSI_IDEMPOTENCY_MAX_BYTES", "bytes of action answers kept for retries (0 keeps none)"),
        ("upstreams", "TAKSI_UPSTREAM_<NAME>", "base URLs of upstream APIs by name (an object in the file)"),
        ("apple_app_ids", "TAKSI_APPLE_APP_IDS", "iOS apps (TEAMID.bundle.id) that open the https links of links.yaml; a list (comma-separated in the environment)"),
        ("android_package", "TAKSI_ANDROID_PACKAGE", "the Android app's package name that opens the https links of links.yaml"),
        ("android_cert_fingerprints", "TAKSI_ANDROID_CERT_FINGERPRINTS", "SHA-256 fingerprints of the Android app's signing certificates; a list (comma-separated in the environment)"),
    ]

    /// Applies a configuration file's settings over these.
    /// - Throws: ``ConfigurationError`` naming the file, the key and the fix.
    public mutating func apply(file path: String) throws(ConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(source: path, message: "the configuration file cannot be read; check the path given to --config or TAKSI_CONFIG")
        }
        let node: JSONNode
        do {
            node = try JSONParser.parse(Array(data))
        } catch {
            let location = SourceFile(path: path, bytes: Array(data)).location(ofOffset: error.offset)
            throw ConfigurationError(source: "\(path):\(location)", message: error.message)
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
                guard case .object(let entries) = value else {
                    throw ConfigurationError(source: "\(path): \"upstreams\"", message: "upstreams must be an object of names and base URLs, like {\"citybikes\": \"https://api.citybik.es\"}")
                }
                for (name, base) in entries.sorted(by: { $0.key < $1.key }) {
                    guard case .string(let base) = base else {
                        throw ConfigurationError(source: "\(path): \"upstreams\".\(name)", message: "a base URL must be a string")
                    }
                    try setUpstream(name, base: base, relativeTo: directory, source: "\(path): \"upstreams\".\(name)")
                }
                continue
            }
            let text: String
            switch value {
            case .array(let elements) where ["apple_app_ids", "android_cert_fingerprints"].contains(member.key):
                guard let strings = elements.map(\.stringValue) as? [String] else {
                    throw ConfigurationError(source: "\(path): \"\(member.key)\"", message: "\(member.key) must be a list of strings")
                }
                text = strings.joined(separator: ",")
            case .string(let string): text = string
            case .number, .bool: text = JSONWriter.string(value)
            default:
                throw ConfigurationError(source: path, message: "\"\(member.key)\" must be a string, a number or a Boolean, found \(value.typeName)")
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

    /// Applies the `TAKSI_*` environment variables that are set. `TAKSI_UPSTREAM_CITYBIKES`
    /// sets (or overrides) the upstream `citybikes`: names upper-cased, `-` written `_`.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for setting in Self.settings where setting.key != "upstreams" {
            if let value = environment[setting.environment] {
                try apply(key: setting.key, value: value, source: setting.environment)
            }
        }
        let prefix = "TAKSI_UPSTREAM_"
        for (variable, base) in environment.sorted(by: { $0.key < $1.key }) where variable.hasPrefix(prefix) && variable.count > prefix.count {
            let written = variable.dropFirst(prefix.count)
            let normalized = { (name: String) in name.uppercased().replacingOccurrences(of: "-", with: "_") }
            let name = upstreams.keys.first { normalized($0) == written } ?? written.lowercased()
            try setUpstream(name, base: base, relativeTo: "", source: variable)
        }
    }

    /// Checks and records one upstream; a relative `file:` directory is taken relative to `directory`.
    private mutating func setUpstream(_ name: String, base: String, relativeTo directory: String, source: String) throws(ConfigurationError) {
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }) else {
            throw ConfigurationError(source: source, message: "upstream names use letters, digits, '_' and '-', like citybikes")
        }
        var base = base.trimmingCharacters(in: .whitespaces)
        if base.hasPrefix("file:") {
            let path = String(base.dropFirst("file:".count))
            guard !path.isEmpty else { throw ConfigurationError(source: source, message: "a file: upstream names a directory, like file:upstreams/citybikes") }
            let absolute = path.hasPrefix("/") || directory.isEmpty ? path : (directory as NSString).appendingPathComponent(path)
            base = "file:" + absolute
        } else {
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
        switch key {
        case "host":
            guard !value.isEmpty else { throw ConfigurationError(source: source, message: "the host may not be empty; use 127.0.0.1 or 0.0.0.0") }
            host = value
        case "port":
            guard let port = Int(value), (0...65535).contains(port) else {
                throw ConfigurationError(source: source, message: "the port must be a number from 0 to 65535, found \"\(value)\"")
            }
            self.port = port
        case "screens":
            guard !value.isEmpty else { throw ConfigurationError(source: source, message: "the screens directory may not be empty") }
            screensDirectory = value
        case "threads":
            guard let threads = Int(value), (1...256).contains(threads) else {
                throw ConfigurationError(source: source, message: "threads must be a number from 1 to 256, found \"\(value)\"")
            }
            self.threads = threads
        case "log_level":
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                let levels = Logger.Level.allCases.map(\.rawValue)
                throw ConfigurationError(
                    source: source,
                    message: "unknown log level \"\(value)\"; use one of \(levels.joined(separator: ", "))"
                        + NameSuggestion.hint(for: value, among: levels)
                )
            }
            logLevel = level
        case "watch":
            watch = try Self.boolean(value, key: key, source: source)
        case "access_log":
            accessLog = try Self.boolean(value, key: key, source: source)
        case "preview":
            preview = try Self.boolean(value, key: key, source: source)
        case "log_format", "access_log_format":
            guard let format = LogFormat(rawValue: value.lowercased()) else {
                throw ConfigurationError(source: source, message: "\(key) must be text or json, found \"\(value)\"")
            }
            if key == "log_format" { logFormat = format } else { accessLogFormat = format }
        case "access_log_output":
            guard !value.isEmpty else {
                throw ConfigurationError(source: source, message: "access_log_output must be stderr, stdout or a file path, found an empty value")
            }
            accessLogOutput = AccessLog.Output(value)
        case "max_connections", "max_pipelined_requests", "max_requests_per_connection":
            let range = key == "max_pipelined_requests" ? 1...1024 : 1...1_000_000
            guard let count = Int(value), range.contains(count) else {
                throw ConfigurationError(
                    source: source, message: "\(key) must be a number from \(range.lowerBound) to \(range.upperBound), found \"\(value)\""
                )
            }
            switch key {
            case "max_connections": limits.maxConnections = count
            case "max_pipelined_requests": limits.maxPipelinedRequests = count
            default: limits.maxRequestsPerConnection = count
            }
        case "data_memo_max_bytes", "idempotency_max_bytes":
            guard let bytes = Int(value), bytes >= 0 else {
                throw ConfigurationError(source: source, message: "\(key) must be a whole number of bytes, 0 or more, found \"\(value)\"")
            }
            if key == "data_memo_max_bytes" { dataMemoMaxBytes = bytes } else { idempotencyMaxBytes = bytes }
        case "idempotency_window":
            guard let seconds = Double(value), seconds >= 1, seconds <= 7 * 86_400 else {
                throw ConfigurationError(source: source, message: "idempotency_window must be a number of seconds from 1 to 604800, found \"\(value)\"")
            }
            idempotencyWindow = seconds
        case "max_body_bytes":
            guard let bytes = Int(value), (0...(64 << 20)).contains(bytes) else {
                throw ConfigurationError(source: source, message: "max_body_bytes must be a number of bytes from 0 to 67108864, found \"\(value)\"")
            }
            limits.maxBodyBytes = bytes
        case "idle_timeout", "header_timeout", "body_timeout", "write_timeout", "drain_timeout":
            guard let seconds = Double(value), seconds >= 0.01, seconds <= 86_400 else {
                throw ConfigurationError(source: source, message: "\(key) must be a number of seconds from 0.01 to 86400, found \"\(value)\"")
            }
            let amount = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
            switch key {
            case "idle_timeout": limits.idleTimeout = amount
            case "header_timeout": limits.headerTimeout = amount
            case "body_timeout": limits.bodyTimeout = amount
            case "write_timeout": limits.writeTimeout = amount
            default: drainTimeout = seconds
            }
        case "watch_interval":
            guard let seconds = Double(value), seconds >= 0.05, seconds <= 3600 else {
                throw ConfigurationError(
                    source: source, message: "watch_interval must be a number of seconds from 0.05 to 3600, found \"\(value)\""
                )
            }
            watchInterval = seconds
        case "apple_app_ids":
            let ids = Self.list(value)
            if let bad = ids.first(where: { !AppLinks.isAppleAppID($0) }) {
                throw ConfigurationError(source: source, message: "\"\(bad)\" is not an app ID; write the team ID, a dot and the bundle ID, like ABCDE12345.com.example.eats")
            }
            appLinks.appleAppIDs = ids
        case "android_package":
            guard value.isEmpty || AppLinks.isAndroidPackage(value) else {
                throw ConfigurationError(source: source, message: "\"\(value)\" is not an Android package name; write it like com.example.eats")
            }
            appLinks.androidPackage = value.isEmpty ? nil : value
        case "android_cert_fingerprints":
            let fingerprints = Self.list(value).map { $0.uppercased() }
            if let bad = fingerprints.first(where: { !AppLinks.isFingerprint($0) }) {
                throw ConfigurationError(
                    source: source,
                    message: "\"\(bad)\" is not a SHA-256 certificate fingerprint; write 32 hexadecimal pairs separated by ':' (keytool -list -v prints it)"
                )
            }
            appLinks.androidCertificateFingerprints = fingerprints
        case "skeleton_max_age", "skeleton_stale_while_revalidate":
            guard let seconds = Int(value), (0...31_536_000).contains(seconds) else {
                throw ConfigurationError(source: source, message: "\(key) must be whole seconds from 0 to 31536000, found \"\(value)\"")
            }
            if key == "skeleton_max_age" { skeletonMaxAge = seconds } else { skeletonStaleWhileRevalidate = seconds }
        default:
            throw ConfigurationError(source: source, message: "unknown setting \"\(key)\"")
        }
    }

    /// The items of a comma-separated list, trimmed, without empty ones.
    private static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func boolean(_ value: String, key: String, source: String) throws(ConfigurationError) -> Bool {
        switch value.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw ConfigurationError(source: source, message: "\(key) must be true or false, found \"\(value)\"")
        }
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
