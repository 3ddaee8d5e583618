public import CoreMetrics
import NIOConcurrencyHelpers
public import NIOCore

/// The HTTP metrics: requests by route and status, latency by route and by screen, bytes written
/// by route, and open connections. Metric objects are made once per route, status and variant and
/// kept, so a request costs a dictionary lookup or two and a few atomic updates; a connection keeps
/// the instruments of its last response (``instruments(label:status:variant:)``), so a response
/// like the one before costs the updates alone.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `taksi_http_requests_total` | counter | `route`, `status` |
/// | `taksi_http_request_duration_seconds` | histogram | `route` |
/// | `taksi_screen_request_duration_seconds` | histogram | `route`, `screen` |
/// | `taksi_http_response_bytes_total` | counter | `route` |
/// | `taksi_open_connections` | gauge | |
public final class ServerMetrics: RequestObserver {
    private struct RouteMetrics {
        let duration: Timer
        let bytes: Counter
        var requests: [UInt: Counter]
    }

    /// A route and the variant it served (whose screen labels the latency).
    private struct LabelledVariant: Hashable {
        var label: MetricsLabel
        var variant: String
    }

    private struct State {
        var routes: [MetricsLabel: RouteMetrics] = [:]
        var screens: [LabelledVariant: Timer] = [:]
    }

    private let factory: any MetricsFactory
    // A lock, not an actor: observations are made synchronously on the event loops.
    private let state = NIOLockedValueBox(State())
    /// Open client connections.
    public let openConnections: Gauge

    public init(factory: any MetricsFactory) {
        self.factory = factory
        self.openConnections = Gauge(label: "taksi_open_connections", factory: factory)
    }

    public func responded(label: MetricsLabel, status: UInt, bytes: Int, duration: TimeAmount, variant: String?) {
        instruments(label: label, status: status, variant: variant).record(bytes: bytes, duration: duration)
    }

    public func instruments(label: MetricsLabel, status: UInt, variant: String?) -> ResponseInstruments {
        let (requests, timer, written, byScreen) = state.withLockedValue { state -> (Counter, Timer, Counter, Timer?) in
            var metrics =
                state.routes[label]
                ?? RouteMetrics(
                    duration: Timer(
                        label: "taksi_http_request_duration_seconds", dimensions: [("route", label.rawValue)], factory: factory),
                    bytes: Counter(label: "taksi_http_response_bytes_total", dimensions: [("route", label.rawValue)], factory: factory),
                    requests: [:]
                )
            let counter =
                metrics.requests[status]
                ?? Counter(
                    label: "taksi_http_requests_total", dimensions: [("route", label.rawValue), ("status", String(status))],
                    factory: factory)
            if metrics.requests[status] == nil {
                metrics.requests[status] = counter
                state.routes[label] = metrics
            } else if state.routes[label] == nil {
                state.routes[label] = metrics
            }
            return (counter, metrics.duration, metrics.bytes, variant.map { screenTimer(label: label, variant: $0, in: &state) })
        }
        return ResponseInstruments { bytes, duration in
            requests.increment()
            timer.recordNanoseconds(duration.nanoseconds)
            byScreen?.recordNanoseconds(duration.nanoseconds)
            written.increment(by: bytes)
        }
    }

    /// The latency histogram of a route's responses for the screen of `variant` (`home|*|default`
    /// is `home`'s): one per screen, shared by its variants.
    private func screenTimer(label: MetricsLabel, variant: String, in state: inout State) -> Timer {
        let key = LabelledVariant(label: label, variant: variant)
        if let timer = state.screens[key] { return timer }
        let screen = String(variant.prefix { $0 != "|" })
        let timer = Timer(
            label: "taksi_screen_request_duration_seconds", dimensions: [("route", label.rawValue), ("screen", screen)], factory: factory)
        state.screens[key] = timer
        return timer
    }
}
