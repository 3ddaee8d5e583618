import CompressNIO
import Foundation
import Logging
import MetricsTestKit
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Data answered on the event loop: kept per inputs (``ResponseMemo``), rendered from fresh cache
/// values without leaving the loop, and dropped when an upstream entry is refreshed.
@Suite("Data memo and the on-loop data path")
struct ResponseMemoTests {
    /// A screen whose data comes from a request value and a fixture, large enough for gzip.
    static let greeting = """
        {"name": "greet", "entry": true,
         "sources": {
           "q": {"type": "request", "parameters": {"name": {"type": "string", "default": "you"}}},
           "text": {"type": "fixture", "value": {"long": "\(String(repeating: "A long text that compresses well. ", count: 24))"}}},
         "components": [
           {"name": "label_component", "identifier": "hello", "content": {"value": {"$template": "Hello, {q.name}!"}}},
           {"name": "label_component", "identifier": "long", "content": {"value": {"$bind": "text.long"}}}
         ]}
        """

    struct Fixture {
        let upstream: TestUpstream
        let clock = ManualClock()
        let cache: UpstreamCache
        let metrics = TestMetrics()
        let application: Application

        init(memoBytes: Int = 32 << 20) async throws {
            upstream = try await TestUpstream()
            let clock = self.clock
            cache = UpstreamCache(now: { clock.now })
            var files = UpstreamTests.screens.mapValues { Array($0.utf8) }
            files["greet.json"] = Array(ResponseMemoTests.greeting.utf8)
            let load = ScreenSetLoader.load(files: files, upstreams: ["api"])
            let screenSet = try #require(load.screenSet, "\(load.diagnostics.report)")
            var configuration = ServerConfiguration()
            configuration.port = 0
            configuration.accessLog = false
            configuration.upstreams = ["api": upstream.baseURL]
            configuration.dataMemoMaxBytes = memoBytes
            application = buildApplication(
                configuration: configuration, screenSet: screenSet, logger: testLogger("test"), metrics: metrics, cache: cache
            )
        }

        /// The reply as the connection handler gets it: ready means answered on the event loop.
        func reply(_ uri: String, _ headers: [(String, String)] = []) -> Reply {
            application.responder.respond(to: HTTPRequest(method: .GET, uri: uri, headers: HTTPHeaders(headers)))
        }

        func readyResponse(_ uri: String, _ headers: [(String, String)] = []) -> HTTPResponse? {
            if case .ready(let response) = reply(uri, headers) { return response }
            return nil
        }

        func lookups(_ result: String) -> Int64 {
            metrics.counterTotal(label: "taksi_data_memo_lookups_total", dimensions: [("result", result)])
        }

        func title(_ body: ByteBuffer) -> JSONValue? {
            let body = try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView))
            return body?["interface_data"]?.arrayValue?.first { $0["identifier"] == "title" }?["content"]?["value"]
        }
    }

    @Test("data whose upstream values are fresh is answered on the event loop, rendered once, with an ETag and 304")
    func freshOnTheLoop() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/Oslo", .json(UpstreamTests.completeFeedBody))
        let uri = "/screens/feed/data?city=Oslo"
        guard case .pending = fixture.reply(uri) else {
            Issue.record("nothing is cached yet: the first request must leave the loop to call the upstream")
            return
        }
        let first = try await fixture.application.execute(.GET, uri: uri)
        await fixture.cache.refreshes.runUntilIdle()
        #expect(fixture.title(first.body) == "Cafés")

        #expect(fixture.application.memo.size.entries == 0, "inputs seen once are not kept yet")
        #expect(fixture.lookups("miss") == 1, "the answer made off the loop goes through the memo too")
        let second = try #require(fixture.readyResponse(uri), "a fresh cache hit is answered on the event loop")
        #expect(second.body == first.body)
        #expect(fixture.application.memo.size.entries == 1, "the second time, the response is kept")
        let third = try #require(fixture.readyResponse(uri))
        #expect(third.body == first.body)
        #expect(fixture.lookups("miss") == 2)
        let fourth = try #require(fixture.readyResponse(uri))
        #expect(fourth.body == first.body)
        #expect(fixture.lookups("hit") == 2, "the third and fourth requests are served from the memo")
        #expect(third.headers["Cache-Control"] == ["private, max-age=10"])
        #expect(second.headers.first(name: "ETag") == third.headers.first(name: "ETag"), "kept or not, the same tag")
        // The first answer, which called the upstream, has the validators of the ones after it.
        #expect(first.headers.first(name: "ETag") == third.headers.first(name: "ETag"))
        #expect(first.headers["Vary"] == third.headers["Vary"])

        let etag = try #require(third.headers.first(name: "ETag"))
        let revalidated = try #require(fixture.readyResponse(uri, [("If-None-Match", etag)]))
        #expect(revalidated.status == .notModified)
        #expect(revalidated.body.readableBytes == 0)
        // Other request values are other inputs: rendered on their own.
        #expect(fixture.readyResponse(uri + "&lang=pt") == nil, "lang=pt is another upstream URL, not cached yet")
        #expect(fixture.upstream.count("/feed/Oslo") == 1)
        let otherInputs = try await fixture.application.execute(
            .GET, uri: uri + "&lang=fr", headers: HTTPHeaders([("If-None-Match", "\"nothing\"")])
        )
        #expect(otherInputs.status == .ok)
        #expect(otherInputs.headers.first(name: "ETag") != nil, "a first answer for other inputs has its tag too")
        try await fixture.upstream.stop()
    }

    @Test("refreshing an upstream entry drops every response rendered from it")
    func refreshDrops() async throws {
        let fixture = try await Fixture()
        let body = { (title: String) in UpstreamTests.completeFeedBody.replacingOccurrences(of: "Cafés", with: title) }
        fixture.upstream.on("/feed/Oslo", .json(body("one")))
        let uri = "/screens/feed/data?city=Oslo"
        _ = try await fixture.application.execute(.GET, uri: uri)
        await fixture.cache.refreshes.runUntilIdle()
        for _ in 0..<2 { #expect(fixture.title(try #require(fixture.readyResponse(uri)).body) == "one") }
        #expect(fixture.application.memo.size.entries == 1)

        // Past the TTL: the stale value is served while one refresh runs off the loop.
        fixture.upstream.on("/feed/Oslo", .json(body("two")))
        fixture.clock.advance(by: .seconds(15))
        #expect(fixture.readyResponse(uri) == nil, "a stale value is not fresh: the request leaves the loop")
        #expect(fixture.title(try await fixture.application.execute(.GET, uri: uri).body) == "one")
        await fixture.cache.refreshes.runUntilIdle()
        #expect(fixture.application.memo.size.entries == 0, "the refresh dropped what was rendered from the old value")
        #expect(fixture.metrics.counterTotal(label: "taksi_data_memo_dropped_total") == 1)
        #expect(fixture.title(try #require(fixture.readyResponse(uri)).body) == "two")
        try await fixture.upstream.stop()
    }

    @Test(
        "data of fresh upstream values kept for a target is answered for it while they stay fresh in the same generation, for the same forwarded values"
    )
    func upstreamKeptForTarget() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/Oslo", .json(UpstreamTests.completeFeedBody))
        fixture.upstream.on("/me", .json(#"{"name": "Ada"}"#))
        func answer(_ request: String) throws -> String? {
            try RequestPathTests.kept(request, application: fixture.application).map { "\($0.status.code)" }
        }
        let get = RequestPathTests.get
        let requests = [("/screens/feed/data?city=Oslo", []), ("/screens/me/data", [("Authorization", "a")])]
        for (uri, headers) in requests {
            _ = try await fixture.application.execute(.GET, uri: uri, headers: headers)
            await fixture.cache.refreshes.runUntilIdle()
        }
        // Fetched; then rendered and kept the second time, remembered by its target the third (a
        // memo hit by its inputs): found by its target after. Targets are remembered by each
        // thread (an event loop's), so from here on the test does not await.
        for (uri, headers) in requests {
            let request = get(uri, headers.map { "\($0): \($1)" }.joined())
            for expected in [nil, nil, "200"] as [String?] {
                #expect(try answer(request) == expected, "\(uri)")
                #expect(fixture.readyResponse(uri, headers)?.status == .ok)
            }
        }
        #expect(try answer(get("/screens/feed/data?city=Oslo", "Accept-Encoding: gzip")) == "200", "too small for a gzip form")
        #expect(try answer(get("/screens/feed/data?city=Oslo&lang=en")) == nil, "another target")
        // The values forwarded are part of the upstream's cache key: the same bytes answer, any other not.
        #expect(try answer(get("/screens/me/data", "authorization: a")) == "200")
        #expect(try answer(get("/screens/me/data", "Authorization: a", "X-Other: 1")) == "200")
        #expect(try answer(get("/screens/me/data", "Authorization: b")) == nil)
        #expect(try answer(get("/screens/me/data")) == nil)
        #expect(try answer(get("/screens/me/data", "Authorization: a", "Accept-Language: fr")) == nil)
        #expect(try answer(get("/screens/me/data", "Authorization: a", "Authorization: a")) == nil)

        // Stale by the clock, each by its source's ttl (10 and 30 s): not answered for its target
        // (it is served stale and refreshed).
        fixture.clock.advance(by: .seconds(11))
        #expect(try answer(get("/screens/feed/data?city=Oslo")) == nil)
        #expect(try answer(get("/screens/me/data", "Authorization: a")) == "200")
        fixture.clock.advance(by: .seconds(20))
        #expect(try answer(get("/screens/me/data", "Authorization: a")) == nil)
        fixture.upstream.on("/feed/Oslo", .json(UpstreamTests.completeFeedBody.replacingOccurrences(of: "Cafés", with: "Bars")))
        _ = try await fixture.application.execute(.GET, uri: "/screens/feed/data?city=Oslo")
        await fixture.cache.refreshes.runUntilIdle()
        // Refreshed: a new generation, remembered again once kept and asked for by its inputs.
        #expect(try answer(get("/screens/feed/data?city=Oslo")) == nil)
        for _ in 0..<3 { _ = fixture.readyResponse("/screens/feed/data?city=Oslo") }
        let refreshed = try #require(try RequestPathTests.kept(get("/screens/feed/data?city=Oslo"), application: fixture.application))
        #expect(fixture.title(refreshed.body) == "Bars")
        try await fixture.upstream.stop()
    }

    @Test("a connection counts data of fresh upstream values kept for its target as any cache hit and memo hit")
    func upstreamKeptForTargetCounted() async throws {
        let feed = RequestPathTests.get("/screens/feed/data?city=Oslo")
        let me = RequestPathTests.get("/screens/me/data", "Authorization: a")
        let fixture = try await Fixture()
        fixture.upstream.on("/feed/Oslo", .json(UpstreamTests.completeFeedBody))
        fixture.upstream.on("/me", .json(#"{"name": "Ada"}"#))
        for (uri, headers) in [("/screens/feed/data?city=Oslo", []), ("/screens/me/data", [("Authorization", "a")])] {
            _ = try await fixture.application.execute(.GET, uri: uri, headers: headers)
            await fixture.cache.refreshes.runUntilIdle()
        }
        let connection = try HTTPConnectionHandlerTests.Connection(application: fixture.application)
        for request in Array(repeating: feed, count: 5) + Array(repeating: me, count: 5) {
            try connection.send(request)
            #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
        }
        #expect(fixture.metrics.counterTotal(label: "taksi_upstream_cache_total", dimensions: [("result", "hit")]) == 10)
        // Per screen: a miss after the fetch, a miss kept, a hit by the inputs, three by the target.
        #expect(fixture.lookups("hit") == 8 && fixture.lookups("miss") == 4)
        #expect(fixture.metrics.counterTotal(label: "taksi_variant_data_total") == 12)
        try await fixture.upstream.stop()
    }

    @Test("a response with a degraded source is neither answered on the loop nor kept")
    func degradedNotKept() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/good", .json(#"{"text": "good"}"#))
        fixture.upstream.on("/bad", .status(500))
        fixture.upstream.on("/backup", .status(500))
        for _ in 0..<3 {
            let response = try await fixture.application.execute(.GET, uri: "/screens/pair/data")
            #expect(response.headers["X-Taksi-Degraded"] == ["backup, bad"])
            #expect(response.headers["ETag"].isEmpty)
            await fixture.cache.refreshes.runUntilIdle()
        }
        #expect(fixture.readyResponse("/screens/pair/data") == nil)
        #expect(fixture.application.memo.size.entries == 0)
        try await fixture.upstream.stop()
    }

    @Test("data from request values is kept per value, with a 304 and a gzip form, within its byte limit")
    func requestValues() async throws {
        let limit = 64 * 1024
        let fixture = try await Fixture(memoBytes: limit)
        let ada = try #require(fixture.readyResponse("/screens/greet/data?name=Ada"))
        let text = String(decoding: ada.body.readableBytesView, as: UTF8.self)
        #expect(text.contains(#""value":"Hello, Ada!""#))
        #expect(ada.headers["Cache-Control"] == ["private, no-cache"])
        #expect(ada.headers["Vary"] == ["X-Taksi-Skeleton, Accept-Encoding"])
        let etag = try #require(ada.headers.first(name: "ETag"))

        var gzipped = try #require(fixture.readyResponse("/screens/greet/data?name=Ada", [("Accept-Encoding", "gzip")]))
        #expect(gzipped.headers["Content-Encoding"] == ["gzip"])
        #expect(gzipped.headers.first(name: "ETag") == String(etag.dropLast()) + "-gzip\"")
        var inflated = try gzipped.body.decompress(with: .gzip())
        #expect(inflated.readBytes(length: inflated.readableBytes) == Array(ada.body.readableBytesView))
        #expect(gzipped.body.readableBytes < ada.body.readableBytes)
        let gzipTag = try #require(gzipped.headers.first(name: "ETag"))
        #expect(
            fixture.readyResponse("/screens/greet/data?name=Ada", [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)])?.status
                == .notModified)
        #expect(fixture.readyResponse("/screens/greet/data?name=Ada", [("If-None-Match", etag)])?.status == .notModified)
        #expect(fixture.readyResponse("/screens/greet/data?name=Bea", [("If-None-Match", etag)])?.status == .ok)
        // Parameters the plan does not read do not make other inputs.
        #expect(fixture.readyResponse("/screens/greet/data?name=Ada&utm=x", [("If-None-Match", etag)])?.status == .notModified)

        // Values asked for once are never kept.
        for index in 0..<50 { _ = fixture.readyResponse("/screens/greet/data?name=once\(index)") }
        #expect(fixture.application.memo.size.entries == 1, "Ada only")

        // Many values asked for twice: the memo stays within its limit, and the value asked for
        // again and again stays kept.
        let hitsBefore = fixture.lookups("hit")
        for index in 0..<100 {
            for _ in 0..<2 { _ = fixture.readyResponse("/screens/greet/data?name=visitor\(index)") }
            _ = fixture.readyResponse("/screens/greet/data?name=Ada")
        }
        #expect(fixture.lookups("hit") - hitsBefore == 100)
        let size = fixture.application.memo.size
        #expect(size.cost <= limit)
        #expect(size.entries > 1 && size.entries < 101, "some visitors kept, the older ones dropped")
    }

    @Test("a memo of 0 bytes keeps nothing, and answers are the same")
    func disabled() async throws {
        let fixture = try await Fixture(memoBytes: 0)
        let first = try #require(fixture.readyResponse("/screens/greet/data?name=Ada"))
        let second = try #require(fixture.readyResponse("/screens/greet/data?name=Ada"))
        #expect(first.body == second.body)
        // Not kept, yet validated like a kept one: the same ETag and Vary, and a 304.
        let etag = try #require(first.headers.first(name: "ETag"))
        #expect(second.headers.first(name: "ETag") == etag)
        #expect(first.headers["Vary"] == ["X-Taksi-Skeleton, Accept-Encoding"])
        let revalidated = try #require(fixture.readyResponse("/screens/greet/data?name=Ada", [("If-None-Match", etag)]))
        #expect(revalidated.status == .notModified)
        #expect(revalidated.headers.first(name: "ETag") == etag)
        #expect(fixture.readyResponse("/screens/greet/data?name=Ada", [("Accept-Encoding", "gzip")])?.headers["Content-Encoding"] == [])
        #expect(fixture.application.memo.size.entries == 0)
        #expect(fixture.lookups("hit") == 0 && fixture.lookups("miss") == 0)
    }
}
