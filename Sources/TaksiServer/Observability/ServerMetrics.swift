import Atomics
public import CoreMetrics
public import NIOCore
import Prometheus

/// The HTTP metrics: requests by route and status, latency by route and by screen, bytes written
/// by route, open connections, and data responses that left a source out.
///
/// Counted on each event loop apart and merged when `/metrics` is read (``emit(into:served:)``): a
/// response adds to counts its loop's thread alone writes (a few atomic adds on memory no other
/// loop writes), so no lock or counter is shared between loops on a request's way. A thread
/// keeps one set of counts per route, status and variant it answered (``instruments(label:status:variant:)``);
/// a connection keeps the last ones, so a response like the one before costs the adds alone.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `taksi_http_requests_total` | counter | `route`, `status` |
/// | `taksi_http_request_duration_seconds` | histogram | `route` |
/// | `taksi_screen_request_duration_seconds` | histogram | `route`, `screen` |
/// | `taksi_http_response_bytes_total` | counter | `route` |
/// | `taksi_open_connections` | gauge | |
/// | `taksi_data_degraded_total` | counter | `screen`, `source` (``DegradedData``) |
///
/// The open connections gauge is the factory's (it changes per connection, not per request); the
/// others are written only by ``emit(into:served:)``, in Prometheus' text format.
public final class ServerMetrics: RequestObserver {
    /// The latency histograms' bucket bounds: finer than Prometheus' default (5 ms and up), as
    /// most answers take well under a millisecond.
    static let durationBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
    ]
    private static let bucketNanoseconds = durationBuckets.map {
        $0.components.seconds * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000
    }

    /// What one thread counted of one route, status and variant.
    private final class Counts: Sendable {
        let label: MetricsLabel
        let status: UInt
        /// The screen the variant is of (`home` for `home|*|default`), when the response is one's.
        let screen: String?
        let requests = ManagedAtomic(0)
        let bytes = ManagedAtomic(0)
        let nanoseconds = ManagedAtomic(0)
        /// Responses by the first bucket they fall in; the last one counts those over every bound.
        let buckets = (0...ServerMetrics.durationBuckets.count).map { _ in ManagedAtomic(0) }

        init(label: MetricsLabel, status: UInt, screen: String?) {
            (self.label, self.status, self.screen) = (label, status, screen)
        }

        func record(bytes: Int, duration: TimeAmount) {
            let nanoseconds = Int(duration.nanoseconds)
            requests.wrappingIncrement(ordering: .relaxed)
            self.bytes.wrappingIncrement(by: bytes, ordering: .relaxed)
            self.nanoseconds.wrappingIncrement(by: nanoseconds, ordering: .relaxed)
            let bucket = ServerMetrics.bucketNanoseconds.firstIndex { nanoseconds <= $0 } ?? ServerMetrics.bucketNanoseconds.count
            buckets[bucket].wrappingIncrement(ordering: .relaxed)
        }
    }

    private struct Key: Hashable {
        var label: MetricsLabel
        var status: UInt
        var variant: String?
    }

    /// Each thread's counts, by what they count, and every thread's for ``emit(into:served:)``.
    private let counts = PerThreadTable<Key, Counts>()
    /// Open client connections.
    public let openConnections: CoreMetrics.Gauge
    /// Data responses that left a source out, by screen and source.
    let degraded = DegradedData()

    /// Where the families not counted here are created (the endpoints' action outcomes).
    let factory: any MetricsFactory

    public init(factory: any MetricsFactory) {
        self.factory = factory
        self.openConnections = CoreMetrics.Gauge(label: "taksi_open_connections", factory: factory)
    }

    public func responded(label: MetricsLabel, status: UInt, bytes: Int, duration: TimeAmount, variant: String?) {
        instruments(label: label, status: status, variant: variant).record(bytes: bytes, duration: duration)
    }

    public func instruments(label: MetricsLabel, status: UInt, variant: String?) -> ResponseInstruments {
        let counts = self.counts.local(Key(label: label, status: status, variant: variant)) {
            Counts(label: label, status: status, screen: variant.map { String($0.prefix { $0 != "|" }) })
        }
        return ResponseInstruments { bytes, duration in counts.record(bytes: bytes, duration: duration) }
    }

    /// The request metrics and ``DegradedData``'s in Prometheus' text format, every thread's
    /// counts summed; `served` is the set whose upstream sources are written at 0 when none was
    /// degraded.
    public func emit(into output: inout [UInt8], served: ServedScreenSet) {
        emitRequests(into: &output)
        degraded.emit(into: &output, served: served)
    }

    /// The four request metrics.
    private func emitRequests(into output: inout [UInt8]) {
        struct Histogram {
            var buckets = [Int](repeating: 0, count: ServerMetrics.durationBuckets.count + 1)
            var nanoseconds = 0
            var count: Int { buckets.reduce(0, +) }

            mutating func add(_ counts: Counts) {
                for index in buckets.indices { buckets[index] += counts.buckets[index].load(ordering: .relaxed) }
                nanoseconds += counts.nanoseconds.load(ordering: .relaxed)
            }
        }
        var requests: [Key: Int] = [:]
        var bytes: [MetricsLabel: Int] = [:]
        var byRoute: [MetricsLabel: Histogram] = [:]
        var byScreen: [[String]: Histogram] = [:]
        for counts in counts.all {
            requests[Key(label: counts.label, status: counts.status), default: 0] += counts.requests.load(ordering: .relaxed)
            bytes[counts.label, default: 0] += counts.bytes.load(ordering: .relaxed)
            byRoute[counts.label, default: Histogram()].add(counts)
            if let screen = counts.screen { byScreen[[counts.label.rawValue, screen], default: Histogram()].add(counts) }
        }
        func labels(_ pairs: [(String, String)]) -> String {
            pairs.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
        }
        func write(_ line: String) {
            output.append(contentsOf: line.utf8)
            output.append(UInt8(ascii: "\n"))
        }
        func write(histogram name: String, labels pairs: [(String, String)], _ histogram: Histogram) {
            let prefix = pairs.isEmpty ? "" : labels(pairs) + ","
            var cumulative = 0
            for (index, bound) in Self.durationBuckets.enumerated() {
                cumulative += histogram.buckets[index]
                write("\(name)_bucket{\(prefix)le=\"\(bound.bucketRepresentation)\"} \(cumulative)")
            }
            write("\(name)_bucket{\(prefix)le=\"+Inf\"} \(histogram.count)")
            write("\(name)_sum{\(labels(pairs))} \(Duration.nanoseconds(histogram.nanoseconds).bucketRepresentation)")
            write("\(name)_count{\(labels(pairs))} \(histogram.count)")
        }
        guard !requests.isEmpty else { return }
        write("# TYPE taksi_http_requests_total counter")
        for (key, count) in requests.sorted(by: { ($0.key.label.rawValue, $0.key.status) < ($1.key.label.rawValue, $1.key.status) }) {
            write("taksi_http_requests_total{\(labels([("route", key.label.rawValue), ("status", String(key.status))]))} \(count)")
        }
        write("# TYPE taksi_http_request_duration_seconds histogram")
        for (label, histogram) in byRoute.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            write(histogram: "taksi_http_request_duration_seconds", labels: [("route", label.rawValue)], histogram)
        }
        if !byScreen.isEmpty {
            write("# TYPE taksi_screen_request_duration_seconds histogram")
            for (key, histogram) in byScreen.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                write(histogram: "taksi_screen_request_duration_seconds", labels: [("route", key[0]), ("screen", key[1])], histogram)
            }
        }
        write("# TYPE taksi_http_response_bytes_total counter")
        for (label, count) in bytes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            write("taksi_http_response_bytes_total{\(labels([("route", label.rawValue)]))} \(count)")
        }
    }

    /// A label value as Prometheus' text format writes it: backslash, quote and line feed escaped.
    static func escaped(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
