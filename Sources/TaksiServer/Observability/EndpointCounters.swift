import CoreMetrics

/// What the endpoints count beside what they answer, so an endpoint says what happened and not
/// how it is recorded: `taksi_data_degraded_total{screen,source}` for each source a data response
/// left out, `taksi_action_requests_total{screen,action,outcome}` for each action answered.
struct EndpointCounters: Sendable {
    let factory: any MetricsFactory

    /// Counts each degraded source of a data response of `screen`.
    func degraded(_ sources: [String], of screen: String) {
        for source in sources {
            Counter(label: "taksi_data_degraded_total", dimensions: [("screen", screen), ("source", source)], factory: factory)
                .increment()
        }
    }

    /// Counts an answer of `action` of `screen` with `outcome`.
    func answered(_ action: String, of screen: String, outcome: String) {
        Counter(
            label: "taksi_action_requests_total", dimensions: [("screen", screen), ("action", action), ("outcome", outcome)],
            factory: factory
        ).increment()
    }
}
