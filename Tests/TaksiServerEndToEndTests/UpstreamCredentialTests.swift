import Foundation
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

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

    /// A screen with one http source per upstream in `upstreams`, each bound into a label.
    static func screen(_ upstreams: [String]) -> String {
        let sources = upstreams.map {
            #""\#($0)": {"type": "http", "upstream": "\#($0)", "path": "/\#($0)", "ttl": 0, "stale_while_revalidate": 0, "stale_if_error": 0}"#
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
            #expect(failure.message.contains("answered 401 (invalid_client)"), "\(failure.message)")
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
