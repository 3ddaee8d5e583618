import Foundation
import Logging
import NIOCore
import TaksiSchema
import TaksiScreens

extension ServerConfiguration {
    /// One setting, described once: its key in the configuration file, its environment variable,
    /// its flag, its default and meaning as the table in docs/configuration.md shows them, and how a value given
    /// as text is checked and applied. The file, the environment, the command line's help and the
    /// table in docs/configuration.md (checked by a test) are all read from ``settings``.
    public struct Setting: Sendable {
        public let key: String
        public let environment: String
        /// The command line's flags for it, as docs/configuration.md writes them (`--host`); nil for none.
        public let flags: String?
        /// The default, as docs/configuration.md writes it (`` `8080` ``, `one per core`).
        public let defaultText: String
        /// What it does, as docs/configuration.md writes it (Markdown).
        public let meaning: String
        /// The file may give a list of strings (joined with commas, as in the environment).
        let takesList: Bool
        /// Checks `value` and applies it; `source` names where it came from, for the error.
        let apply:
            @Sendable (_ configuration: inout ServerConfiguration, _ value: String, _ source: String) throws(ConfigurationError) -> Void

        /// The help of its flag: the meaning, without Markdown, the variable and the default.
        public var help: String {
            // Code spans lose their backticks, links keep their text.
            let plain = { (text: String) in
                text.replacingOccurrences(of: "`", with: "").replacingOccurrences(
                    of: #"\[([^\]]+)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
            }
            return "\(plain(meaning)) (\(environment); default \(plain(defaultText)))."
        }

        /// Its row of the table in docs/configuration.md.
        var tableRow: String {
            let flagColumn =
                flags.map {
                    " " + $0.split(separator: ",").map { "`\($0.trimmingCharacters(in: .whitespaces))`" }.joined(separator: ", ") + " "
                } ?? " "
            return "| `\(key)` | `\(environment)` |\(flagColumn)| \(defaultText) | \(meaning) |"
        }
    }

    /// Every setting, in the order the file's error messages and the table in docs/configuration.md list them.
    public static let settings: [Setting] = [
        .text(
            "host", "TAKSI_HOST", flag: "--host", default: "`127.0.0.1`", "address to listen on (`0.0.0.0` in a container)", \.host,
            empty: "the host may not be empty; use 127.0.0.1 or 0.0.0.0"),
        .integer(
            "port", "TAKSI_PORT", flag: "--port", default: "`8080`", "TCP port; `0` picks a free one (logged)", \.port, 0...65535,
            expected: "the port must be a number from 0 to 65535"),
        .text(
            "screens", "TAKSI_SCREENS", flag: "--screens", default: "`Screens`",
            "screens directory; relative to the file when set in a file",
            \.screensDirectory, empty: "the screens directory may not be empty"),
        .integer(
            "threads", "TAKSI_THREADS", flag: "--threads", default: "one per core", "event loop threads", \.threads, 1...256,
            expected: "threads must be a number from 1 to 256"),
        Setting(
            key: "log_level", environment: "TAKSI_LOG_LEVEL", flags: "--log-level", defaultText: "`info`",
            meaning: "`trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`", takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                let levels = Logger.Level.allCases.map(\.rawValue)
                throw ConfigurationError(
                    source: source,
                    message: "unknown log level \"\(value)\"; use one of \(levels.joined(separator: ", "))"
                        + NameSuggestion.hint(for: value, among: levels)
                )
            }
            configuration.logLevel = level
        },
        .boolean("watch", "TAKSI_WATCH", flag: "--no-watch", default: "`true`", "reload the screens when their files change", \.watch),
        .seconds(
            "watch_interval", "TAKSI_WATCH_INTERVAL", flag: "--watch-interval", default: "`1`",
            "seconds between checks of the screens directory (0.05 to 3600)", \.watchInterval, 0.05...3600),
        .integer(
            "skeleton_max_age", "TAKSI_SKELETON_MAX_AGE", default: "`60`", "`Cache-Control` `max-age` of skeletons, in seconds",
            \.skeletonMaxAge, 0...31_536_000, expected: "skeleton_max_age must be whole seconds from 0 to 31536000"),
        .integer(
            "skeleton_stale_while_revalidate", "TAKSI_SKELETON_STALE_WHILE_REVALIDATE", default: "`300`",
            "`stale-while-revalidate` of skeletons, in seconds", \.skeletonStaleWhileRevalidate, 0...31_536_000,
            expected: "skeleton_stale_while_revalidate must be whole seconds from 0 to 31536000"),
        .integer(
            "max_connections", "TAKSI_MAX_CONNECTIONS", default: "`10000`", "open client connections at most; more wait in the backlog",
            \.limits.maxConnections, 1...1_000_000, expected: "max_connections must be a number from 1 to 1000000"),
        .timeout(
            "idle_timeout", "TAKSI_IDLE_TIMEOUT", default: "`60`", "seconds before an idle keep-alive connection is closed",
            \.limits.idleTimeout),
        .timeout(
            "header_timeout", "TAKSI_HEADER_TIMEOUT", default: "`10`", "seconds a client has to send a whole request head",
            \.limits.headerTimeout),
        .timeout(
            "body_timeout", "TAKSI_BODY_TIMEOUT", default: "`10`",
            "seconds a client has to send a whole request body, from its head (`408` after)", \.limits.bodyTimeout),
        .timeout(
            "write_timeout", "TAKSI_WRITE_TIMEOUT", default: "`60`",
            "seconds a client may take none of its responses, while more wait for it, before it is disconnected", \.limits.writeTimeout),
        .integer(
            "max_body_bytes", "TAKSI_MAX_BODY_BYTES", default: "`65536`",
            "largest request body accepted (an action's inputs; read and discarded elsewhere); larger ones get `413` unread",
            \.limits.maxBodyBytes, 0...(64 << 20), expected: "max_body_bytes must be a number of bytes from 0 to 67108864"),
        .integer(
            "max_pipelined_requests", "TAKSI_MAX_PIPELINED_REQUESTS", default: "`16`",
            "requests read ahead of their responses, per connection",
            \.limits.maxPipelinedRequests, 1...1024, expected: "max_pipelined_requests must be a number from 1 to 1024"),
        .integer(
            "max_requests_per_connection", "TAKSI_MAX_REQUESTS_PER_CONNECTION", default: "`1000`",
            "requests answered on one connection; the last says `Connection: close`", \.limits.maxRequestsPerConnection, 1...1_000_000,
            expected: "max_requests_per_connection must be a number from 1 to 1000000"),
        .seconds(
            "drain_timeout", "TAKSI_DRAIN_TIMEOUT", default: "`30`", "seconds shutdown waits for requests in flight", \.drainTimeout,
            0.01...86_400),
        .boolean(
            "access_log", "TAKSI_ACCESS_LOG", flag: "--no-access-log", default: "`true`",
            "one log line per request (method, path without query, status, bytes, duration, variant, request id); see [Logs](operations.md#logs)",
            \.accessLog),
        .format(
            "log_format", "TAKSI_LOG_FORMAT", flag: "--log-format", default: "`text`",
            "`text`, or `json`: one object per line in the Elastic Common Schema's layout (`@timestamp`, `log.level`, `message`, ...), as the access log's; see [Logs](operations.md#logs)"
        ) { $0.logFormat = $1 },
        .format(
            "access_log_format", "TAKSI_ACCESS_LOG_FORMAT", flag: "--access-log-format", default: "`log_format`'s",
            "`text` or `json` (one object a line, in the application log's layout)"
        ) { $0.accessLogFormat = $1 },
        Setting(
            key: "access_log_output", environment: "TAKSI_ACCESS_LOG_OUTPUT", flags: "--access-log-output", defaultText: "`stderr`",
            meaning:
                "`stderr`, `stdout`, or a file (appended to, created when missing, reopened on `SIGHUP`; relative to the configuration file when set there)",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard !value.isEmpty else {
                throw ConfigurationError(
                    source: source, message: "access_log_output must be stderr, stdout or a file path, found an empty value")
            }
            configuration.accessLogOutput = AccessLog.Output(value)
        },
        .boolean(
            "preview", "TAKSI_PREVIEW", flag: "--preview, --no-preview", default: "`false` (`true` in the example `config.json`)",
            "serve [the live preview](preview.md) at `/preview`; never in production", \.preview),
        .integer(
            "data_memo_max_bytes", "TAKSI_DATA_MEMO_MAX_BYTES", default: "`16777216`",
            "bytes of data responses kept for requests with the same inputs; `0` keeps none", \.dataMemoMaxBytes, 0...Int.max,
            expected: "data_memo_max_bytes must be a whole number of bytes, 0 or more"),
        .seconds(
            "idempotency_window", "TAKSI_IDEMPOTENCY_WINDOW", default: "`86400`",
            "seconds an action's answer is replayed to a retry with the same `Idempotency-Key`", \.idempotencyWindow, 1...604_800),
        .integer(
            "idempotency_max_bytes", "TAKSI_IDEMPOTENCY_MAX_BYTES", default: "`16777216`",
            "bytes of action answers (and the requests they answer) kept for retries, oldest out first; `0` keeps none",
            \.idempotencyMaxBytes, 0...Int.max, expected: "idempotency_max_bytes must be a whole number of bytes, 0 or more"),
        .seconds(
            "exposure_window", "TAKSI_EXPOSURE_WINDOW", default: "`86400`",
            "seconds one [exposure record](experiments.md) stands for a user's later exposures to the same experiment",
            \.exposureWindow, 1...31_536_000),
        Setting(
            key: "exposure_endpoint", environment: "TAKSI_EXPOSURE_ENDPOINT", flags: nil, defaultText: "none",
            meaning:
                "an OTLP/HTTP collector's base URL that [exposure records](experiments.md) go to as log records (`/v1/logs`), with `tracing_headers` and `tracing_service_name`; none writes them to the application log",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError(source: source, message: "exposure_endpoint is a URL, like http://otel-collector:4318")
            }
            configuration.exposureEndpoint = value
        },
        Setting(
            key: "store", environment: "TAKSI_STORE", flags: nil, defaultText: "none",
            meaning:
                "the fleet's shared store, a PostgreSQL URL (`postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=require`): keyed submits answered once for every replica; see [Running a fleet](fleet.md). Give it from a secret, in the environment",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            configuration.store.connection = value.isEmpty ? nil : try StoreSettings.Connection.parse(value, source: source)
        },
        Setting(
            key: "screens_source", environment: "TAKSI_SCREENS_SOURCE", flags: nil, defaultText: "`directory`",
            meaning:
                "`directory` (the screens directory, reloaded on change), or `store`: the screen set published to the store with `taksi-server publish`, followed within a second of each publish or rollback; see [Running a fleet](fleet.md)",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard let choice = ScreensSource(rawValue: value.lowercased()) else {
                throw ConfigurationError(source: source, message: "screens_source must be directory or store, found \"\(value)\"")
            }
            configuration.screensSource = choice
        },
        .integer(
            "store_pool_size", "TAKSI_STORE_POOL_SIZE", default: "`10`", "connections to the store this replica opens at most",
            \.store.poolSize, 1...1000, expected: "store_pool_size must be a number from 1 to 1000"),
        .seconds(
            "store_timeout", "TAKSI_STORE_TIMEOUT", default: "`2`",
            "seconds a statement to the store may take, waiting for a connection included, before it counts as failed (0.05 to 60)",
            \.store.timeout, 0.05...60),
        // Read as an object by the file and as one variable per upstream by the environment.
        Setting(
            key: "upstreams", environment: "TAKSI_UPSTREAM_<NAME>", flags: nil, defaultText: "none",
            meaning:
                "base URLs of the upstream APIs of `http` sources, by name (an object in the file); each may be an object of its `url`, `openapi` document and `auth` credential (see [Upstreams](data-sources.md#upstreams-documents-and-credentials))",
            takesList: false
        ) { _, _, source throws(ConfigurationError) in
            throw ConfigurationError(
                source: source, message: "upstreams is an object of names and base URLs, or one TAKSI_UPSTREAM_<NAME> variable each")
        },
        // An object in the file; the same object as JSON text in the environment.
        Setting(
            key: "cdn", environment: "TAKSI_CDN", flags: nil, defaultText: "none",
            meaning:
                "a CDN or caching proxy in front: the tags skeletons carry (`tag_header`, `Surrogate-Key` by default), how long it may keep them (`skeleton_shared_max_age`), and where a change is purged (`purge`: Varnish nodes, Fastly, Cloudflare); an object (JSON text in the environment); see [A CDN in front](operations.md#a-cdn-in-front)",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard !value.isEmpty else {
                configuration.cdn = nil
                return
            }
            guard let node = try? JSONParser.parse(Array(value.utf8)), case .object(let members) = node.value else {
                throw ConfigurationError(
                    source: source, message: "cdn is a JSON object, like {\"purge\": [{\"varnish\": [\"http://varnish:6081\"]}]}")
            }
            configuration.cdn = try CDNSettings(members, relativeTo: "", source: source)
        },
        // A list of objects in the file; the same list as JSON text in the environment.
        Setting(
            key: "page_token_keys", environment: "TAKSI_PAGE_TOKEN_KEYS", flags: nil, defaultText: "a key made at start",
            meaning:
                "the keys that sign the page tokens of [lists that continue](data-sources.md#lists-that-continue), each `{\"id\": ..., \"secret\": {\"env\": ...}}` (or `{\"file\": ...}`), 32 bytes or more; the first signs, every one verifies, so a new key goes first and the old one stays until its tokens expire. A fleet's replicas need the same keys (JSON text in the environment)",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard !value.isEmpty else {
                configuration.pageTokenKeys = []
                return
            }
            guard let node = try? JSONParser.parse(Array(value.utf8)) else {
                throw ConfigurationError(
                    source: source,
                    message: "page_token_keys is JSON text: [{\"id\": \"2026-11\", \"secret\": {\"env\": \"TAKSI_PAGE_KEY\"}}]")
            }
            configuration.pageTokenKeys = try ServerConfiguration.PageTokenKeySetting.read(node.value, relativeTo: "", source: source)
        },
        .seconds(
            "page_token_lifetime", "TAKSI_PAGE_TOKEN_LIFETIME", default: "`3600`",
            "seconds a list's page token is accepted past the time the data that gave it may be served, counted from the upstream's answer (its source's `ttl`, `stale_while_revalidate` and `stale_if_error`); 1 to 604800",
            \.pageTokenLifetime, 1...604_800),
        .integer(
            "list_max_pages", "TAKSI_LIST_MAX_PAGES", default: "`20`",
            "the pages of one list at most, the first included: the last carries no token for more",
            \.listMaxPages, 1...10_000, expected: "list_max_pages must be a whole number from 1 to 10000"),
        Setting(
            key: "apple_app_ids", environment: "TAKSI_APPLE_APP_IDS", flags: nil, defaultText: "none",
            meaning: "iOS apps (`TEAMID.bundle.id`) that open the https links of `links.yaml`; a list (comma-separated in the environment)",
            takesList: true
        ) { configuration, value, source throws(ConfigurationError) in
            let ids = list(value)
            if let bad = ids.first(where: { !AppLinks.isAppleAppID($0) }) {
                throw ConfigurationError(
                    source: source,
                    message: "\"\(bad)\" is not an app ID; write the team ID, a dot and the bundle ID, like ABCDE12345.com.example.eats"
                )
            }
            configuration.appLinks.appleAppIDs = ids
        },
        Setting(
            key: "android_package", environment: "TAKSI_ANDROID_PACKAGE", flags: nil, defaultText: "none",
            meaning: "the Android app's package (`com.example.eats`) that opens them", takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard value.isEmpty || AppLinks.isAndroidPackage(value) else {
                throw ConfigurationError(
                    source: source, message: "\"\(value)\" is not an Android package name; write it like com.example.eats")
            }
            configuration.appLinks.androidPackage = value.isEmpty ? nil : value
        },
        Setting(
            key: "android_cert_fingerprints", environment: "TAKSI_ANDROID_CERT_FINGERPRINTS", flags: nil, defaultText: "none",
            meaning: "SHA-256 fingerprints of its signing certificates (`keytool -list -v`); a list", takesList: true
        ) { configuration, value, source throws(ConfigurationError) in
            let fingerprints = list(value).map { $0.uppercased() }
            if let bad = fingerprints.first(where: { !AppLinks.isFingerprint($0) }) {
                throw ConfigurationError(
                    source: source,
                    message:
                        "\"\(bad)\" is not a SHA-256 certificate fingerprint; write 32 hexadecimal pairs separated by ':' (keytool -list -v prints it)"
                )
            }
            configuration.appLinks.androidCertificateFingerprints = fingerprints
        },
        .boolean(
            "tracing", "TAKSI_TRACING", flag: nil, default: "`false`",
            "a span per request and per upstream and action call, exported over OTLP/HTTP; see [Tracing](operations.md#tracing)",
            \.tracing.enabled),
        .text(
            "tracing_endpoint", "TAKSI_TRACING_ENDPOINT", default: "`http://localhost:4318`",
            "the OTLP/HTTP collector's base URL (spans go to `/v1/traces`); `OTEL_EXPORTER_OTLP_ENDPOINT` overrides it",
            \.tracing.endpoint, empty: "tracing_endpoint is a URL, like http://otel-collector:4318"),
        Setting(
            key: "tracing_sampling", environment: "TAKSI_TRACING_SAMPLING", flags: nil, defaultText: "`1`",
            meaning: "the share of traces started here that are recorded, 0 to 1 (a `traceparent` from the app decides for its trace)",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            guard let share = Double(value), (0...1).contains(share) else {
                throw ConfigurationError(source: source, message: "tracing_sampling must be a number from 0 to 1, like 0.1")
            }
            configuration.tracing.sampling = share
        },
        .text(
            "tracing_service_name", "TAKSI_TRACING_SERVICE_NAME", default: "`taksi-server`",
            "the service name spans carry; `OTEL_SERVICE_NAME` overrides it", \.tracing.serviceName,
            empty: "tracing_service_name may not be empty"),
        Setting(
            key: "tracing_headers", environment: "TAKSI_TRACING_HEADERS", flags: nil, defaultText: "none",
            meaning:
                "headers sent with each export (a collector's credentials): `name=value` pairs separated by commas, values percent-encoded, as `OTEL_EXPORTER_OTLP_HEADERS` (which overrides them) writes them; an object in the file",
            takesList: false
        ) { configuration, value, source throws(ConfigurationError) in
            configuration.tracing.headers = try TracingSettings.headers(value, source: source)
        },
    ]

    /// The setting with this key.
    public static func setting(_ key: String) -> Setting? {
        settings.first { $0.key == key }
    }

    /// The table in docs/configuration.md of settings, as ``settings`` describe them.
    public static var settingsTable: String {
        (["| `config.json` key | environment | flag | default | meaning |", "|---|---|---|---|---|"] + settings.map(\.tableRow))
            .joined(separator: "\n")
    }

    /// The items of a comma-separated list, trimmed, without empty ones.
    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

extension ServerConfiguration.Setting {
    typealias Configuration = ServerConfiguration

    /// A string that may not be empty.
    static func text(
        _ key: String, _ environment: String, flag: String? = nil, default: String, _ meaning: String,
        _ path: any WritableKeyPath<Configuration, String> & Sendable, empty: String
    ) -> Self {
        Self(key: key, environment: environment, flags: flag, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError(source: source, message: empty) }
            configuration[keyPath: path] = value
        }
    }

    /// A whole number within `range`; `expected` says so in the error.
    static func integer(
        _ key: String, _ environment: String, flag: String? = nil, default: String, _ meaning: String,
        _ path: any WritableKeyPath<Configuration, Int> & Sendable, _ range: ClosedRange<Int>, expected: String
    ) -> Self {
        Self(key: key, environment: environment, flags: flag, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            guard let number = Int(value), range.contains(number) else {
                throw ConfigurationError(source: source, message: "\(expected), found \"\(value)\"")
            }
            configuration[keyPath: path] = number
        }
    }

    /// Seconds within `range`, kept as a `Double`.
    static func seconds(
        _ key: String, _ environment: String, flag: String? = nil, default: String, _ meaning: String,
        _ path: any WritableKeyPath<Configuration, Double> & Sendable, _ range: ClosedRange<Double>
    ) -> Self {
        Self(key: key, environment: environment, flags: flag, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            configuration[keyPath: path] = try parseSeconds(value, key: key, range: range, source: source)
        }
    }

    /// A connection timeout: seconds from 0.01 to 86400, kept as a `TimeAmount`.
    static func timeout(
        _ key: String, _ environment: String, default: String, _ meaning: String,
        _ path: any WritableKeyPath<Configuration, TimeAmount> & Sendable
    ) -> Self {
        Self(key: key, environment: environment, flags: nil, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            let seconds = try parseSeconds(value, key: key, range: 0.01...86_400, source: source)
            configuration[keyPath: path] = .nanoseconds(Int64(seconds * 1_000_000_000))
        }
    }

    /// `true` or `false` (also `1`/`0`, `yes`/`no`).
    static func boolean(
        _ key: String, _ environment: String, flag: String?, default: String, _ meaning: String,
        _ path: any WritableKeyPath<Configuration, Bool> & Sendable
    ) -> Self {
        Self(key: key, environment: environment, flags: flag, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            switch value.lowercased() {
            case "true", "1", "yes": configuration[keyPath: path] = true
            case "false", "0", "no": configuration[keyPath: path] = false
            default: throw ConfigurationError(source: source, message: "\(key) must be true or false, found \"\(value)\"")
            }
        }
    }

    /// `text` or `json`.
    static func format(
        _ key: String, _ environment: String, flag: String, default: String, _ meaning: String,
        _ set: @escaping @Sendable (inout Configuration, Configuration.LogFormat) -> Void
    ) -> Self {
        Self(key: key, environment: environment, flags: flag, defaultText: `default`, meaning: meaning, takesList: false) {
            configuration, value, source throws(ConfigurationError) in
            guard let format = Configuration.LogFormat(rawValue: value.lowercased()) else {
                throw ConfigurationError(source: source, message: "\(key) must be text or json, found \"\(value)\"")
            }
            set(&configuration, format)
        }
    }

    private static func parseSeconds(
        _ value: String, key: String, range: ClosedRange<Double>, source: String
    ) throws(ConfigurationError) -> Double {
        guard let seconds = Double(value), range.contains(seconds) else {
            let bound = { (number: Double) in number == number.rounded() ? String(Int(number)) : String(number) }
            throw ConfigurationError(
                source: source,
                message:
                    "\(key) must be a number of seconds from \(bound(range.lowerBound)) to \(bound(range.upperBound)), found \"\(value)\""
            )
        }
        return seconds
    }
}
