import Foundation
import Logging
import MetricsTestKit
import ServiceLifecycle
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiServer

#if canImport(Glibc)
import Glibc
#endif

/// Traces as an operator follows them: spans exported over OTLP/HTTP to a real receiver
/// (`scripts/otlp-receiver.py`, decoding with the official OpenTelemetry protobuf definitions),
/// the trace carried to the upstream, and log lines naming it.
@Suite("Tracing")
struct TracingTests {
    /// The receiver, on a free port, and the spans and log records it printed, read as they come
    /// (a pipe holds 64 KB: a receiver nobody reads stops answering the exporter).
    final class Receiver: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        let port: Int
        private let lock = NSLock()
        private var received = Data()
        private let finished = DispatchSemaphore(value: 0)

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", repositoryRoot.appendingPathComponent("scripts/otlp-receiver.py").path]
            process.standardOutput = output
            try process.run()
            // Only the receiver writes to the pipe, so reading it to its end ends when it exits.
            try output.fileHandleForWriting.close()
            // The first line is "port N".
            var first = Data()
            while !first.contains(10) {
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { break }
                first += more
            }
            let line = String(decoding: first.prefix { $0 != 10 }, as: UTF8.self)
            port = try #require(Int(line.dropFirst("port ".count)), "the receiver printed \(line)")
            received = Data(first.drop { $0 != 10 }.dropFirst())
            let reading = Thread { [self] in
                while true {
                    let more = output.fileHandleForReading.availableData
                    if more.isEmpty { break }
                    lock.withLock { received += more }
                }
                finished.signal()
            }
            reading.start()
        }

        /// Stops it and returns every span and log record it received. The waits (for the process
        /// to exit, for the reader to reach the pipe's end) run on a thread of their own, off the
        /// cooperative pool that the servers of the tests beside it need.
        func spans() async throws -> [JSONValue] {
            // SIGKILL: a child inherits the signals this process ignores (the service lifecycle's).
            kill(process.processIdentifier, SIGKILL)
            await exited(process)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread { [self] in
                    finished.wait()
                    continuation.resume()
                }.start()
            }
            let text = String(decoding: lock.withLock { received }, as: UTF8.self)
            return try text.split(separator: "\n").map { try JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
        }
    }

    static let clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let clientParent = "00f067aa0ba902b7"

    @Test(
        "a data request whose upstream fails: its span, the upstream call's span as its child with the error, the same trace at the upstream and in the log line",
        .enabled(if: pythonHas("opentelemetry.proto"), "needs python3 -m pip install opentelemetry-proto (.ci/run installs it)")
    )
    func failingUpstream() async throws {
        let receiver = try Receiver()
        let upstream = try await TestUpstream()
        upstream.on("/good", .json(#"{"text": "good"}"#))
        upstream.on("/bad", .status(500))
        upstream.on("/backup", .status(500))
        let log = LogRecorder()
        let traced = try Traced(receiver: receiver, upstream: upstream, logger: log.logger)

        try await withRunningServer(traced.application) { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /screens/pair/data HTTP/1.1\r\nHost: a\r\nX-Request-Id: pair-1\r\ntraceparent: 00-\(Self.clientTrace)-\(Self.clientParent)-01\r\n\r\n"
            )
            let response = try #require(await connection.receive(1).first)
            #expect(response.status == 200)
            #expect(response.header("X-Taksi-Degraded") == "backup, bad")
            // The response names the trace, with the server's span as the parent an app would report.
            #expect(response.header("traceparent")?.hasPrefix("00-\(Self.clientTrace)-") == true, "\(response.headers)")
        }
        try await traced.flush()
        let spans = try await receiver.spans()
        try await upstream.stop()

        let server = try #require(spans.first { $0["kind"] == "server" }, "\(spans)")
        #expect(server["trace_id"] == .string(Self.clientTrace))
        #expect(server["parent_span_id"] == .string(Self.clientParent))
        #expect(server["name"] == "GET data")
        #expect(server["service"] == "taksi-server")
        #expect(server["attributes"]?["http.route"] == "data")
        #expect(server["attributes"]?["http.response.status_code"] == 200)
        #expect(server["attributes"]?["taksi.variant"] == "pair|*|default")
        #expect(server["attributes"]?["taksi.cache.bad"] == "failed")

        let calls = spans.filter { $0["kind"] == "client" }
        #expect(calls.count == 3, "\(calls)")
        for call in calls {
            #expect(call["trace_id"] == .string(Self.clientTrace))
            #expect(call["parent_span_id"] == server["span_id"])
            #expect(call["name"] == "GET api")
        }
        let bad = try #require(calls.first { $0["attributes"]?["taksi.source"] == "bad" })
        #expect(bad["status"] == "error")
        #expect(bad["attributes"]?["url.template"] == "/bad")
        #expect(bad["attributes"]?["http.response.status_code"] == 500)
        #expect(calls.first { $0["attributes"]?["taksi.source"] == "good" }?["status"] == "unset")

        // The upstream got the call span's context and the request's id.
        let sent = try #require(upstream.requests.first { $0.uri == "/bad" })
        let header = { (name: String) in sent.headers.first { $0.0.lowercased() == name }?.1 }
        #expect(header("traceparent") == "00-\(Self.clientTrace)-\(bad["span_id"]?.stringValue ?? "")-01")
        #expect(header("x-request-id") == "pair-1")

        // The log line of the failure names the request and the trace.
        let line = try #require(log.lines(atLeast: .error).first { $0.metadata["source"] == "bad" })
        #expect(line.metadata["request_id"] == "pair-1")
        #expect(line.metadata["trace_id"] == Self.clientTrace)
    }

    /// An application over the upstream test screens, tracing to `receiver`, and its exporter running.
    struct Traced {
        let application: Application
        let exporter: ServiceGroup
        let running: Task<Void, any Error>

        init(
            receiver: Receiver, upstream: TestUpstream, cache: UpstreamCache? = nil, headers: [String: String] = [:],
            sampling: Double = 1, logger: Logger = testLogger("test"), files: [String: String] = SharedScreens.upstreams
        ) throws {
            var settings = ServerConfiguration.TracingSettings()
            settings.enabled = true
            settings.endpoint = "http://127.0.0.1:\(receiver.port)"
            settings.headers = headers
            settings.sampling = sampling
            let tracing = try makeTracing(settings, logger: testLogger("otel"))
            var parts = Application.Parts()
            parts.tracing = tracing
            application = try upstreamApplication(files: files, upstream: upstream, cache: cache, logger: logger, parts: parts).application
            let exporter = ServiceGroup(services: [tracing.exporter], gracefulShutdownSignals: [], logger: testLogger("otel"))
            self.exporter = exporter
            running = Task { try await exporter.run() }
        }

        /// Flushes what was recorded to the receiver.
        func flush() async throws {
            await exporter.triggerGracefulShutdown()
            try await running.value
        }
    }

    /// A W3C `traceparent` of trace `number` (sampled), from a made-up client span.
    static func traceParent(_ number: Int) -> String { "00-\(trace(number))-\(clientParent)-01" }
    static func trace(_ number: Int) -> String { String(repeating: "0", count: 31) + String(number) }

    @Test(
        "a request that joins another's upstream call has a span of its wait, linked to the call, which counts it; a kept response is a memo hit; exports carry the configured headers",
        .enabled(if: pythonHas("opentelemetry.proto"), "needs python3 -m pip install opentelemetry-proto (.ci/run installs it)")
    )
    func joinedCall() async throws {
        let receiver = try Receiver()
        let upstream = try await TestUpstream()
        // Every value the feed binds, in the shape it binds it: not degraded, so kept.
        upstream.on(
            "/feed/Oslo", .held(SharedScreens.feedBody.replacingOccurrences(of: #""object": {"a": 1}"#, with: #""object": "text""#)))
        let cache = UpstreamCache()
        // The call is held until the second request has joined it: its timeout is a hang guard
        // (the default 2 s ran out once on a busy machine, and the test saw a failed call).
        var files = SharedScreens.upstreams
        files["feed.json"] = files["feed.json"]?.replacingOccurrences(of: #""ttl": 10,"#, with: #""timeout": 60, "ttl": 10,"#)
        let traced = try Traced(
            receiver: receiver, upstream: upstream, cache: cache, headers: ["x-api-key": "s3cret, really"], files: files)
        try await withRunningServer(traced.application) { port in
            let request = { (trace: Int) in
                "GET /screens/feed/data?city=Oslo HTTP/1.1\r\nHost: a\r\ntraceparent: \(Self.traceParent(trace))\r\n\r\n"
            }
            let first = try RawConnection(port: port)
            first.send(request(1))
            await upstream.waitForRequests(1)
            let second = try RawConnection(port: port)
            second.send(request(2))
            // The second request waits for the first one's call, held at the upstream, then both are answered.
            let key = upstream.baseURL + "/feed/Oslo?lang=en&v=2"
            #expect(await eventually { cache.call(for: key)?.joiners == 1 }, "the second request never joined the call")
            upstream.release()
            #expect(await first.receive(1).first?.status == 200)
            #expect(await second.receive(1).first?.status == 200)
            // A third is answered from the response kept for the same inputs.
            first.send(request(3))
            #expect(await first.receive(1).first?.status == 200)
        }
        try await traced.flush()
        let spans = try await receiver.spans()
        try await upstream.stop()
        #expect(upstream.count("/feed/Oslo") == 1)

        let calls = spans.filter { $0["kind"] == "client" }
        #expect(calls.count == 2, "\(calls)")
        let made = try #require(calls.first { $0["trace_id"] == .string(Self.trace(1)) })
        #expect(made["attributes"]?["taksi.cache"] == "miss")
        #expect(made["attributes"]?["taksi.upstream.joiners"] == 1)
        #expect(made["links"] == [])
        let joined = try #require(calls.first { $0["trace_id"] == .string(Self.trace(2)) })
        #expect(joined["name"] == "GET api")
        #expect(joined["attributes"]?["taksi.cache"] == "joined")
        #expect(joined["attributes"]?["url.template"] == "/feed/{city}")
        #expect(joined["links"] == [["trace_id": .string(Self.trace(1)), "span_id": made["span_id"] ?? .null]])
        let joinedRequest = try #require(spans.first { $0["kind"] == "server" && $0["trace_id"] == .string(Self.trace(2)) })
        #expect(joined["parent_span_id"] == joinedRequest["span_id"])
        #expect(joinedRequest["attributes"]?["taksi.cache.api"] == "joined")

        let kept = try #require(spans.first { $0["kind"] == "server" && $0["trace_id"] == .string(Self.trace(3)) })
        #expect(kept["attributes"]?["taksi.memo"] == "hit")
        #expect(kept["attributes"]?["taksi.screen"] == "feed")
        #expect(kept["attributes"]?["taksi.cache.api"] == "hit")
        for span in spans { #expect(span["export_headers"]?["x-api-key"] == "s3cret, really") }
    }

    @Test(
        "a call sent again after its connection dropped says so on its span",
        .enabled(if: pythonHas("opentelemetry.proto"), "needs python3 -m pip install opentelemetry-proto (.ci/run installs it)")
    )
    func retriedCall() async throws {
        let receiver = try Receiver()
        let upstream = try await TestUpstream()
        upstream.on("/once", .dropConnection(times: 1, then: .json(#"{"text": "second try"}"#)))
        upstream.on("/twice", .dropConnection(times: 2, then: .json(#"{"text": "third try"}"#)))
        let traced = try Traced(receiver: receiver, upstream: upstream)
        try await withRunningServer(traced.application) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/retry/data HTTP/1.1\r\nHost: a\r\ntraceparent: \(Self.traceParent(4))\r\n\r\n")
            #expect(await connection.receive(1).first?.header("X-Taksi-Degraded") == "twice")
        }
        try await traced.flush()
        let spans = try await receiver.spans()
        try await upstream.stop()

        let once = try #require(spans.first { $0["attributes"]?["taksi.source"] == "once" })
        #expect(once["attributes"]?["http.request.resend_count"] == 1)
        #expect(once["events"] == ["retry"])
        #expect(once["status"] == "unset")
        let twice = try #require(spans.first { $0["attributes"]?["taksi.source"] == "twice" })
        #expect(twice["attributes"]?["http.request.resend_count"] == 1)
        #expect(twice["status"] == "error")
        #expect(twice["attributes"]?["taksi.upstream.result"] == "connection")
    }

    @Test(
        "sampled out, a request makes no span: with sampling 0 only a trace the app records is, and an app's unrecorded trace is passed on as it came",
        .enabled(if: pythonHas("opentelemetry.proto"), "needs python3 -m pip install opentelemetry-proto (.ci/run installs it)")
    )
    func sampledOut() async throws {
        let receiver = try Receiver()
        let upstream = try await TestUpstream()
        upstream.on("/me", .json(#"{"name": "Ada"}"#))
        let traced = try Traced(receiver: receiver, upstream: upstream, sampling: 0)
        let notRecorded = "00-\(Self.trace(6))-\(Self.clientParent)-00"
        try await withRunningServer(traced.application) { port in
            let connection = try RawConnection(port: port)
            // Each as another user (the source forwards Authorization), so each calls the upstream.
            let request = { (user: Int, header: String) in
                "GET /screens/me/data HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer \(user)\r\n\(header)\r\n"
            }
            connection.send(
                request(1, "") + request(2, "traceparent: \(Self.traceParent(5))\r\n") + request(3, "traceparent: \(notRecorded)\r\n"))
            let responses = await connection.receive(3)
            #expect(responses.map(\.status) == [200, 200, 200])
            #expect(responses.map { $0.header("traceparent") != nil } == [false, true, false])
        }
        try await traced.flush()
        let spans = try await receiver.spans()
        try await upstream.stop()
        // Only the trace the app records, the request and its call.
        #expect(Set(spans.compactMap { $0["trace_id"]?.stringValue }) == [Self.trace(5)], "\(spans)")
        #expect(spans.count == 2)
        let sent = { (user: Int) in
            upstream.requests.first { $0.headers.contains { $0 == ("Authorization", "Bearer \(user)") } }
                .map { $0.headers.first { $0.0.lowercased() == "traceparent" }?.1 }
        }
        #expect(upstream.requests.count == 3)
        #expect(sent(1) == .some(nil), "no trace, none started")
        #expect(sent(2)??.hasPrefix("00-\(Self.trace(5))-") == true)
        #expect(sent(3) == notRecorded)
    }

    @Test("the server's sampler records its share of the traces it starts, and reads the sampled flag of an app's")
    func sampler() {
        for ratio in [0.0, 0.1, 0.5, 1.0] {
            let sampler = RootSampler(ratio: ratio)
            let recorded = (0..<100_000).filter { _ in sampler.records() }.count
            // 10 standard deviations either side at most: never off by chance.
            #expect(abs(Double(recorded) / 100_000 - ratio) <= 0.016, "\(ratio): \(recorded)")
        }
        let parent = "00-\(Self.clientTrace)-\(Self.clientParent)-"
        #expect(["01", "03", "0b", "ff"].allSatisfy { Correlation.isSampled(parent + $0) })
        #expect(!["00", "02", "0a", "fe"].contains { Correlation.isSampled(parent + $0) })
    }

    /// Trace context headers a client may send that are not valid (the first nine refuse the
    /// `traceparent`, the next five the `tracestate`), and one valid list that needs normalising;
    /// each with a part that must never reach a log line.
    static let traceContextCases: [(header: String, marker: String)] = [
        ("traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", "4BF92F3577B34DA6"),
        ("traceparent: ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6"),
        ("traceparent: 01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", "01-future"),
        ("traceparent: 00-00000000000000000000000000000000-00f067aa0ba902b7-01", "-00000000000000000000000000000000-"),
        ("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "-0000000000000000-"),
        ("traceparent: 00-" + String(repeating: "a1b2", count: 2_500), "a1b2a1b2a1b2a1b2"),
        ("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e47\u{e9}6-00f067aa0ba902b7-01", "0e0e47\u{e9}6"),
        (
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntraceparent: 00-11f92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "11f92f3577b34da6"
        ),
        ("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", "0e0e4736-00f067aa0ba902b7-0x"),
        ("traceparent: \(traceParent(1))\r\ntracestate: SECRET-STATE===", "SECRET-STATE"),
        ("traceparent: \(traceParent(1))\r\ntracestate: vendor=caf\u{e9}-state", "caf\u{e9}-state"),
        ("traceparent: \(traceParent(1))\r\ntracestate: big=" + String(repeating: "q9", count: 6_000), "q9q9q9q9q9q9q9q9"),
        ("traceparent: \(traceParent(1))\r\ntracestate: dup=first-dup,dup=second-dup", "second-dup"),
        (
            "traceparent: \(traceParent(1))\r\ntracestate: " + (0..<33).map { "k\($0)=member-\($0)" }.joined(separator: ","),
            "member-32"
        ),
        ("traceparent: \(traceParent(1))\r\ntracestate:  a=kept-one ,, b=kept-two\r\ntracestate: c=kept-three", "kept-three"),
    ]

    @Test("no request header's value reaches a log line, whatever its trace context, with tracing on and off, in text and JSON logs")
    func noHeaderValueLogged() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/me", .json(#"{"name": "Ada"}"#))
        upstream.on("/good", .json(#"{"text": "good"}"#))
        upstream.on("/backup", .json(#"{"text": "backup"}"#))
        upstream.on("/bad", .status(500))
        for tracing in [false, true] {
            for format in ServerConfiguration.LogFormat.allCases {
                let file = Scratch.path("log")
                #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
                defer { try? FileManager.default.removeItem(at: file) }
                let output = try FileHandle(forWritingTo: file)
                var logger = Logger(label: "taksi-server") { LineLogHandler(label: $0, format: format, output: output) }
                logger.logLevel = .trace
                let metrics = TestMetrics()
                var parts = Application.Parts()
                if tracing {
                    var settings = ServerConfiguration.TracingSettings()
                    settings.enabled = true
                    // Its exporter is not run: nothing is sent, and spans are still made.
                    settings.endpoint = "http://127.0.0.1:9"
                    parts.tracing = try makeTracing(settings, logger: logger, metrics: metrics)
                }
                let application = try upstreamApplication(
                    files: SharedScreens.upstreams, upstream: upstream, logger: logger, metrics: metrics, parts: parts
                ).application
                let cases = Self.traceContextCases
                try await withRunningServer(application) { port in
                    let connection = try RawConnection(port: port)
                    for (number, context) in cases.enumerated() {
                        // A failing source, so that the request writes a log line of its own too.
                        connection.send(
                            "GET /screens/\(number % 2 == 0 ? "me" : "pair")/data HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer SECRET-TOKEN\r\nCookie: session=SECRET-COOKIE\r\n\(context.header)\r\n\r\n"
                        )
                    }
                    let responses = await connection.receive(cases.count)
                    #expect(responses.count == cases.count)
                    #expect(responses.allSatisfy { $0.status == 200 }, "\(responses.map(\.status))")
                }
                try output.close()
                let log = try String(contentsOf: file, encoding: .utf8)
                #expect(!log.isEmpty, "the failing source is logged")
                #expect(!log.contains("SECRET"), "tracing \(tracing), \(format): \(log.prefix(2_000))")
                for context in cases { #expect(!log.contains(context.marker), "tracing \(tracing), \(format): \(context.marker)") }
                let refused = { (header: String) in
                    (try? metrics.expectCounter("taksi_trace_context_refused_total", [("header", header)])).map { Int($0.totalValue) }
                }
                #expect(refused("traceparent") == (tracing ? 9 : nil))
                #expect(refused("tracestate") == (tracing ? 5 : nil))
            }
        }
        try await upstream.stop()
    }

    @Test("with tracing off, a response names no trace and the client's trace context is passed on as it came")
    func off() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/me", .json(#"{"name": "Ada"}"#))
        let application = try upstreamApplication(files: SharedScreens.upstreams, upstream: upstream).application
        #expect(application.tracing == nil)
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /screens/me/data HTTP/1.1\r\nHost: a\r\ntraceparent: 00-\(Self.clientTrace)-\(Self.clientParent)-01\r\n\r\n")
            let response = try #require(await connection.receive(1).first)
            #expect(response.header("traceparent") == nil)
        }
        let sent = try #require(upstream.requests.first { $0.uri == "/me" })
        #expect(sent.headers.first { $0.0.lowercased() == "traceparent" }?.1 == "00-\(Self.clientTrace)-\(Self.clientParent)-01")
        try await upstream.stop()
    }
}
