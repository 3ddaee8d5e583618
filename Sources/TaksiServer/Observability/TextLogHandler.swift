public import Foundation
public import Logging
import NIOConcurrencyHelpers

/// Writes each log record as one line of text, laid out as swift-log's `StreamLogHandler` lays it
/// out, with the timestamp the access log and the JSON format use (UTC, milliseconds), so the lines
/// of both logs sort and join on one clock:
///
/// ```
/// 2026-11-21T02:37:38.120Z error taksi-server: cause=answered HTTP 500 request_id=9f3c-1 screen=feed source=news [TaksiServer] upstream failed; its components are degraded
/// ```
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let output: FileHandle

    /// - Parameter output: standard error by default.
    public init(label: String, output: FileHandle = .standardError) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var line = "\(JSONLogHandler.timestamp()) \(event.level) \(label):"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        // One write per line under a lock, so lines from different threads never interleave.
        Self.lock.withLock { output.write(Data(line.utf8)) }
    }

    private static let lock = NIOLock()
}
