import CoreMetrics

/// What the endpoints count beside what they answer, so an endpoint says what happened and not
/// how it is recorded: `taksi_data_degraded_total{screen,source}` for each source a data response
/// left out, `taksi_action_requests_total{screen,action,outcome}` for each action answered.
struct EndpointCounters: Sendable {
    let factory: any MetricsFactory
    /// Where degraded sources are counted: beside the HTTP metrics (``ServerMetrics``), written
    /// with them by `/metrics`; nil to count none.
    let degradedData: DegradedData?

    /// Counts each degraded source of a data response of `screen`.
    func degraded(_ sources: [String], of screen: String) {
        degradedData?.count(sources, of: screen)
    }

    /// Counts an answer of `action` of `screen` with `outcome`.
    func answered(_ action: String, of screen: String, outcome: String) {
        Counter(
            label: "taksi_action_requests_total", dimensions: [("screen", screen), ("action", action), ("outcome", outcome)],
            factory: factory
        ).increment()
    }
}
