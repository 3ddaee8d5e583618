import Foundation
import MetricsTestKit
import NIOCore
import NIOPosix
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// What each event loop keeps for itself, read without a lock another loop takes: the state of
/// one thread, a value read from each thread's copy, the request metrics counted per thread and
/// summed when read, and the memo's filter of kept keys.
@Suite("Per-thread state")
struct PerThreadStateTests {
    /// Runs `body` on each of `count` event loops' threads in turn, returning what each gave.
    static func onLoops<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async throws -> [T] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: count)
        var results: [T] = []
        for (index, loop) in group.makeIterator().enumerated() {
            results.append(try await loop.submit { body(index) }.get())
        }
        try await group.shutdownGracefully()
        return results
    }

    final class Box {
        var value = 0
    }

    @Test("each thread has its own state, made once on it")
    func perThread() async throws {
        let state = PerThread { Box() }
        let seen = try await Self.onLoops(3) { index in
            state.local.value += index + 1
            state.local.value += 10
            return state.local.value
        }
        #expect(seen == [11, 12, 13], "each loop's box started at 0 and kept its own additions")
        state.local.value = 7
        #expect(state.local.value == 7)
    }

    final class Named: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test("a value read without a lock is the one stored last, on every thread, once it is stored")
    func readMostly() async throws {
        let value = ReadMostly(Named("one"))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = Array(group.makeIterator())
        for loop in loops { #expect(try await loop.submit { value.value.name }.get() == "one") }
        value.store(Named("two"))
        for loop in loops { #expect(try await loop.submit { value.value.name }.get() == "two") }
        #expect(value.value.name == "two")
        try await group.shutdownGracefully()
    }

    @Test("a value replaced is freed though an event loop read it and then served nothing more")
    func replacedValueFreed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        weak var first: Named?
        let value: ReadMostly<Named> = {
            let named = Named("one")
            first = named
            return ReadMostly(named)
        }()
        #expect(try await loop.submit { value.value.name }.get() == "one")
        value.store(Named("two"))
        #expect(first == nil, "the loop that read it last still holds the replaced value")
        #expect(try await loop.submit { value.value.name }.get() == "two")
        try await group.shutdownGracefully()
    }

    @Test("the request metrics counted on several loops are summed when they are read, with their buckets")
    func metricsSummed() async throws {
        let metrics = ServerMetrics(factory: TestMetrics())
        _ = try await Self.onLoops(3) { index in
            let instruments = metrics.instruments(label: .skeleton, status: 200, variant: "home|*|default")
            for _ in 0...index { instruments.record(bytes: 100, duration: .microseconds(200)) }
            metrics.responded(label: .data, status: 304, bytes: 10, duration: .seconds(10), variant: nil)
            metrics.degraded.count(index == 0 ? ["bad"] : ["backup", "bad"], of: "pair")
            return index
        }
        let load = ScreenSetLoader.load(files: SharedScreens.upstreams.mapValues { Array($0.utf8) }, upstreams: ["api"])
        var output: [UInt8] = []
        metrics.emit(into: &output, served: ServedScreenSet(try #require(load.screenSet), metrics: TestMetrics()))
        let text = String(decoding: output, as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for line in [
            #"taksi_http_requests_total{route="skeleton",status="200"} 6"#,
            #"taksi_http_requests_total{route="data",status="304"} 3"#,
            #"taksi_http_request_duration_seconds_bucket{route="skeleton",le="0.0001"} 0"#,
            #"taksi_http_request_duration_seconds_bucket{route="skeleton",le="0.00025"} 6"#,
            #"taksi_http_request_duration_seconds_bucket{route="skeleton",le="+Inf"} 6"#,
            #"taksi_http_request_duration_seconds_sum{route="skeleton"} 0.0012"#,
            #"taksi_http_request_duration_seconds_count{route="skeleton"} 6"#,
            #"taksi_http_request_duration_seconds_bucket{route="data",le="5.0"} 0"#,
            #"taksi_http_request_duration_seconds_bucket{route="data",le="+Inf"} 3"#,
            #"taksi_screen_request_duration_seconds_count{route="skeleton",screen="home"} 6"#,
            #"taksi_http_response_bytes_total{route="skeleton"} 600"#,
            #"taksi_http_response_bytes_total{route="data"} 30"#,
            "# TYPE taksi_http_requests_total counter", "# TYPE taksi_http_request_duration_seconds histogram",
            #"taksi_data_degraded_total{screen="pair",source="bad"} 3"#, #"taksi_data_degraded_total{screen="pair",source="backup"} 2"#,
            #"taksi_data_degraded_total{screen="pair",source="good"} 0"#, #"taksi_data_degraded_total{screen="me",source="me"} 0"#,
        ] {
            #expect(lines.contains(line), "\(line)\n\(text)")
        }
        #expect(!text.contains(#"screen_request_duration_seconds_count{route="data""#), "a response of no screen has no screen")
    }

    @Test("the memo's filter holds every key kept, and few others")
    func keptFilter() {
        let filter = KeptFilter()
        var generator = SystemRandomNumberGenerator()
        let kept = (0..<20_000).map { _ in Int.random(in: .min ... .max, using: &generator) }
        for hash in kept { filter.insert(hash) }
        #expect(kept.allSatisfy(filter.mayContain), "a key kept is never turned away")
        let others = (0..<20_000).filter { _ in filter.mayContain(Int.random(in: .min ... .max, using: &generator)) }.count
        #expect(others < 1_000, "\(others) of 20,000 keys never kept are let through (about 2% expected)")
    }
}
