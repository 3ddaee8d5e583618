import Foundation
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The server's own credentials for its upstreams, over real sockets: a bearer token, HTTP basic,
/// an API key header and OAuth 2.0 client credentials reach the upstream that is configured with
/// them and no other; none of them is logged.
@Suite("Upstream credentials over a socket")
struct UpstreamCredentialTests {
    /// A file holding `value` (a mounted secret), with a final line break as `kubectl create secret --from-file` keeps it.
    static func secretFile(_ value: String) throws -> String {
        let url = Scratch.path("secret")
        try Data((value + "\n").utf8).write(to: url)
        return url.path
    }

    /// A screen with one http source per upstream in `upstreams`, each bound into a label; the
    /// sources' timeout is a hang guard (a token's fetch counts toward it).
    static func screen(_ upstreams: [String]) -> String {
        let sources = upstreams.map {
            #""\#($0)": {"type": "http", "upstream": "\#($0)", "path": "/\#($0)", "timeout": 60, "ttl": 0, "stale_while_revalidate": 0, "stale_if_error": 0}"#
        }
        let labels = upstreams.map {
            #"{"name": "label_component", "identifier": "\#($0)", "content": {"value": {"$bind": "\#($0).text"}}}"#
        }
        return
            #"{"name": "calls", "entry": true, "sources": {\#(sources.joined(separator: ", "))}, "components": [\#(labels.joined(separator: ", "))]}"#
    }

    func application(
        upstreams: [String: String], options: [String: UpstreamOptions], log: LogRecorder
    ) throws -> Application {
        let load = ScreenSetLoader.load(
            files: ["calls.json": Array(Self.screen(upstreams.keys.sorted()).utf8)], upstreams: Set(upstreams.keys))
        let screenSet = try #require(load.screenSet, "\(load.diagnostics.report)")
        var configuration = ServerConfiguration.forTests()
        configuration.upstreams = upstreams
        configuration.upstreamOptions = options
        return buildApplication(configuration: configuration, screenSet: screenSet, logger: log.logger)
    }

    /// Every value of every line logged, and the line, as one text.
    func logged(_ log: LogRecorder) -> String {
        log.recorded.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    @Test("a bearer token, a basic credential and an API key reach their upstreams, and only theirs; nothing logs them")
    func fixedCredentials() async throws {
        let upstream = try await TestUpstream()
        let other = try await TestUpstream()
        // A variable of this test's own (the process's environment is shared by every test).
        let variable = "TAKSI_TEST_TOKEN_\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        setenv(variable, "s3cret-bearer", 1)
        defer { unsetenv(variable) }
        let options: [String: UpstreamOptions] = [
            "bearer": UpstreamOptions(credential: .bearer(Secret(.environment(variable)))),
            "basic": UpstreamOptions(
                credential: .basic(
                    username: Secret(.file(try Self.secretFile("ada"))), password: Secret(.file(try Self.secretFile("hunter2"))))),
            "keyed": UpstreamOptions(credential: .headers(["X-Api-Key": Secret(.file(try Self.secretFile("k3y")))])),
        ]
        upstream.on("/bearer", .authorized("Bearer s3cret-bearer", body: #"{"text": "bearer ok"}"#))
        upstream.on("/basic", .authorized("Basic YWRhOmh1bnRlcjI=", body: #"{"text": "basic ok"}"#))
        upstream.on("/keyed", .json(#"{"text": "keyed"}"#))
        other.on("/open", .json(#"{"text": "open ok"}"#))
        let log = LogRecorder()
        let application = try application(
            upstreams: ["bearer": upstream.baseURL, "basic": upstream.baseURL, "keyed": upstream.baseURL, "open": other.baseURL],
            options: options, log: log)
        try await application.test(.live) { client in
            let response = try await client.execute(uri: "/screens/calls/data")
            #expect(response.status == .ok, "\(response.text)")
            let values = Dictionary(
                uniqueKeysWithValues: (response.json?["interface_data"]?.arrayValue ?? []).compactMap { entry in
                    entry["identifier"]?.stringValue.map { ($0, entry["content"]?["value"]?.stringValue ?? "") }
                })
            #expect(values == ["bearer": "bearer ok", "basic": "basic ok", "keyed": "keyed", "open": "open ok"], "\(response.text)")
            // No Vary on what the server adds itself.
            #expect(response.header("Vary")?.lowercased().contains("authorization") != true)
        }
        let keyed = try #require(upstream.requests.first { $0.uri == "/keyed" })
        #expect(keyed.headers.first { $0.0.lowercased() == "x-api-key" }?.1 == "k3y")
        #expect(keyed.headers.contains { $0.0.lowercased() == "authorization" } == false)
        // The upstream without a credential gets none of the others'.
        let open = try #require(other.requests.first)
        #expect(!open.headers.contains { ["authorization", "x-api-key"].contains($0.0.lowercased()) }, "\(open.headers)")
        let text = logged(log)
        for secret in ["s3cret-bearer", "hunter2", "k3y", "YWRhOmh1bnRlcjI="] { #expect(!text.contains(secret)) }
        try await upstream.stop()
        try await other.stop()
    }

    @Test(
        "OAuth client credentials: one token fetched and kept, a new one once on a 401, a token endpoint that fails degrades the source and is logged without secrets"
    )
    func clientCredentials() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/oauth/token", .issuesTokens(expiresIn: 3600))
        upstream.on("/shop", .authorized("Bearer token-1", body: #"{"text": "first"}"#))
        let client = OAuthClient(
            tokenURL: upstream.baseURL + "/oauth/token", clientID: Secret(.file(try Self.secretFile("taksi app"))),
            clientSecret: Secret(.file(try Self.secretFile("cl!ent-secret"))), scope: "catalog:read orders")
        let log = LogRecorder()
        let application = try application(
            upstreams: ["shop": upstream.baseURL], options: ["shop": UpstreamOptions(credential: .clientCredentials(client))], log: log)
        try await application.test(.live) { client in
            /// The label's text; nil when the source failed (the component is left out, its source named degraded).
            func text() async throws -> String? {
                let response = try await client.execute(uri: "/screens/calls/data")
                guard response.header("X-Taksi-Degraded") == nil else { return nil }
                return response.json?["interface_data"]?.arrayValue?.first?["content"]?["value"]?.stringValue
            }
            #expect(try await text() == "first")
            #expect(try await text() == "first")
            let tokenRequests = upstream.requests.filter { $0.uri == "/oauth/token" }
            #expect(tokenRequests.count == 1, "a token is kept until it expires")
            let request = try #require(tokenRequests.first)
            #expect(request.method == "POST")
            #expect(request.body == "grant_type=client_credentials&scope=catalog%3Aread+orders")
            // RFC 6749 section 2.3.1: the id and secret form-encoded, then joined for HTTP Basic.
            let basic = "Basic " + Data("taksi+app:cl%21ent-secret".utf8).base64EncodedString()
            #expect(request.headers.first { $0.0.lowercased() == "authorization" }?.1 == basic)

            // The token is revoked: the 401 fetches a new one, and the call is made once more.
            upstream.on("/shop", .authorized("Bearer token-2", body: #"{"text": "second"}"#))
            #expect(try await text() == "second")
            #expect(upstream.requests.filter { $0.uri == "/oauth/token" }.count == 2)

            // The token endpoint refuses the client: the source degrades, the log says why.
            upstream.on("/oauth/token", .answer(401, #"{"error": "invalid_client", "error_description": "no such client"}"#))
            upstream.on("/shop", .authorized("Bearer token-3", body: #"{"text": "third"}"#))
            #expect(try await text() == nil)
            let failure = try #require(log.lines(atLeast: .error).first { $0.message.contains("no access token") }, "\(logged(log))")
            #expect(failure.message.contains(#"answered 401 ("invalid_client")"#), "\(failure.message)")
            // Counted: two tokens fetched, one fetch failed.
            let metrics = try await client.execute(uri: "/metrics").text.split(separator: "\n")
            let fetches = { (result: String) in
                metrics.first { $0.hasPrefix("taksi_upstream_token_fetches_total{") && $0.contains(#"result="\#(result)""#) }
            }
            #expect(fetches("ok")?.hasSuffix(" 2") == true, "\(String(describing: fetches("ok")))")
            #expect(fetches("failed")?.hasSuffix(" 1") == true, "\(String(describing: fetches("failed")))")
        }
        let text = logged(log)
        for secret in ["cl!ent-secret", "cl%21ent-secret", "token-1", "token-2"] { #expect(!text.contains(secret), "\(secret) logged") }
        try await upstream.stop()
    }

    /// An application calling upstream `shop` (with OAuth client credentials, its token endpoint
    /// on `upstream` too) from one source with this `timeout` (by default a hang guard: the token
    /// and the call, one after the other, fit it on a busy machine).
    func oauthApplication(_ upstream: TestUpstream, timeout: Double = 60, log: LogRecorder) throws -> Application {
        let screen = #"""
            {"name": "calls", "entry": true,
             "sources": {"shop": {"type": "http", "upstream": "shop", "path": "/shop", "timeout": \#(timeout), "ttl": 0,
                                  "stale_while_revalidate": 0, "stale_if_error": 0}},
             "components": [{"name": "label_component", "identifier": "shop", "content": {"value": {"$bind": "shop.text"}}}]}
            """#
        let load = ScreenSetLoader.load(files: ["calls.json": Array(screen.utf8)], upstreams: ["shop"])
        let screenSet = try #require(load.screenSet, "\(load.diagnostics.report)")
        let client = OAuthClient(
            tokenURL: upstream.baseURL + "/oauth/token", clientID: Secret(.file(try Self.secretFile("app"))),
            clientSecret: Secret(.file(try Self.secretFile("secret"))))
        var configuration = ServerConfiguration.forTests()
        configuration.upstreams = ["shop": upstream.baseURL]
        configuration.upstreamOptions = ["shop": UpstreamOptions(credential: .clientCredentials(client))]
        return buildApplication(configuration: configuration, screenSet: screenSet, logger: log.logger)
    }

    @Test(
        "a token endpoint's expires_in that is huge, negative, not a number or a string is no crash: the token is kept the default lifetime, and the log says why"
    )
    func hostileExpiry() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/shop", .authorized("Bearer t", body: #"{"text": "ok"}"#))
        // Each of these made Duration.seconds(Double) trap: the process died at the first call.
        let unusable = ["1e300", "-1e300", "1e21", "-1", "0", #""soon""#, "[3600]", "true"]
        let usable = ["3600", #""3600""#, "1e8", "0.001"]
        for expiry in unusable + usable {
            upstream.on("/oauth/token", .answer(200, #"{"access_token": "t", "token_type": "Bearer", "expires_in": \#(expiry)}"#))
            let log = LogRecorder()
            try await oauthApplication(upstream, log: log).test(.live) { client in
                for _ in 0..<2 {
                    let response = try await client.execute(uri: "/screens/calls/data")
                    #expect(response.status == .ok, "expires_in \(expiry): \(response.text)")
                    #expect(response.header("X-Taksi-Degraded") == nil, "expires_in \(expiry): \(response.text)")
                }
            }
            let said = log.lines(atLeast: .warning).filter { $0.message.contains("is not a lifetime in seconds") }
            #expect(said.count == (unusable.contains(expiry) ? 1 : 0), "expires_in \(expiry): \(logged(log))")
        }
        // A lifetime within a second to a day is kept as given; past it, a day; short of it, a second.
        #expect(OAuthTokens.lifetime(expiresIn: 3600) == (.seconds(3600), nil))
        #expect(OAuthTokens.lifetime(expiresIn: "3600") == (.seconds(3600), nil))
        #expect(OAuthTokens.lifetime(expiresIn: 1e8) == (.seconds(86_400), nil))
        #expect(OAuthTokens.lifetime(expiresIn: 0.001) == (.seconds(1), nil))
        #expect(OAuthTokens.lifetime(expiresIn: nil) == (OAuthTokens.defaultLifetime, nil))
        for value: JSONValue in [1e300, -1e300, 1e21, 1e9, -1, 0, "soon", "nan", "inf", [3600], true] {
            let (lifetime, problem) = OAuthTokens.lifetime(expiresIn: value)
            #expect(lifetime == OAuthTokens.defaultLifetime)
            #expect(problem != nil, "\(value)")
        }
        try await upstream.stop()
    }

    @Test("a token endpoint slower than the source's timeout degrades the source at its timeout, as a slow upstream would")
    func slowTokenEndpoint() async throws {
        let upstream = try await TestUpstream()
        // Held until the test ends: past the source's half second and the endpoint's own ten.
        upstream.on("/oauth/token", .held(#"{"access_token": "t", "expires_in": 3600}"#))
        upstream.on("/shop", .authorized("Bearer t", body: #"{"text": "ok"}"#))
        let log = LogRecorder()
        try await oauthApplication(upstream, timeout: 0.5, log: log).test(.live) { client in
            let response = try await client.execute(uri: "/screens/calls/data")
            #expect(response.status == .ok)
            #expect(response.header("X-Taksi-Degraded") == "shop", "\(response.text)")
            let metrics = try await client.execute(uri: "/metrics").text.split(separator: "\n")
            let calls = metrics.filter { $0.hasPrefix("taksi_upstream_requests_total{") && $0.contains(#"upstream="shop""#) }
            // Failed as a timeout of the source (0.5 s), not as a credential after the endpoint's 10 s.
            #expect(calls.contains { $0.contains(#"result="timeout""#) && $0.hasSuffix(" 1") }, "\(calls)")
            #expect(!calls.contains { $0.contains(#"result="credential""#) }, "\(calls)")
        }
        #expect(upstream.requests.filter { $0.uri == "/shop" }.isEmpty, "no call without a token")
        upstream.release()
        try await upstream.stop()
    }

    @Test("a token endpoint's error text cannot forge a log line: line breaks and escape codes are escaped, and it is cut short")
    func tokenErrorText() async throws {
        let upstream = try await TestUpstream()
        let forged = "invalid_client\n2026-11-27T00:00:00.000Z error taksi-server: forged line\u{1B}[2J"
        upstream.on(
            "/oauth/token",
            .answer(400, String(decoding: JSONWriter.bytes(["error": .string(forged + String(repeating: "x", count: 500))]), as: UTF8.self))
        )
        let log = LogRecorder()
        try await oauthApplication(upstream, log: log).test(.live) { client in
            let response = try await client.execute(uri: "/screens/calls/data")
            #expect(response.header("X-Taksi-Degraded") == "shop")
        }
        let failure = try #require(log.lines(atLeast: .error).first { $0.message.contains("no access token") }, "\(logged(log))")
        #expect(failure.message.contains(#"answered 400 ("invalid_client\n2026-11-27"#), "\(failure.message)")
        #expect(!failure.message.contains("\n") && !failure.message.contains("\u{1B}"), "\(failure.message)")
        #expect(failure.message.count < 400, "cut short: \(failure.message.count) characters")
        try await upstream.stop()
    }

    @Test("a redirect to another origin is not followed, so a credential never reaches it")
    func noRedirectElsewhere() async throws {
        let upstream = try await TestUpstream()
        let elsewhere = try await TestUpstream()
        upstream.on("/bearer", .redirect(302, location: elsewhere.baseURL + "/bearer"))
        elsewhere.on("/bearer", .json(#"{"text": "elsewhere"}"#))
        let log = LogRecorder()
        let application = try application(
            upstreams: ["bearer": upstream.baseURL],
            options: ["bearer": UpstreamOptions(credential: .bearer(Secret(.file(try Self.secretFile("s3cret")))))], log: log)
        try await application.test(.live) { client in
            let response = try await client.execute(uri: "/screens/calls/data")
            #expect(response.header("X-Taksi-Degraded") == "bearer")
        }
        #expect(elsewhere.requests.isEmpty)
        try await upstream.stop()
        try await elsewhere.stop()
    }

    @Test("a credential whose secret is not there stops the start, naming where it was looked for")
    func missingSecret() throws {
        var configuration = ServerConfiguration.forTests()
        configuration.screensDirectory = fixtureScreensDirectory.path
        configuration.upstreams = fixtureUpstreams
        configuration.upstreamOptions = ["github": UpstreamOptions(credential: .bearer(Secret(.environment("TAKSI_TEST_UNSET_TOKEN"))))]
        #expect {
            try buildApplication(configuration: configuration, logger: testLogger("credentials"), environment: [:])
        } throws: { error in
            "\(error)".contains("upstream \"github\"'s credential in the environment variable TAKSI_TEST_UNSET_TOKEN: it is not set")
        }
    }
}
