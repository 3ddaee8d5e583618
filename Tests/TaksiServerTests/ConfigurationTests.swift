import Foundation
import Logging
import TaksiServer
import TaksiTestSupport
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    func temporaryFile(_ text: String) throws -> String {
        let directory = Scratch.path("config")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("config.json")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("defaults, then the file, then the environment; flags are applied last by the CLI")
    func precedence() throws {
        let file = try temporaryFile(#"{"host": "0.0.0.0", "port": 9000, "screens": "screens", "log_level": "debug"}"#)
        var configuration = try ServerConfiguration.resolve(file: file, environment: ["TAKSI_PORT": "9100"])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9100)
        #expect(configuration.logLevel == .debug)
        // A relative screens directory in a file is relative to the file.
        #expect(configuration.screensDirectory == (file as NSString).deletingLastPathComponent + "/screens")
        try configuration.apply(key: "port", value: "9200", source: "--port")
        #expect(configuration.port == 9200)

        let defaults = try ServerConfiguration.resolve(file: nil, environment: [:])
        #expect(defaults.port == 8080 && defaults.host == "127.0.0.1")
        #expect(defaults.watch && defaults.watchInterval == 1)

        let watching = try temporaryFile(#"{"watch": false, "watch_interval": 0.5}"#)
        let noWatch = try ServerConfiguration.resolve(file: watching, environment: ["TAKSI_WATCH_INTERVAL": "2"])
        #expect(!noWatch.watch && noWatch.watchInterval == 2)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_WATCH": "maybe"]) }
    }

    @Test("docs/configuration.md's table of settings is the settings' own description (TAKSI_UPDATE_GOLDEN=1 rewrites it)")
    func settingsTable() throws {
        let url = repositoryRoot.appendingPathComponent("docs/configuration.md")
        var readme = try String(contentsOf: url, encoding: .utf8)
        let header = "| `config.json` key | environment | flag | default | meaning |"
        let start = try #require(readme.range(of: header), "docs/configuration.md has no table of settings")
        let end = readme[start.lowerBound...].range(of: "\n\n")?.lowerBound ?? readme.endIndex
        if isUpdatingGoldens {
            readme.replaceSubrange(start.lowerBound..<end, with: ServerConfiguration.settingsTable)
            try readme.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(String(readme[start.lowerBound..<end]) == ServerConfiguration.settingsTable)
        // Every setting has a flag, a variable and a key that the file reads.
        for setting in ServerConfiguration.settings {
            #expect(setting.environment.hasPrefix("TAKSI_"))
            #expect(!setting.meaning.isEmpty && !setting.help.contains("`"))
        }
    }

    @Test(
        "an upstream may be an object: its url, its OpenAPI document (relative to the file) and its credential, whose secrets come from the environment or a file"
    )
    func upstreamObjects() throws {
        let path = try temporaryFile(
            #"""
            {"upstreams": {
              "plain": "https://plain.example.com",
              "shop": {"url": "https://shop.example.com/v1", "openapi": "openapi/shop.yaml", "auth": {"bearer": {"env": "SHOP_TOKEN"}}},
              "legacy": {"url": "https://legacy.example.com", "auth": {"basic": {"username": {"env": "LEGACY_USER"}, "password": {"file": "secrets/legacy"}}}},
              "partner": {"url": "https://partner.example.com", "auth": {"headers": {"X-Api-Key": {"file": "/run/secrets/partner"}}}},
              "orders": {"url": "https://orders.example.com", "auth": {"oauth2": {"token_url": "https://id.example.com/token", "client_id": {"env": "ORDERS_ID"}, "client_secret": {"env": "ORDERS_SECRET"}, "scope": "orders:read", "client_authentication": "post"}}}
            }}
            """#)
        let directory = (path as NSString).deletingLastPathComponent
        let configuration = try ServerConfiguration.resolve(file: path, environment: ["TAKSI_UPSTREAM_SHOP": "https://staging.example.com"])
        #expect(configuration.upstreams["shop"] == "https://staging.example.com", "the environment still sets the URL")
        #expect(configuration.upstreamDocuments == ["shop": directory + "/openapi/shop.yaml"])
        #expect(configuration.upstreamOptions["plain"] == nil)
        #expect(configuration.upstreamOptions["shop"]?.credential == .bearer(Secret(.environment("SHOP_TOKEN"))))
        #expect(
            configuration.upstreamOptions["legacy"]?.credential
                == .basic(username: Secret(.environment("LEGACY_USER")), password: Secret(.file(directory + "/secrets/legacy"))))
        #expect(configuration.upstreamOptions["partner"]?.credential == .headers(["X-Api-Key": Secret(.file("/run/secrets/partner"))]))
        #expect(
            configuration.upstreamOptions["orders"]?.credential
                == .clientCredentials(
                    OAuthClient(
                        tokenURL: "https://id.example.com/token", clientID: Secret(.environment("ORDERS_ID")),
                        clientSecret: Secret(.environment("ORDERS_SECRET")), scope: "orders:read", sendsSecretInBody: true)))
        // A secret's description names where it is, never what it is.
        #expect("\(Secret(.environment("SHOP_TOKEN")))" == "the environment variable SHOP_TOKEN")
        #expect(Secret(.environment("SHOP_TOKEN")).value(environment: ["SHOP_TOKEN": "abc\n"]) == .success("abc"))

        for (text, expected) in [
            (#"{"url": "https://a.example.com", "auth": {"bearer": "s3cret"}}"#, "never from this file's text"),
            (#"{"url": "https://a.example.com", "auth": {"bearer": {"env": "A"}, "basic": {}}}"#, "one kind of credential"),
            (#"{"url": "https://a.example.com", "auth": {"baerer": {"env": "A"}}}"#, #"did you mean "bearer"?"#),
            (#"{"url": "https://a.example.com", "openapi": 3}"#, "the path of the upstream's OpenAPI document"),
            (#"{"url": "https://a.example.com", "opnapi": "a.yaml"}"#, #"did you mean "openapi"?"#),
            (#"{"openapi": "a.yaml"}"#, #"needs "url""#),
            (
                #"{"url": "https://a.example.com", "auth": {"oauth2": {"token_url": "https://id.example.com", "client_id": {"env": "A"}}}}"#,
                #"needs "client_secret""#
            ),
            (#"{"url": "https://a.example.com", "auth": {"headers": {"Host": {"env": "A"}}}}"#, "not a header an upstream call can carry"),
        ] {
            let file = try temporaryFile(#"{"upstreams": {"a": \#(text)}}"#)
            #expect {
                try ServerConfiguration.resolve(file: file, environment: [:])
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }

    @Test("cdn: the tags' header, how long a CDN keeps skeletons, and purge targets whose tokens come from the environment or a file")
    func cdn() throws {
        let path = try temporaryFile(
            #"""
            {"cdn": {"tag_header": "Cache-Tag", "tag_prefix": "shop", "skeleton_shared_max_age": 3600, "purge": [
              {"varnish": ["http://varnish-1:6081", "http://varnish-2:6081"]},
              {"fastly": {"service_id": "SU1Z0isxPaozGVKXdv0eY", "token": {"env": "FASTLY_API_TOKEN"}, "soft": false}},
              {"cloudflare": {"zone_id": "023e105f4ecef8ad9ca31a8372d0c353", "token": {"file": "secrets/cloudflare"}}}
            ]}}
            """#)
        let directory = (path as NSString).deletingLastPathComponent
        let cdn = try #require(try ServerConfiguration.resolve(file: path, environment: [:]).cdn)
        #expect(cdn.tags == CacheTags(header: "Cache-Tag", prefix: "shop"))
        #expect(cdn.skeletonSharedMaxAge == 3600)
        #expect(
            cdn.targets == [
                .varnish([URL(string: "http://varnish-1:6081")!, URL(string: "http://varnish-2:6081")!]),
                .fastly(
                    serviceID: "SU1Z0isxPaozGVKXdv0eY", token: Secret(.environment("FASTLY_API_TOKEN")), soft: false,
                    api: URL(string: "https://api.fastly.com")!),
                .cloudflare(
                    zoneID: "023e105f4ecef8ad9ca31a8372d0c353", token: Secret(.file(directory + "/secrets/cloudflare")),
                    api: URL(string: "https://api.cloudflare.com")!),
            ])
        // The same object as JSON text in the environment.
        let environment = try ServerConfiguration.resolve(
            file: try temporaryFile("{}"), environment: ["TAKSI_CDN": #"{"purge": [{"varnish": ["http://127.0.0.1:6081"]}]}"#])
        #expect(environment.cdn?.targets == [.varnish([URL(string: "http://127.0.0.1:6081")!])])

        for (text, expected) in [
            (#"{"skeleton_shared_max_age": 3600}"#, "needs a purge target"),
            (#"{"purge": [{"fastly": {"service_id": "a", "token": "s3cret"}}]}"#, "never from this file's text"),
            (#"{"purge": [{"fastyl": {}}]}"#, #"did you mean "fastly"?"#),
            (#"{"purge": [{"varnish": ["varnish:6081"]}]}"#, "not a Varnish node's URL"),
            (#"{"tag_hedaer": "Cache-Tag"}"#, #"did you mean "tag_header"?"#),
            (#"{"tag_header": "Cache Tag"}"#, "the response header the CDN reads"),
            (#"{"purge": [{"cloudflare": {"zone_id": "z", "token": {"env": "T"}, "zone": "x"}}]}"#, #"unknown key "zone""#),
        ] {
            let file = try temporaryFile(#"{"cdn": \#(text)}"#)
            #expect {
                try ServerConfiguration.resolve(file: file, environment: [:])
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }

    @Test("a wrong setting names where it came from and what to write")
    func errors() throws {
        let typo = try temporaryFile(#"{"prot": 8080}"#)
        #expect(
            throws: ConfigurationError(
                source: typo,
                message:
                    #"unknown setting "prot"; the settings are host, port, screens, threads, log_level, watch, watch_interval, skeleton_max_age, skeleton_stale_while_revalidate, max_connections, idle_timeout, header_timeout, body_timeout, write_timeout, max_body_bytes, max_pipelined_requests, max_requests_per_connection, drain_timeout, access_log, log_format, access_log_format, access_log_output, preview, data_memo_max_bytes, idempotency_window, idempotency_max_bytes, exposure_window, exposure_endpoint, store, screens_source, store_pool_size, store_timeout, upstreams, cdn, page_token_keys, page_token_lifetime, list_max_pages, apple_app_ids, android_package, android_cert_fingerprints, tracing, tracing_endpoint, tracing_sampling, tracing_service_name, tracing_headers (did you mean "port"?)"#
            )
        ) {
            try ServerConfiguration.resolve(file: typo, environment: [:])
        }
        #expect(throws: ConfigurationError(source: "TAKSI_PORT", message: #"the port must be a number from 0 to 65535, found "http""#)) {
            try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_PORT": "http"])
        }
        #expect(
            throws: ConfigurationError(
                source: "TAKSI_EXPOSURE_ENDPOINT", message: "exposure_endpoint is a URL, like http://otel-collector:4318")
        ) {
            try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_EXPOSURE_ENDPOINT": "otel-collector:4318"])
        }
        let exposures = try ServerConfiguration.resolve(
            file: nil, environment: ["TAKSI_EXPOSURE_ENDPOINT": "http://otel-collector:4318", "TAKSI_EXPOSURE_WINDOW": "3600"])
        #expect(exposures.exposureEndpoint == "http://otel-collector:4318" && exposures.exposureWindow == 3600)
        // Credentials in an upstream's URL were dropped without a word; now refused, never echoed.
        let withCredentials = try temporaryFile(#"{"upstreams": {"api": "https://ada:hunter2@api.example.com/v1"}}"#)
        let refusal =
            #"upstream "api" has credentials in its URL, which are never sent and would be logged with it: write https://api.example.com/v1 and give the credential as the upstream's "auth" ({"url": ..., "auth": {"basic": {"username": {"env": ...}, "password": {"env": ...}}}}); to pass the app's own credential, forward its header with the source's headers: [Authorization]"#
        #expect(throws: ConfigurationError(source: "\(withCredentials):1:23: \"upstreams\".api", message: refusal)) {
            try ServerConfiguration.resolve(file: withCredentials, environment: [:])
        }
        #expect(throws: ConfigurationError(source: "TAKSI_UPSTREAM_API", message: refusal)) {
            try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_UPSTREAM_API": "https://ada:hunter2@api.example.com/v1"])
        }
        let broken = try temporaryFile("{\"port\": 80,}")
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(file: broken, environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(file: "/nonexistent/config.json", environment: [:]) }
    }

    @Test(
        "tracing_headers: an object in the file, name=value pairs percent-encoded in the environment (which overrides it), refused with the fix"
    )
    func tracingHeaders() throws {
        let file = try temporaryFile(#"{"tracing_headers": {"x-api-key": "a,b=c%d", "X-Tenant": "shop"}}"#)
        let fromFile = try ServerConfiguration.resolve(file: file, environment: [:])
        #expect(fromFile.tracing.headers == ["x-api-key": "a,b=c%d", "X-Tenant": "shop"])
        let overridden = try ServerConfiguration.resolve(
            file: file, environment: ["TAKSI_TRACING_HEADERS": "authorization=Basic%20dXNlcjpw%3D%3D, x-team = eats"])
        #expect(overridden.tracing.headers == ["authorization": "Basic dXNlcjpw==", "x-team": "eats"])
        #expect(try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_TRACING_HEADERS": ""]).tracing.headers == [:])

        #expect(
            throws: ConfigurationError(
                source: "TAKSI_TRACING_HEADERS",
                message:
                    #"tracing_headers is name=value pairs separated by commas, like api-key=secret,x-tenant=shop; "api key" is not a header name"#
            )
        ) { try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_TRACING_HEADERS": "api key=1"]) }
        #expect(throws: ConfigurationError.self, "a pair without =") {
            try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_TRACING_HEADERS": "api-key"])
        }
        #expect(throws: ConfigurationError.self, "a line break in a value") {
            try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_TRACING_HEADERS": "api-key=a%0D%0Ab"])
        }
        let wrongType = try temporaryFile(#"{"tracing_headers": {"x-api-key": 1}}"#)
        #expect(
            throws: ConfigurationError(
                source: "\(wrongType): \"tracing_headers\"", message: "tracing_headers is an object of header names and string values")
        ) { try ServerConfiguration.resolve(file: wrongType, environment: [:]) }
    }

    @Test("the store's URL is read whole (password percent-decoded, libpq's sslmode), shown without its password, refused with the fix")
    func storeURL() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.store.connection == nil, "off by default")
        try configuration.apply(
            environment: ["TAKSI_STORE": "postgresql://taksi:p%40ss%3Aword@db.internal:6543/taksi_prod?sslmode=verify-full"])
        let connection = try #require(configuration.store.connection)
        #expect(connection.host == "db.internal")
        #expect(connection.port == 6543)
        #expect(connection.user == "taksi")
        #expect(connection.password == "p@ss:word")
        #expect(connection.database == "taksi_prod")
        #expect(connection.tls == .verifyFull)
        #expect(connection.description == "postgres://taksi:***@db.internal:6543/taksi_prod?sslmode=verify-full")
        try configuration.apply(key: "store", value: "postgres://u:x@[::1]/d", source: "test")
        #expect(configuration.store.connection?.host == "::1")
        #expect(configuration.store.connection?.port == 5432)
        #expect(configuration.store.connection?.tls == .prefer)
        try configuration.apply(key: "store", value: "", source: "test")
        #expect(configuration.store.connection == nil)

        let refusals: [(String, String)] = [
            ("mysql://u:hunter2@h/d", "store is not a PostgreSQL connection URL; write postgres://"),
            ("postgres://u:hunter2@/d", "store names no host"),
            ("postgres://h/d", "store names no user"),
            ("postgres://u:hunter2@h", "store names no database"),
            ("postgres://u:hunter2@h/d?sslmode=always", "store's sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
            ("postgres://u:hunter2@h/d?password=hunter2", "store's URL takes only sslmode as a parameter"),
        ]
        for (url, message) in refusals {
            #expect(throws: ConfigurationError.self) { try configuration.apply(key: "store", value: url, source: "TAKSI_STORE") }
            do {
                try configuration.apply(key: "store", value: url, source: "TAKSI_STORE")
            } catch {
                #expect(error.source == "TAKSI_STORE")
                #expect(error.message.hasPrefix(message), "\(url): \(error.message)")
                #expect(!error.description.contains("hunter2"), "an error never repeats the password")
            }
        }
        #expect(throws: ConfigurationError.self) { try configuration.apply(key: "store_pool_size", value: "0", source: "test") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(key: "store_timeout", value: "0.01", source: "test") }
    }

    @Test("the repository's config.json is valid and points at the example screens")
    func repositoryConfig() throws {
        let configuration = try ServerConfiguration.resolve(
            file: repositoryRoot.appendingPathComponent("config.json").path, environment: [:])
        #expect(configuration.screensDirectory == repositoryRoot.appendingPathComponent("Screens").path)
        #expect(configuration.port == 8080)
    }

    @Test("the image's configuration file listens on every interface and logs JSON, and the environment still overrides it")
    func containerConfig() throws {
        let file = repositoryRoot.appendingPathComponent("deploy/container-config.json").path
        let configuration = try ServerConfiguration.resolve(file: file, environment: [:])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 8080)
        #expect(configuration.logFormat == .json)
        #expect(configuration.upstreams.values.allSatisfy { $0.hasPrefix("https://") }, "no offline fixtures in the image")
        #expect(try ServerConfiguration.resolve(file: file, environment: ["TAKSI_PORT": "9000"]).port == 9000)
    }

    @Test("start-up refuses an invalid screen set and reports every error")
    func refusesInvalidScreens() throws {
        let directory = Scratch.path("screens")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"name": "home", "components": [{"name": "label_component", "content": {"value": null}}]}"#.utf8)
            .write(to: directory.appendingPathComponent("home.json"))
        var configuration = ServerConfiguration()
        configuration.screensDirectory = directory.path
        do {
            _ = try buildApplication(configuration: configuration, logger: testLogger("test"))
            Issue.record("an invalid set must not build")
        } catch {
            let text = "\(error)"
            #expect(text.contains("the screen set has 1 error; nothing was served"))
            #expect(text.contains("\(directory.path)/home.json:1:82: error: components[0].content.value: \"value\" is null"))
        }
    }
}
