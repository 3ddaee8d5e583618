public import Prometheus

/// Every metric family the server exports, with the `# HELP` text `/metrics` gives it: the one
/// list that the exposition, the operations page's table and the Grafana dashboard are checked
/// against. A metric created with a name that is not here fails the metrics test.
public enum MetricFamilies {
    /// One family: its name as exported and what it counts.
    public struct Family: Sendable {
        public let name: String
        public let help: String
    }

    public static let all: [Family] = [
        Family(name: "taksi_http_requests_total", help: "Requests answered, by route and status."),
        Family(name: "taksi_http_request_duration_seconds", help: "Time from a request's head to its response written, by route."),
        Family(
            name: "taksi_screen_request_duration_seconds",
            help: "Time from a request's head to its response written, by route and screen (skeletons, data and actions served)."),
        Family(name: "taksi_http_response_bytes_total", help: "Bytes of responses written, heads included, by route."),
        Family(name: "taksi_open_connections", help: "Client connections open now."),
        Family(name: "taksi_variant_skeletons_total", help: "Skeletons served, by screen and variant."),
        Family(name: "taksi_variant_data_total", help: "Data responses served, by screen and variant."),
        Family(
            name: "taksi_exposures_total",
            help:
                "Exposure records, by result (recorded, repeated, unrecordable, dropped, store_failed, export_failed: recorded and not taken by the collector)."
        ),
        Family(
            name: "taksi_exposure_platforms_refused_total",
            help: "X-Taksi-Platform values left out of exposure records: no platform name (over 32 bytes, or other characters)."),
        Family(name: "taksi_screens_loaded", help: "Screens in the set served now."),
        Family(name: "taksi_screen_variants_loaded", help: "Variants of the screens in the set served now."),
        Family(name: "taksi_screen_reloads_total", help: "Reloads of the screens directory, by result (ok, failed)."),
        Family(name: "taksi_screen_sets_kept", help: "Earlier screen sets kept for skeletons cached before a reload."),
        Family(
            name: "taksi_screen_sets_kept_bytes", help: "Bytes of the earlier screen sets kept, as the heap grew to load and prepare each."),
        Family(
            name: "taksi_skeleton_revisions_total",
            help: "Data and action requests by the skeleton they named (earlier: from a kept set, outdated: 412, absent)."),
        Family(
            name: "taksi_list_pages_total",
            help: "Requests for a list's next page, by result (served; refused: invalid, expired, foreign)."),
        Family(name: "taksi_upstream_requests_total", help: "Calls to upstream APIs, by upstream, source and result."),
        Family(name: "taksi_upstream_duration_seconds", help: "Time an upstream call took, by upstream and source."),
        Family(
            name: "taksi_upstream_token_fetches_total",
            help: "OAuth access tokens fetched for upstreams, by upstream and result (ok, failed)."),
        Family(name: "taksi_data_degraded_total", help: "Data responses with a degraded source, by screen and source."),
        Family(
            name: "taksi_upstream_cache_total",
            help: "Upstream cache lookups, by result (hit, miss, joined, stale, stale_on_error, failed)."),
        Family(name: "taksi_data_memo_lookups_total", help: "Data requests answered from a kept response (hit) or rendered (miss)."),
        Family(name: "taksi_data_memo_dropped_total", help: "Kept responses dropped because an upstream entry they used changed."),
        Family(name: "taksi_data_memo_bytes", help: "Bytes of kept responses, as charged against data_memo_max_bytes."),
        Family(name: "taksi_data_memo_entries", help: "Responses kept (data, and skeletons made per URL)."),
        Family(name: "taksi_action_requests_total", help: "Action submits, by screen, action and outcome."),
        Family(
            name: "taksi_trace_context_refused_total",
            help: "Requests whose traceparent or tracestate was malformed and left out, by header (tracing on)."),
        Family(name: "taksi_access_log_dropped_lines_total", help: "Access log lines dropped because the writer was behind or failed."),
        Family(name: "taksi_fleet_submits_total", help: "Keyed submits through the fleet's store, by outcome."),
        Family(
            name: "taksi_published_bundle", help: "The published bundle this replica serves (1) and the one it replaced (0), by bundle."),
        Family(name: "taksi_published_bundles_refused_total", help: "Published bundles this replica could not load and refused."),
        Family(
            name: "taksi_store_reachable",
            help: "Whether the last look at the fleet's store for published screens succeeded (1) or not (0)."),
        Family(name: "taksi_kept_bundle_loads_total", help: "Published bundles loaded to answer an earlier revision, by outcome."),
    ]

    /// The help texts by family name.
    static let help: [String: String] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.help) })

    /// The exposition with a `# HELP` line before each family's `# TYPE` line (swift-metrics has
    /// no way to give a family its help text, and swift-prometheus refuses two for one name).
    static func withHelp(_ exposition: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(exposition.count + all.count * 96)
        let typePrefix = Array("# TYPE ".utf8)
        var lineStart = 0
        while lineStart < exposition.count {
            let lineEnd = exposition[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? exposition.count
            let line = exposition[lineStart..<lineEnd]
            if line.starts(with: typePrefix) {
                let nameStart = lineStart + typePrefix.count
                let nameEnd = exposition[nameStart..<lineEnd].firstIndex(of: UInt8(ascii: " ")) ?? lineEnd
                let name = String(decoding: exposition[nameStart..<nameEnd], as: UTF8.self)
                if let text = help[name] { output.append(contentsOf: "# HELP \(name) \(text)\n".utf8) }
            }
            output.append(contentsOf: line)
            if lineEnd < exposition.count { output.append(UInt8(ascii: "\n")) }
            lineStart = lineEnd + 1
        }
        return output
    }
}

/// What `GET /metrics` writes: the registry's metrics, then the HTTP server's own (counted on each
/// event loop apart, ``ServerMetrics``).
public struct MetricsExposition: Sendable {
    public let registry: PrometheusCollectorRegistry
    public let server: ServerMetrics?

    public init(registry: PrometheusCollectorRegistry, server: ServerMetrics? = nil) {
        self.registry = registry
        self.server = server
    }

    /// Both, in Prometheus' text format; `served` is the set whose upstream sources the degraded
    /// data counter writes at 0 (``DegradedData``).
    func emit(served: ServedScreenSet) -> [UInt8] {
        var output = registry.emitToBuffer()
        server?.emit(into: &output, served: served)
        return output
    }
}
