import Atomics
import TaksiScreens

/// `taksi_data_degraded_total{screen,source}`: data responses that left a source out (its
/// upstream failed, or answered in a shape the screen does not bind), by screen and source.
///
/// Counted on each event loop apart, as ``ServerMetrics`` counts requests: while an upstream is
/// down every data response of its screens counts, and no lock is shared between loops on their
/// way. Written by ``emit(into:served:)`` rather than registered with the metrics factory, so
/// every upstream source of every screen served is written from the start, at 0 while nothing of
/// it was degraded (an alert's ratio needs no `or vector(0)`), and loading a set registers nothing
/// (swift-prometheus copies a family to add a series: registering one per source at load made a
/// large set's load quadratic).
final class DegradedData: Sendable {
    struct Series: Hashable, Sendable {
        let screen: String
        let source: String
    }

    /// What one thread counted of one series: written by that thread alone.
    private final class Count: Sendable {
        let series: Series
        let value = ManagedAtomic(0)

        init(series: Series) {
            self.series = series
        }
    }

    /// Each thread's counts, by series, and every thread's for ``emit(into:served:)``.
    private let counts = PerThreadTable<Series, Count>()

    /// Counts one data response of `screen` that left each of `sources` out.
    func count(_ sources: [String], of screen: String) {
        for source in sources {
            let series = Series(screen: screen, source: source)
            counts.local(series) { Count(series: series) }.value.wrappingIncrement(ordering: .relaxed)
        }
    }

    /// The upstream (`http`) sources of every screen of `screens`: the series written at 0.
    static func series(of screens: ServedScreenSet) -> Set<Series> {
        var series: Set<Series> = []
        for screen in screens.screens.values {
            for variant in screen.served.values {
                for (name, source) in variant.compiled.dataPlan.sources {
                    if case .http = source { series.insert(Series(screen: variant.compiled.name, source: name)) }
                }
            }
        }
        return series
    }

    /// The family in Prometheus' text format: every thread's counts summed, and every upstream
    /// source of `served` at 0 when nothing of it was counted. Series of sources a reload removed
    /// stay with what they counted (a counter never goes back).
    func emit(into output: inout [UInt8], served: ServedScreenSet) {
        var totals: [Series: Int] = [:]
        for series in Self.series(of: served) { totals[series] = 0 }
        for count in counts.all { totals[count.series, default: 0] += count.value.load(ordering: .relaxed) }
        guard !totals.isEmpty else { return }
        output.append(contentsOf: "# TYPE taksi_data_degraded_total counter\n".utf8)
        for (series, total) in totals.sorted(by: { ($0.key.screen, $0.key.source) < ($1.key.screen, $1.key.source) }) {
            let labels = "screen=\"\(ServerMetrics.escaped(series.screen))\",source=\"\(ServerMetrics.escaped(series.source))\""
            output.append(contentsOf: "taksi_data_degraded_total{\(labels)} \(total)\n".utf8)
        }
    }
}
