public import CoreMetrics
import NIOConcurrencyHelpers
public import NIOCore

/// The HTTP metrics: requests by route and status, latency by route, bytes written by route, and
/// open connections. Metric objects are made once per route and status and kept, so a request
/// costs a dictionary lookup and a few atomic updates.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `taksi_http_requests_total` | counter | `route`, `status` |
/// | `taksi_http_request_duration_seconds` | histogram | `route` |
/// | `taksi_http_response_bytes_total` | counter | `route` |
/// | `taksi_open_connections` | gauge | |
public final class ServerMetrics: RequestObserver {
    private struct RouteMetrics {
        let duration: Timer
        let bytes: Counter
        var requests: [UInt: Counter]
    }

    private let factory: any MetricsFactory
    // A lock, not an actor: observations are made synchronously on the event loops.
    private let routes = NIOLockedValueBox<[String: RouteMetrics]>([:])
    /// Open client connections.
    public let openConnections: Gauge

    public init(factory: any MetricsFactory) {
        self.factory = factory
        self.openConnections = Gauge(label: "taksi_open_connections", factory: factory)
    }

    public func responded(route: String, status: UInt, bytes: Int, duration: TimeAmount) {
        let (requests, timer, written) = routes.withLockedValue { routes in
            var metrics =
                routes[route]
                ?? RouteMetrics(
                    duration: Timer(label: "taksi_http_request_duration_seconds", dimensions: [("route", route)], factory: factory),
                    bytes: Counter(label: "taksi_http_response_bytes_total", dimensions: [("route", route)], factory: factory),
                    requests: [:]
                )
            let counter =
                metrics.requests[status]
                ?? Counter(
                    label: "taksi_http_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory)
            if metrics.requests[status] == nil {
                metrics.requests[status] = counter
                routes[route] = metrics
            } else if routes[route] == nil {
                routes[route] = metrics
            }
            return (counter, metrics.duration, metrics.bytes)
        }
        requests.increment()
        timer.recordNanoseconds(duration.nanoseconds)
        written.increment(by: bytes)
    }
}
