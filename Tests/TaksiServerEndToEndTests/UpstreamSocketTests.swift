import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// http sources over a real socket (the in-process suite `Upstream sources` covers the rest).
@Suite("Upstream sources over a socket")
struct UpstreamSocketTests {
    @Test("over a socket, a data reply that waits on an upstream keeps its place among pipelined requests")
    func pipelinedPendingReply() async throws {
        let upstream = try await TestUpstream()
        let application = try upstreamApplication(files: SharedScreens.upstreams, upstream: upstream).application
        upstream.on("/feed/Oslo", .json(SharedScreens.feedBody, delay: .milliseconds(100)))
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /screens/feed/data?city=Oslo HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /screens/feed/data?city=Oslo HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            let responses = await connection.receive(3)
            #expect(responses.map(\.status) == [200, 200, 200])
            #expect(responses[0].json?["interface_data"]?.arrayValue?.first == ["identifier": "title", "content": ["value": "Cafés"]])
            #expect(responses[1].json == ["status": "ok", "version": .string(TaksiServerVersion.current)])
            #expect(responses[2].body == responses[0].body)
        }
        try await upstream.stop()
    }

    static let traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test(
        "every upstream and action call carries the request's X-Request-Id and trace context, outside the cache key and Vary; failure log lines name both"
    )
    func correlation() async throws {
        let upstream = try await TestUpstream()
        let log = LogRecorder()
        // The upstream screens, and the action screen (its own feed.yaml left out).
        var files = SharedScreens.upstreams
        files["signup.yaml"] = SharedScreens.actions["signup.yaml"]
        files["welcome.yaml"] = SharedScreens.actions["welcome.yaml"]
        let application = try upstreamApplication(files: files, upstream: upstream, logger: log.logger).application
        upstream.on("/feed/Oslo", .json(SharedScreens.feedBody))
        upstream.on("/bad", .status(500))
        upstream.on("/signups/pro", .answer(201, #"{"id": "u1"}"#))
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            func get(_ path: String, id: String) async -> RawResponse? {
                await connection.request(
                    path, headers: [("X-Request-Id", id), ("traceparent", Self.traceParent), ("tracestate", "vendor=1")])
            }
            let first = try #require(await get("/screens/feed/data?city=Oslo", id: "first-request"))
            #expect(first.status == 200)
            let sent = try #require(upstream.requests.last { $0.uri.hasPrefix("/feed/Oslo") })
            let header = { (name: String) in sent.headers.first { $0.0.lowercased() == name }?.1 }
            #expect(header("x-request-id") == "first-request")
            #expect(header("traceparent") == Self.traceParent)
            #expect(header("tracestate") == "vendor=1")
            #expect(first.header("Vary")?.lowercased().contains("request-id") == false)
            // Another request id is the same cache entry: no second call.
            #expect(try #require(await get("/screens/feed/data?city=Oslo", id: "second-request")).status == 200)
            #expect(upstream.count("/feed/Oslo") == 1)

            // A failing source's log line names the request and its trace.
            _ = await get("/screens/pair/data", id: "failing-request")
            let failure = try #require(log.lines(atLeast: .error).first { $0.message.contains("upstream failed") })
            #expect(failure.metadata["request_id"] == "failing-request")
            #expect(failure.metadata["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736")

            // An action's call carries them too.
            let body = "email=ada%40example.com"
            connection.send(
                "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\nX-Request-Id: submit-1\r\ntraceparent: \(Self.traceParent)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
            #expect(await connection.receive(1).first?.status == 200)
            let submitted = try #require(upstream.requests.last { $0.uri.hasPrefix("/signups/pro") })
            #expect(submitted.headers.first { $0.0.lowercased() == "x-request-id" }?.1 == "submit-1")
            #expect(submitted.headers.first { $0.0.lowercased() == "traceparent" }?.1 == Self.traceParent)
        }
        try await upstream.stop()
    }

    @Test("a malformed traceparent is not sent on, and a source cannot list the headers every call carries")
    func malformedTraceParent() throws {
        let correlation = Correlation(
            requestID: "r", headers: ["traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "tracestate": "a=1"])
        #expect(correlation.traceParent == nil && correlation.traceState == nil)
        #expect(correlation.headers(for: nil).map(\.0) == ["X-Request-Id"])
        #expect(Correlation(requestID: "r", headers: ["traceparent": Self.traceParent]).traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        let load = ScreenSetLoader.load(
            files: [
                "a.yaml": Array(
                    "name: a\nentry: true\nsources: {s: {type: http, upstream: api, path: /a, headers: [X-Request-Id]}}\ncomponents: [{name: label_component, content: {value: {$bind: s.x}}}]"
                        .utf8)
            ], upstreams: ["api"])
        let warning = try #require(load.diagnostics.first { $0.severity == .warning })
        #expect(warning.message.contains("X-Request-Id is sent on every upstream call already"), "\(warning)")
        #expect(try load.screenSet?["a"]?.dataPlan.upstreamCalls(query: [:]).first?.definition.forwardedHeaders == [])
    }
}
