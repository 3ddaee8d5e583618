public import Foundation
public import Logging
import NIOConcurrencyHelpers
import TaksiSchema

/// Writes each log record as one line, in the application log's format, with the timestamp the
/// access log uses too (UTC, milliseconds), so the lines of both logs sort and join on one clock.
///
/// `text`, laid out as swift-log's `StreamLogHandler` lays it out:
///
/// ```
/// 2026-11-21T02:37:38.120Z error taksi-server: cause=answered HTTP 500 request_id=9f3c-1 screen=feed source=news [TaksiServer] upstream failed; its components are degraded
/// ```
///
/// `json`, one object per line in the layout of the Elastic Common Schema's logging spec (ECS
/// 8.11: `@timestamp`, `log.level`, `message`, `ecs.version`, dotted field names), which the access
/// log's JSON lines follow too, so a collector reads both with one parser. Metadata keep their
/// type (a number stays a number); the request id is `http.request.id`, the trace's ids
/// `trace.id` and `span.id`, the rest `taksi.<key>`:
///
/// ```json
/// {"@timestamp":"2026-11-21T02:37:38.120Z","ecs.version":"8.11.0","http.request.id":"9f3c-1","log.level":"error","log.logger":"TaksiServer","message":"upstream failed; its components are degraded","service.name":"taksi-server","taksi.screen":"feed"}
/// ```
public struct LineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: ServerConfiguration.LogFormat
    private let output: FileHandle

    /// - Parameter output: standard error by default.
    public init(label: String, format: ServerConfiguration.LogFormat, output: FileHandle = .standardError) {
        self.label = label
        self.format = format
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let line: [UInt8]
        switch format {
        case .text:
            var text = "\(Self.timestamp()) \(event.level) \(label):"
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
            text += " [\(event.source)] \(event.message)\n"
            line = Array(text.utf8)
        case .json:
            var record: [String: JSONValue] = [
                "@timestamp": .string(Self.timestamp()), "log.level": .string(event.level.rawValue), "service.name": .string(label),
                "message": .string(event.message.description), "log.logger": .string(event.source),
                "ecs.version": .string(Self.ecsVersion.description),
            ]
            for (key, value) in merged { record[Self.ecsField(key)] = Self.json(value) }
            line = JSONWriter.bytes(.object(record)) + [10]
        }
        // One write per line under a lock, so lines from different threads never interleave.
        Self.lock.withLock { output.write(Data(line)) }
    }

    private static let lock = NIOLock()

    /// The version of the Elastic Common Schema the JSON lines of both logs follow (the access
    /// log writes it as bytes, hence a static string).
    static let ecsVersion: StaticString = "8.11.0"

    /// A metadata key's field: ECS's own where it has one, else under `taksi.`.
    static func ecsField(_ key: String) -> String {
        switch key {
        case "request_id": "http.request.id"
        case "trace_id": "trace.id"
        case "span_id": "span.id"
        default: "taksi." + key
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        // Numbers and truth values keep their type, so a collector can sum and compare them.
        case .stringConvertible(let number as any BinaryInteger): .number(Double(number))
        case .stringConvertible(let number as Double): number.isFinite ? .number(number) : .string(number.description)
        case .stringConvertible(let truth as Bool): .bool(truth)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    /// Now, as the access log writes it too: `2026-11-21T02:37:38.120Z`.
    static func timestamp() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var seconds = time_t(time.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(time.tv_nsec) / 1_000_000
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }
}
