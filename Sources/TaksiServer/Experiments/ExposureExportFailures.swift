public import CoreMetrics
public import Logging

/// The exposure exporter's diagnostic log handler: passes every message on to the application's
/// log, and counts the records the collector did not take in `taksi_exposures_total{result=
/// "export_failed"}`. swift-otel's batch processor tells its caller nothing of a failed export;
/// it says so in its diagnostic log, with the batch's size ("Failed to export batch.",
/// `batch_size`), the records it dropped from a full queue (`dropped_count`) and, from the OTLP
/// exporter, those a collector rejected in a partial success (`rejected_log_records`).
/// `recorded` counts a record when it is handed to the exporter; `export_failed`, those of them
/// that never reached the collector.
public struct ExposureExportFailures: LogHandler {
    private var forwarded: any LogHandler
    private let failed: Counter

    /// - Parameters:
    ///   - logger: where the exporter's messages go on to.
    ///   - metrics: where the counter is created.
    public init(forwardingTo logger: Logger, metrics: any MetricsFactory) {
        forwarded = logger.handler
        failed = Counter(label: "taksi_exposures_total", dimensions: [("result", "export_failed")], factory: metrics)
    }

    /// The number of records `event` says were lost, with the handler's own metadata (where
    /// swift-otel puts `batch_size`); 0 for any other message.
    static func lost(in event: LogEvent, metadata: Logger.Metadata) -> Int {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        func count(_ key: String) -> Int {
            guard case .string(let text) = merged[key] ?? .string("") else { return 0 }
            return Int(text).map { max($0, 0) } ?? 0
        }
        let message = event.message.description
        if message == "Failed to export batch." { return count("batch_size") }
        if message.hasPrefix("Log records were dropped") { return count("dropped_count") }
        if message == "Partial success" { return count("rejected_log_records") }
        return 0
    }

    public func log(event: LogEvent) {
        let lost = Self.lost(in: event, metadata: metadata)
        if lost > 0 { failed.increment(by: lost) }
        guard event.level >= forwarded.logLevel else { return }
        var event = event
        if !metadata.isEmpty { event.metadata = metadata.merging(event.metadata ?? [:]) { _, new in new } }
        forwarded.log(event: event)
    }

    /// Kept here, not in the forwarded handler (which may keep none): swift-otel sets a batch's
    /// size this way.
    public var metadata: Logger.Metadata = [:]

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Warnings at least, where swift-otel says what it lost, whatever the log shows; what is below
    /// the forwarded log's level is not passed on.
    public var logLevel: Logger.Level {
        get { min(forwarded.logLevel, .warning) }
        set { forwarded.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { forwarded.metadataProvider }
        set { forwarded.metadataProvider = newValue }
    }
}
