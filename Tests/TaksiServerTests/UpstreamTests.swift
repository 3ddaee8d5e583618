import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

#if canImport(Glibc)
import Glibc
#endif

/// `http` sources against a real upstream on a free port: mapping, caching, failure isolation.
@Suite("Upstream sources")
struct UpstreamTests {
    @Test("the server's credential replaces a forwarded header of the same name, never sent beside it")
    func credentialOverForwarded() {
        let merged = UpstreamClient.merged(
            [("authorization", "Bearer app-token"), ("Accept-Language", "de")], [("Authorization", "Bearer server-token")])
        #expect(merged.map { "\($0.0): \($0.1)" } == ["Accept-Language: de", "Authorization: Bearer server-token"])
        #expect(UpstreamClient.merged([("Authorization", "Bearer app")], []).map(\.1) == ["Bearer app"])
    }

    static let screens = SharedScreens.upstreams

    static let feedBody = SharedScreens.feedBody

    /// An answer with every value the feed screen binds, in the shapes it binds them.
    static let completeFeedBody = feedBody.replacingOccurrences(of: #""object": {"a": 1}"#, with: #""object": "text""#)

    /// An application over the test screens whose `api` upstream is `upstream`, with a manual clock.
    struct Fixture {
        let upstream: TestUpstream
        let clock = ManualClock()
        let cache: UpstreamCache
        let application: Application

        init() async throws {
            upstream = try await TestUpstream()
            let clock = self.clock
            cache = UpstreamCache(now: { clock.now })
            application = try upstreamApplication(files: UpstreamTests.screens, upstream: upstream, cache: cache).application
        }

        func get(_ uri: String, _ headers: [(String, String)] = []) async throws -> TestResponse {
            try await application.execute(uri: uri, headers: headers)
        }

        func json(_ response: TestResponse) -> JSONValue? { response.json }

        /// The data entries by identifier.
        func entries(_ response: TestResponse) -> [String: JSONValue] {
            var entries: [String: JSONValue] = [:]
            for entry in json(response)?["interface_data"]?.arrayValue ?? [] {
                if let identifier = entry["identifier"]?.stringValue { entries[identifier] = entry["content"] }
            }
            return entries
        }
    }

    @Test("paths into objects and arrays, templates, collections with a limit; wrong types convert or are left out")
    func mapping() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/S%C3%A3o%20Paulo%2Fx", .json(Self.feedBody))
        let response = try await fixture.get("/screens/feed/data?city=S%C3%A3o+Paulo/x")
        #expect(response.status == .ok)
        #expect(
            fixture.json(response) == [
                "interface_data": [
                    ["identifier": "title", "content": ["value": "Cafés"]],
                    ["identifier": "first", "content": ["value": "A"]],
                    ["identifier": "summary", "content": ["value": "3 places in Oslo"]],
                    // A number where a string goes converts without loss; an object does not, so
                    // "broken" gets no entry and keeps its placeholder.
                    ["identifier": "rating", "content": ["value": "4.5"]],
                    ["identifier": "items", "content": ["values": [["value": "A (5)"], ["value": "B (4)"]]]],
                ]
            ]
        )
        #expect(fixture.upstream.requests.map(\.uri) == ["/feed/S%C3%A3o%20Paulo%2Fx?lang=en&v=2"])
        // "broken" was left out because the upstream's answer has another shape than it binds.
        #expect(response.headers["X-Taksi-Degraded"] == ["api"])
        #expect(response.headers["Cache-Control"] == ["private, no-store"])
        #expect(try await fixture.get("/screens/feed/data").status == .badRequest, "city is required")
        try await fixture.upstream.stop()
    }

    @Test("100 concurrent data requests share one upstream call")
    func singleFlight() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/Oslo", .json(Self.feedBody, delay: .milliseconds(200)))
        let bodies = try await withThrowingTaskGroup(of: ByteBuffer.self) { group in
            for _ in 0..<100 { group.addTask { try await fixture.get("/screens/feed/data?city=Oslo").body } }
            var bodies: [ByteBuffer] = []
            for try await body in group { bodies.append(body) }
            return bodies
        }
        #expect(bodies.count == 100)
        #expect(Set(bodies).count == 1)
        #expect(fixture.entries(try await fixture.get("/screens/feed/data?city=Oslo"))["title"] == ["value": "Cafés"])
        #expect(fixture.upstream.count("/feed/Oslo") == 1)
        try await fixture.upstream.stop()
    }

    @Test("fresh for the TTL, then stale while one refresh runs, then fetched again")
    func expiry() async throws {
        let fixture = try await Fixture()
        let body = { (title: String) in #"{"feed": {"title": "\#(title)"}}"# }
        fixture.upstream.on("/feed/Oslo", .json(body("one")))
        let title = { try await fixture.entries(fixture.get("/screens/feed/data?city=Oslo"))["title"] }
        #expect(try await title() == ["value": "one"])
        fixture.upstream.on("/feed/Oslo", .json(body("two")))
        fixture.clock.advance(by: .seconds(9))
        #expect(try await title() == ["value": "one"], "fresh: no call")
        #expect(fixture.upstream.count("/feed/Oslo") == 1)

        // Past the TTL (10 s), within stale-while-revalidate (20 s): stale now, refreshed behind.
        fixture.clock.advance(by: .seconds(5))
        #expect(try await title() == ["value": "one"])
        await fixture.cache.refreshes.runUntilIdle()
        #expect(fixture.upstream.count("/feed/Oslo") == 2)
        #expect(try await title() == ["value": "two"])

        // Past both windows: the request waits for a new call.
        fixture.upstream.on("/feed/Oslo", .json(body("three")))
        fixture.clock.advance(by: .seconds(31))
        #expect(try await title() == ["value": "three"])
        #expect(fixture.upstream.count("/feed/Oslo") == 3)
        try await fixture.upstream.stop()
    }

    @Test("a failing upstream is covered by a stale copy within stale-if-error, and degrades after it")
    func staleIfError() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/Oslo", .json(Self.completeFeedBody))
        #expect(try await fixture.entries(fixture.get("/screens/feed/data?city=Oslo"))["title"] == ["value": "Cafés"])
        fixture.upstream.on("/feed/Oslo", .status(500))
        fixture.clock.advance(by: .seconds(60))  // expired 50 s ago; stale-if-error allows 100
        let covered = try await fixture.get("/screens/feed/data?city=Oslo")
        #expect(fixture.entries(covered)["title"] == ["value": "Cafés"])
        #expect(covered.headers["X-Taksi-Degraded"].isEmpty)
        fixture.clock.advance(by: .seconds(100))
        let degraded = try await fixture.get("/screens/feed/data?city=Oslo")
        #expect(degraded.status == .ok)
        #expect(degraded.headers["X-Taksi-Degraded"] == ["api"])
        #expect(fixture.json(degraded) == ["interface_data": []])
        #expect(fixture.upstream.count("/feed/Oslo") == 3)
        try await fixture.upstream.stop()
    }

    @Test(
        "one failing source degrades only its components; the fallback stands in; the rest is served",
        arguments: [
            ("500", TestUpstream.Behavior.status(500)), ("timeout", .json(#"{"text": "late"}"#, delay: .seconds(5))),
            ("invalid JSON", .json(#"{"text": "#)), ("too large", .json(#"{"text": "\#(String(repeating: "x", count: 2_000))"}"#)),
            ("not JSON at all", .json("<html>")),
        ]
    )
    func isolation(_ name: String, behavior: TestUpstream.Behavior) async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/good", .json(#"{"text": "good"}"#))
        fixture.upstream.on("/bad", behavior)
        fixture.upstream.on("/backup", behavior)
        // The timeout's case on the screen whose sources wait half a second; the others wait as long as it takes.
        let response = try await fixture.get(name == "timeout" ? "/screens/slowpair/data" : "/screens/pair/data")
        #expect(response.status == .ok)
        #expect(response.headers["X-Taksi-Degraded"] == ["backup, bad"])
        #expect(response.headers["Cache-Control"] == ["private, no-store"])
        #expect(
            fixture.json(response) == [
                "interface_data": [
                    ["identifier": "a", "content": ["value": "good"]],
                    ["identifier": "c", "content": ["value": "from the fallback"]],
                ]
            ]
        )
        let body = String(buffer: response.body)
        #expect(!body.contains("500") && !body.contains("html") && !body.contains("late"), "upstream errors are never echoed")
        try await fixture.upstream.stop()
    }

    @Test("degraded sources are counted by screen and source; every upstream source's series is at 0 from the start")
    func degradedCounted() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/good", .json(#"{"text": "good"}"#))
        fixture.upstream.on("/bad", .status(500))
        fixture.upstream.on("/backup", .status(500))
        func degraded() async throws -> [String] {
            try await fixture.get("/metrics").text.split(separator: "\n").map(String.init).filter {
                $0.hasPrefix("taksi_data_degraded_total{screen=\"pair\"") || $0.hasPrefix("# TYPE taksi_data_degraded_total")
            }
        }
        #expect(
            try await degraded() == [
                "# TYPE taksi_data_degraded_total counter",
                #"taksi_data_degraded_total{screen="pair",source="backup"} 0"#,
                #"taksi_data_degraded_total{screen="pair",source="bad"} 0"#,
                #"taksi_data_degraded_total{screen="pair",source="good"} 0"#,
            ])
        #expect(try await fixture.get("/metrics").text.contains(#"taksi_data_degraded_total{screen="feed",source="api"} 0"#))
        for _ in 0..<2 { #expect(try await fixture.get("/screens/pair/data").headers["X-Taksi-Degraded"] == ["backup, bad"]) }
        #expect(
            try await degraded() == [
                "# TYPE taksi_data_degraded_total counter",
                #"taksi_data_degraded_total{screen="pair",source="backup"} 2"#,
                #"taksi_data_degraded_total{screen="pair",source="bad"} 2"#,
                #"taksi_data_degraded_total{screen="pair",source="good"} 0"#,
            ])
        try await fixture.upstream.stop()
    }

    @Test("with the upstream gone every data response still decodes, with the degraded header")
    func upstreamDown() async throws {
        let fixture = try await Fixture()
        try await fixture.upstream.stop()
        for uri in ["/screens/pair/data", "/screens/feed/data?city=Oslo", "/screens/me/data"] {
            let response = try await fixture.get(uri)
            #expect(response.status == .ok)
            #expect(!response.headers["X-Taksi-Degraded"].isEmpty)
            let data = try JSONDecoder().decode(InterfaceData.self, from: Data(response.body.readableBytesView))
            #expect(data.entries.allSatisfy { $0.identifier == "c" }, "\(uri): only the fallback's component has an entry")
        }
    }

    @Test("a connection dropped before the response is retried once")
    func retry() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/once", .dropConnection(times: 1, then: .json(#"{"text": "second try"}"#)))
        fixture.upstream.on("/twice", .dropConnection(times: 2, then: .json(#"{"text": "third try"}"#)))
        let response = try await fixture.get("/screens/retry/data")
        #expect(fixture.entries(response)["a"] == ["value": "second try"])
        #expect(fixture.entries(response)["b"] == nil, "one retry only")
        #expect(response.headers["X-Taksi-Degraded"] == ["twice"])
        #expect(fixture.upstream.count("/once") == 2)
        #expect(fixture.upstream.count("/twice") == 2)
        try await fixture.upstream.stop()
    }

    @Test("a GET on a kept-alive connection the upstream closed as the request reached it is sent again on a new one: churn is no 502")
    func closedPooledConnection() async throws {
        let upstream = try await TestUpstream()
        // Each connection answers once, then closes when the next request arrives on it.
        upstream.on("/churn", .oncePerConnection(#"{"text": "fresh"}"#))
        var files = SharedScreens.upstreams
        files["churn.json"] = """
            {"name": "churn", "entry": true,
             "sources": {"api": {"type": "http", "upstream": "api", "path": "/churn", "timeout": 60, "ttl": 0, "stale_while_revalidate": 0, "stale_if_error": 0}},
             "components": [{"name": "label_component", "identifier": "a", "content": {"value": {"$bind": "api.text"}}}]}
            """
        let application = try upstreamApplication(files: files, upstream: upstream).application
        for attempt in 0..<20 {
            let response = try await application.execute(uri: "/screens/churn/data")
            #expect(response.headers["X-Taksi-Degraded"].isEmpty, "request \(attempt): \(String(buffer: response.body))")
        }
        // Churn: eight connections made at once (eight calls, none shared), each answered once
        // and closed by the peer when the next request reaches it. A request taking one of them
        // must not retry on another of them (it was degraded then: a 502 behind a gateway).
        files["churn-n.json"] = """
            {"name": "churn-n", "entry": true,
             "sources": {"api": {"type": "http", "upstream": "api", "path": "/churn/{n}", "parameters": {"n": {"required": true}}, "timeout": 60, "ttl": 0, "stale_while_revalidate": 0, "stale_if_error": 0}},
             "components": [{"name": "label_component", "identifier": "a", "content": {"value": {"$bind": "api.text"}}}]}
            """
        let churning = try upstreamApplication(files: files, upstream: upstream).application
        for n in 0..<8 {
            upstream.on(
                "/churn/\(n)",
                .first(1, .json(#"{"text": "warm"}"#, delay: .milliseconds(300)), then: .oncePerConnection(#"{"text": "fresh"}"#)))
        }
        let warm = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<8 {
                group.addTask {
                    try await churning.execute(uri: "/screens/churn-n/data?n=\(n)").headers["X-Taksi-Degraded"]
                        .isEmpty
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(warm == 8)
        for n in 0..<8 {
            let response = try await churning.execute(uri: "/screens/churn-n/data?n=\(n)")
            #expect(response.headers["X-Taksi-Degraded"].isEmpty, "after the churn, request \(n): \(String(buffer: response.body))")
        }
        try await upstream.stop()
    }

    @Test("only allow-listed headers reach the upstream, and each caller's values have their own cache entry")
    func headerAllowList() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/me", .json(#"{"name": "Ada"}"#))
        let secret = [
            ("Authorization", "Bearer secret-token"), ("Accept-Language", "nb"), ("Cookie", "session=1"),
            ("X-Internal", "no"), ("X-Taksi-User", "ada"),
        ]
        let response = try await fixture.get("/screens/me/data", secret)
        #expect(fixture.entries(response)["name"] == ["value": "Ada"])
        #expect(response.headers["Vary"] == ["X-Taksi-Skeleton, Accept-Language, Authorization"])
        let seen = try #require(fixture.upstream.requests.first)
        let names = Set(seen.headers.map { $0.0.lowercased() })
        #expect(names.contains("authorization") && names.contains("accept-language"))
        #expect(names.isDisjoint(with: ["cookie", "x-internal", "x-taksi-user"]), "\(names)")
        #expect(seen.headers.first { $0.0.lowercased() == "authorization" }?.1 == "Bearer secret-token")

        _ = try await fixture.get("/screens/me/data", [("Authorization", "Bearer other"), ("Accept-Language", "nb")])
        _ = try await fixture.get("/screens/me/data", secret)
        #expect(fixture.upstream.count("/me") == 2, "a second caller is not served the first one's response")
        try await fixture.upstream.stop()
    }

    @Test("the bike-share and repository screens work end to end against a live upstream, and degrade when it dies")
    func liveUpstream() async throws {
        let upstream = try await TestUpstream()
        // The upstream answers with the offline fixtures, so the answers must equal the file: upstream's.
        let fixtures = repositoryRoot.appendingPathComponent("Tests/Fixtures/upstreams")
        for (path, file) in [
            ("/v2/networks", "citybikes/v2/networks.json"), ("/v2/networks/velib", "citybikes/v2/networks/velib.json"),
            ("/search/repositories", "github/search/repositories.json"),
        ] {
            upstream.on(path, .json(try String(contentsOf: fixtures.appendingPathComponent(file), encoding: .utf8)))
        }
        var configuration = ServerConfiguration()
        configuration.upstreams = ["citybikes": upstream.baseURL, "github": upstream.baseURL]
        let application = buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("test"))
        let offline = fixtureApplication()
        for uri in ["/screens/bikes/networks/data", "/screens/bikes/stations/data?network=velib", "/screens/repositories/data?q=swift"] {
            let response = try await application.execute(.GET, uri: uri, headers: ["Authorization": "Bearer t"])
            #expect(response.status == .ok)
            #expect(response.headers["X-Taksi-Degraded"].isEmpty)
            let expected = try await offline.execute(uri: uri, headers: [("Authorization", "Bearer t")])
            #expect(expected.body.readableBytes > 30, "\(uri) has entries")
            #expect(response.body == expected.body, "\(uri)")
        }
        #expect(
            Set(upstream.requests.map(\.uri)) == [
                "/v2/networks?fields=id,name,location", "/v2/networks/velib?fields=id,name,stations",
                "/search/repositories?q=swift&sort=stars&per_page=20",
            ]
        )
        let search = try #require(upstream.requests.first { $0.uri.hasPrefix("/search") })
        #expect(search.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer t" })

        try await upstream.stop()
        // A new application has nothing cached to stand in.
        let restarted = buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("test"))
        for uri in ["/screens/bikes/networks/data", "/screens/bikes/stations/data?network=velib", "/screens/repositories/data?q=swift"] {
            let response = try await restarted.execute(.GET, uri: uri)
            #expect(response.status == .ok)
            #expect(!response.headers["X-Taksi-Degraded"].isEmpty, "\(uri)")
            #expect((try? JSONDecoder().decode(InterfaceData.self, from: Data(response.body.readableBytesView))) != nil, "\(uri) decodes")
        }
    }

    /// A product screen whose source answers 404 (a deleted product) with an empty state.
    static let productScreens = [
        "products/{id}.json": """
        {"name": "products/{id}", "entry": true, "parameters": {"id": {"type": "integer"}},
         "sources": {"product": {"type": "http", "upstream": "api", "path": "/products/{id}", "ttl": 60,
           "answers": {"404": {"ttl": 5, "data": [
             {"identifier": "name", "content": {"value": {"$bind": "product.message", "default": "This product is no longer sold"}}},
             {"identifier": "notice", "content": {"value": "Browse the shop for others"}}]}}}},
         "components": [
           {"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "product.name"}}},
           {"name": "label_component", "identifier": "price", "content": {"value": {"$template": "{product.price} EUR"}}},
           {"name": "label_component", "identifier": "notice", "content": {"value": " "}}
         ]}
        """
    ]

    @Test("a status the source answers is its declared empty state: 200, not degraded, no error logged, kept for the answer's ttl")
    func statusAnswer() async throws {
        let upstream = try await TestUpstream()
        let clock = ManualClock()
        let cache = UpstreamCache(now: { clock.now })
        let log = LogRecorder()
        let application = try upstreamApplication(files: Self.productScreens, upstream: upstream, cache: cache, logger: log.logger)
            .application
        let get = { (uri: String) in try await application.execute(uri: uri) }
        upstream.on("/products/1", .json(#"{"name": "Grinder", "price": 249}"#))
        upstream.on("/products/2", .answer(404, "<html>Not Found</html>"))
        upstream.on("/products/3", .answer(404, #"{"message": "Sold out for good"}"#))
        upstream.on("/products/4", .status(500))

        let found = try await get("/screens/products/1/data")
        #expect(
            found.json == [
                "interface_data": [
                    ["identifier": "name", "content": ["value": "Grinder"]], ["identifier": "price", "content": ["value": "249 EUR"]],
                ]
            ], "notice is literal: its text is in the skeleton")
        #expect(found.headers["Cache-Control"] == ["private, max-age=60"])

        let deleted = try await get("/screens/products/2/data")
        #expect(deleted.status == .ok)
        #expect(
            deleted.json == [
                "interface_data": [
                    ["identifier": "name", "content": ["value": "This product is no longer sold"]],
                    ["identifier": "notice", "content": ["value": "Browse the shop for others"]],
                ]
            ], "price, bound to the answered source and not patched, keeps its placeholder")
        #expect(deleted.headers["X-Taksi-Degraded"].isEmpty)
        #expect(deleted.headers["Cache-Control"] == ["private, max-age=5"], "the answer's ttl")
        #expect(deleted.headers["ETag"].count == 1, "kept and revalidated like any answer")
        // The answer's bindings read the status's JSON body.
        #expect(
            (try await get("/screens/products/3/data")).json?["interface_data"]?.arrayValue?.first == [
                "identifier": "name", "content": ["value": "Sold out for good"],
            ])
        #expect(log.lines(atLeast: .warning).isEmpty, "\(log.lines(atLeast: .warning).map(\.message))")

        // Kept for the answer's ttl (5 s), not the source's (60 s).
        _ = try await get("/screens/products/2/data")
        #expect(upstream.count("/products/2") == 1)
        clock.advance(by: .seconds(6))
        upstream.on("/products/2", .json(#"{"name": "Kettle", "price": 39.5}"#))
        _ = try await get("/screens/products/2/data")  // stale while one refresh runs
        await cache.refreshes.runUntilIdle()
        #expect(
            (try await get("/screens/products/2/data")).json?["interface_data"]?.arrayValue?.first == [
                "identifier": "name", "content": ["value": "Kettle"],
            ])
        #expect(upstream.count("/products/2") == 2)

        // A status without an answer stays a failure.
        let failed = try await get("/screens/products/4/data")
        #expect(failed.headers["X-Taksi-Degraded"] == ["product"])
        #expect(log.lines(atLeast: .error).map(\.message) == ["upstream failed; its components are degraded"])
        try await upstream.stop()
    }

    @Test("the cache keeps at most its entries and bytes, dropping the least recently used first")
    func bounded() async throws {
        let clock = ManualClock()
        let cache = UpstreamCache(maxEntries: 2, maxBytes: 100, now: { clock.now })
        let policy = UpstreamCache.Policy(ttl: .seconds(600), staleWhileRevalidate: .seconds(0), staleIfError: .seconds(0))
        func lookup(_ key: String, bytes: Int = 10) async -> UpstreamCache.Lookup {
            clock.advance(by: .seconds(1))
            return await cache.value(for: key, policy: policy) { _ in .success(UpstreamValue(value: .string(key), bytes: bytes)) }
        }
        func value(_ key: String, bytes: Int = 10) -> UpstreamValue { UpstreamValue(value: .string(key), bytes: bytes) }
        #expect(await lookup("a") == .fetched(value("a")))
        #expect(await lookup("b") == .fetched(value("b")))
        #expect(await lookup("a") == .hit(value("a")))
        #expect(await lookup("c") == .fetched(value("c")), "evicts b, the least recently used")
        #expect(cache.size == (2, 20))
        #expect(await lookup("a") == .hit(value("a")))
        #expect(await lookup("b") == .fetched(value("b")))
        #expect(await lookup("huge", bytes: 500) == .fetched(value("huge", bytes: 500)), "served, but larger than the cache")
        #expect(await lookup("huge", bytes: 500) == .fetched(value("huge", bytes: 500)))
        #expect(await lookup("d", bytes: 95) == .fetched(value("d", bytes: 95)))
        #expect(cache.size == (1, 95), "bytes bound too")
    }

    @Test("every eviction is told to the observer once, in order of least recent use, through a call as deep as the first")
    func evictionsStayCheap() async throws {
        let clock = ManualClock()
        let cache = UpstreamCache(maxEntries: 8, maxBytes: 1 << 20, now: { clock.now })
        let policy = UpstreamCache.Policy(ttl: .seconds(600), staleWhileRevalidate: .seconds(0), staleIfError: .seconds(0))
        let told = NIOLockedValueBox<(keys: [String], depths: [Int])>(([], []))
        cache.onChange { key in
            let depth = Thread.callStackReturnAddresses.count
            told.withLockedValue {
                $0.keys.append(key)
                $0.depths.append(depth)
            }
        }
        // Each eviction once wrapped the observer in one more forwarding thunk: the 2,000th went
        // through 2,000 of them (and, at a few hundred thousand, overflowed the stack).
        let rounds = 2_000
        for round in 0..<(rounds + 8) {
            clock.advance(by: .seconds(1))
            // Keeps key 0 in use, so it is never the least recently used.
            _ = cache.freshValue(for: "key-0", ttl: .seconds(600))
            _ = await cache.value(for: "key-\(round)", policy: policy) { _ in .success(UpstreamValue(value: .null, bytes: 1)) }
        }
        let (keys, depths) = told.withLockedValue { $0 }
        #expect(keys == (1...rounds).map { "key-\($0)" }, "the least recently used first, key 0 never")
        #expect(cache.size.entries == 8)
        #expect(depths.count == rounds && depths.allSatisfy { $0 == depths[0] }, "depths from \(depths.first ?? 0) to \(depths.max() ?? 0)")
    }

    @Test("a recency dictionary agrees with a plain model under random use, stores and removals")
    func recencyDictionary() {
        var dictionary = RecencyDictionary<Int, Int>()
        var model: [(key: Int, value: Int)] = []  // least recent first
        var random = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<64, using: &random)
            let found = model.firstIndex { $0.key == key }
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                #expect(dictionary.use(key) == found.map { model[$0].value })
                if let found { model.append(model.remove(at: found)) }
            case 1:
                #expect(dictionary.peek(key) == found.map { model[$0].value })
            case 2:
                #expect(dictionary.removeValue(forKey: key) == found.map { model[$0].value })
                if let found { model.remove(at: found) }
            case 3:
                let removed = dictionary.removeLeastRecent()
                #expect(removed?.key == model.first?.key && removed?.value == model.first?.value)
                if !model.isEmpty { model.removeFirst() }
            default:
                #expect(dictionary.updateValue(step, forKey: key) == found.map { model[$0].value })
                if let found { model.remove(at: found) }
                model.append((key, step))
            }
            #expect(dictionary.count == model.count)
        }
        #expect(dictionary.keysByRecency == model.map(\.key))
    }

    @Test("a refused connection is logged in the system's words, not NIO's")
    func refusedConnectionLogged() async throws {
        // A socket bound and not listening: connecting to its port is refused, and no other test
        // can take the port while it is held.
        let held = try BoundSocket(listening: false)
        defer { withExtendedLifetime(held) {} }
        // The source's timeout is a hang guard: with the default 2 s, a machine busy with the
        // other suites can let it pass before the refusal is seen (it did).
        var files = SharedScreens.upstreams
        files["me.json"] = files["me.json"]?.replacingOccurrences(of: #""path": "/me","#, with: #""path": "/me", "timeout": 60,"#)
        let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) }, upstreams: ["api"])
        var configuration = ServerConfiguration.forTests()
        configuration.upstreams = ["api": "http://127.0.0.1:\(held.port)"]
        let log = LogRecorder()
        let application = buildApplication(configuration: configuration, screenSet: try #require(load.screenSet), logger: log.logger)
        let response = try await application.execute(.GET, uri: "/screens/me/data")
        #expect(response.headers["X-Taksi-Degraded"] == ["me"])
        let line = try #require(log.lines(atLeast: .error).first { $0.message.contains("upstream failed") })
        let cause = line.metadata["cause"] ?? ""
        #expect(cause.hasPrefix("connection failed: Connection refused (errno ") && !cause.contains("reset"), "\(cause)")
    }

    @Test("a lookup that waits for another's call learns which call, and the call counts it; a refresh knows it is one")
    func joins() async throws {
        let clock = ManualClock()
        let cache = UpstreamCache(now: { clock.now })
        let policy = UpstreamCache.Policy(ttl: .seconds(10), staleWhileRevalidate: .seconds(20), staleIfError: .seconds(0))
        let (gate, open) = AsyncStream<Void>.makeStream()
        let value = { @Sendable (text: String) in UpstreamValue(value: .string(text), bytes: 1) }
        let first = Task {
            await cache.lookUp("k", policy: policy) { call in
                for await _ in gate { break }
                return .success(value(call.isRefresh ? "refresh" : "first"))
            }
        }
        #expect(await eventually { cache.call(for: "k") != nil })
        let second = Task { await cache.lookUp("k", policy: policy) { _ in .success(value("a second call")) } }
        // Once the second lookup waits for the first one's call, that call may answer.
        #expect(await eventually { cache.call(for: "k")?.joiners == 1 })
        open.yield()
        let made = await first.value
        let joined = await second.value
        #expect(made.lookup == .fetched(value("first")) && made.call == nil)
        #expect(joined.lookup == .fetched(value("first")))
        #expect(joined.call?.joiners == 1 && joined.call?.isRefresh == false)
        #expect(cache.call(for: "k") == nil)

        // Stale: served at once, renewed by a call that knows it refreshes.
        clock.advance(by: .seconds(15))
        let stale = await cache.lookUp("k", policy: policy) { call in .success(value(call.isRefresh ? "refresh" : "miss")) }
        #expect(stale.lookup == .stale(value("first")) && stale.call == nil)
        await cache.refreshes.runUntilIdle()
        #expect(cache.freshValue(for: "k", ttl: .seconds(10))?.value == "refresh")
    }
}
