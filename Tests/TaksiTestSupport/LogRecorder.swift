package import Logging
import NIOConcurrencyHelpers

/// Keeps every line logged through its ``logger``, for tests that check what was (not) logged.
package final class LogRecorder: Sendable {
    /// One line as logged.
    package struct Line: Sendable {
        package var level: Logger.Level
        package var message: String
        package var metadata: [String: String]
    }

    private let lines = NIOLockedValueBox<[Line]>([])

    package init() {}

    /// A logger at `trace` whose lines this recorder keeps.
    package var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines logged so far.
    package var recorded: [Line] { lines.withLockedValue { $0 } }

    /// The lines at `level` or more severe.
    package func lines(atLeast level: Logger.Level) -> [Line] { recorded.filter { $0.level >= level } }

    fileprivate func append(_ line: Line) { lines.withLockedValue { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append(Line(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
