public import CoreMetrics
import Dispatch
public import Logging
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The access log: one line per request, written the way nginx's buffered `access_log` is.
///
/// Each event loop formats its lines as bytes into its own ``AccessLogBuffer``, with no lock and no
/// system call; a buffer is handed here when 64 KiB fill, and every second. A serial queue off the
/// event loops writes the chunks out. If that writer falls behind (a full disk, a stalled log
/// collector) by more than ``maxPendingBytes``, the newest chunks are dropped and their lines counted
/// in `taksi_access_log_dropped_lines_total`, so serving never waits on the log.
///
/// ```
/// 2026-11-21T10:15:02.418Z GET /screens/home 200 1276 0.364ms variant=home.yaml id=9f3c-1
/// {"@timestamp":"2026-11-21T10:15:02.418Z","log.level":"info","ecs.version":"8.11.0","event.dataset":"taksi.access","http.request.method":"GET","url.path":"/screens/home","http.response.status_code":200,"http.response.body.bytes":1276,"event.duration":364000,"taksi.variant":"home.yaml","http.request.id":"9f3c-1"}
/// ```
///
/// The JSON lines follow the Elastic Common Schema, as the application log's do (see
/// ``LineLogHandler``): `event.dataset` `taksi.access` tells them apart, `event.duration` is in
/// nanoseconds.
public final class AccessLog: Sendable {
    /// Where the lines go.
    public enum Output: Sendable, Equatable, CustomStringConvertible {
        case standardError
        case standardOutput
        /// A file, appended to and created when missing; reopened by ``reopen()`` (SIGHUP) so a
        /// log rotator can move it away.
        case file(String)

        /// `stderr`, `stdout`, or a path.
        public init(_ text: String) {
            switch text {
            case "stderr", "-": self = .standardError
            case "stdout": self = .standardOutput
            default: self = .file(text)
            }
        }

        public var description: String {
            switch self {
            case .standardError: "stderr"
            case .standardOutput: "stdout"
            case .file(let path): path
            }
        }
    }

    /// Why the access log cannot be written.
    public struct OpenError: Error, CustomStringConvertible {
        public var path: String
        public var errno: Int32

        public var description: String {
            "cannot open the access log \"\(path)\" for appending: \(String(cString: strerror(errno))); "
                + "check that its folder exists and is writable, or set access_log_output to stderr"
        }
    }

    let format: ServerConfiguration.LogFormat
    public let output: Output
    /// Bytes handed over and not yet written past which new chunks are dropped.
    public let maxPendingBytes: Int
    private let queue = DispatchQueue(label: "taksi.access-log")
    private let dropped: Counter
    private let logger: Logger

    /// The writer's state. A lock, not an actor: event loops hand chunks over synchronously and
    /// must never wait on the writer; the lock is held only to count bytes and swap descriptors.
    private struct State {
        var descriptor: Int32
        /// Whether writes must stay within `PIPE_BUF` to be atomic (pipes, terminals).
        var splitsWrites: Bool
        var pendingBytes = 0
        var reportedFailure = false
    }
    private let state: NIOLockedValueBox<State>

    /// - Throws: ``OpenError`` when the file cannot be opened.
    public init(
        format: ServerConfiguration.LogFormat, output: Output, maxPendingBytes: Int = 8 << 20, metrics: any MetricsFactory,
        logger: Logger
    ) throws(OpenError) {
        self.format = format
        self.output = output
        self.maxPendingBytes = maxPendingBytes
        self.dropped = Counter(label: "taksi_access_log_dropped_lines_total", factory: metrics)
        self.logger = logger
        let descriptor = try Self.openOutput(output)
        state = NIOLockedValueBox(State(descriptor: descriptor, splitsWrites: !Self.isRegularFile(descriptor)))
    }

    deinit {
        let descriptor = state.withLockedValue { $0.descriptor }
        if descriptor > 2 { close(descriptor) }
    }

    /// A buffer for one event loop's lines.
    func makeBuffer() -> AccessLogBuffer {
        AccessLogBuffer(log: self)
    }

    /// Takes a chunk of whole lines to write off the event loop, or drops it when the writer is
    /// more than ``maxPendingBytes`` behind.
    func submit(_ chunk: ByteBuffer, lines: Int) {
        let size = chunk.readableBytes
        let accepted = state.withLockedValue { state in
            guard state.pendingBytes + size <= maxPendingBytes else { return false }
            state.pendingBytes += size
            return true
        }
        guard accepted else {
            dropped.increment(by: Int64(lines))
            return
        }
        queue.async { self.writeOut(chunk, lines: lines) }
    }

    /// Reopens the file (after a rotation moved it), once the chunks handed over before are written.
    public func reopen() {
        guard case .file(let path) = output else { return }
        queue.async {
            do {
                let descriptor = try Self.openOutput(self.output)
                let old = self.state.withLockedValue { state in
                    defer {
                        state.descriptor = descriptor
                        state.splitsWrites = !Self.isRegularFile(descriptor)
                        state.reportedFailure = false
                    }
                    return state.descriptor
                }
                close(old)
                self.logger.info("access log reopened", metadata: ["path": .string(path)])
            } catch {
                self.logger.error("access log not reopened; writing on to the old file", metadata: ["cause": "\(error)"])
            }
        }
    }

    /// Returns when every chunk handed over so far is written.
    public func written() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { done.resume() }
        }
    }

    private func writeOut(_ chunk: ByteBuffer, lines: Int) {
        let (descriptor, splits) = state.withLockedValue { ($0.descriptor, $0.splitsWrites) }
        let complete = chunk.withUnsafeReadableBytes { bytes in
            // A pipe keeps a write whole only up to PIPE_BUF bytes: larger ones could interleave with
            // the application log's lines on the same stream, so they are cut at line ends.
            var start = 0
            while start < bytes.count {
                var end = bytes.count
                if splits, end - start > Self.atomicPipeWrite {
                    end = start + Self.atomicPipeWrite
                    while end > start + 1, bytes[end - 1] != UInt8(ascii: "\n") { end -= 1 }
                    if end == start + 1 { end = start + Self.atomicPipeWrite }  // one line longer than that
                }
                guard Self.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: bytes[start..<end])) else { return false }
                start = end
            }
            return true
        }
        let reportFailure = state.withLockedValue { state in
            state.pendingBytes -= chunk.readableBytes
            guard !complete, !state.reportedFailure else { return false }
            state.reportedFailure = true
            return true
        }
        if !complete {
            dropped.increment(by: Int64(lines))
            if reportFailure {
                logger.error(
                    "access log lines cannot be written and are dropped (counted in taksi_access_log_dropped_lines_total)",
                    metadata: ["output": .string(output.description), "cause": .string(String(cString: strerror(errno)))]
                )
            }
        }
    }

    /// `PIPE_BUF` on Linux: a pipe keeps writes up to this size whole.
    private static let atomicPipeWrite = 4096

    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private static func openOutput(_ output: Output) throws(OpenError) -> Int32 {
        switch output {
        case .standardError: return STDERR_FILENO
        case .standardOutput: return STDOUT_FILENO
        case .file(let path):
            let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw OpenError(path: path, errno: errno) }
            return descriptor
        }
    }

    private static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }
}

/// One event loop's access log lines, formatted as bytes and handed to the ``AccessLog`` in large
/// chunks. Used only on its event loop, so it needs no lock; and no run-time exclusivity checks
/// (nothing it calls comes back to it), which cost about 2% of a skeleton's CPU time.
final class AccessLogBuffer {
    /// A chunk is handed over when it holds this many bytes.
    static let chunkBytes = 64 * 1024

    private let log: AccessLog
    private let json: Bool
    @exclusivity(unchecked) private var bytes: ByteBuffer
    @exclusivity(unchecked) private var lines = 0
    /// `2026-11-21T10:15:02.` for the current second, kept so a line formats only its milliseconds.
    @exclusivity(unchecked) private var second = -1
    @exclusivity(unchecked) private var secondPrefix: [UInt8] = []

    fileprivate init(log: AccessLog) {
        self.log = log
        self.json = log.format == .json
        self.bytes = ByteBufferAllocator().buffer(capacity: Self.chunkBytes + 1024)
    }

    /// Adds the line of a request that arrived with `head`.
    func record(
        _ head: RequestHead, status: UInt, bytes written: Int, duration: TimeAmount, variant: String?,
        requestID: (inout ByteBuffer) -> Void
    ) {
        head.withBytes { bytes in
            record(
                method: head.method.rawValue, target: UnsafeBufferPointer(rebasing: bytes[head.target]), status: status, bytes: written,
                duration: duration, variant: variant, requestID: requestID)
        }
    }

    /// Adds one request's line.
    func record(
        method: String, uri: String, status: UInt, bytes written: Int, duration: TimeAmount, variant: String?,
        requestID: (inout ByteBuffer) -> Void
    ) {
        var uri = uri
        uri.withUTF8 { target in
            record(
                method: method, target: target, status: status, bytes: written, duration: duration, variant: variant, requestID: requestID)
        }
    }

    /// Adds one request's line.
    /// - Parameters:
    ///   - target: the request target's bytes; the query is left out (it may hold a user's values).
    ///   - requestID: writes the request id (generated ids are written without building a string).
    private func record(
        method: String, target: UnsafeBufferPointer<UInt8>, status: UInt, bytes written: Int, duration: TimeAmount, variant: String?,
        requestID: (inout ByteBuffer) -> Void
    ) {
        let path = UnsafeBufferPointer(rebasing: target[..<(target.firstIndex(of: UInt8(ascii: "?")) ?? target.count)])
        let nanoseconds = Int(max(0, duration.nanoseconds))
        let milliseconds = currentMilliseconds()
        // All but the id is written straight into the buffer's free space, with one check of the
        // buffer for the whole line, not one a piece: at most 512 bytes besides the values, and an
        // escaped byte takes at most 3.
        let bound = 512 + 3 * (method.utf8.count + path.count + (variant?.utf8.count ?? 0))
        bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { free in
            var line = Line(free)
            if json {
                line.append("{\"@timestamp\":\"")
                line.append(secondPrefix)
                line.appendTimeEnd(milliseconds)
                line.append("\",\"log.level\":\"info\",\"ecs.version\":\"")
                line.append(LineLogHandler.ecsVersion)
                line.append("\",\"event.dataset\":\"taksi.access\",\"http.request.method\":\"")
                line.appendEscaped(method.utf8[...])
                line.append("\",\"url.path\":\"")
                line.appendEscaped(path)
                line.append("\",\"http.response.status_code\":")
                line.appendDecimal(Int(status))
                line.append(",\"http.response.body.bytes\":")
                line.appendDecimal(written)
                line.append(",\"event.duration\":")
                line.appendDecimal(nanoseconds)
                if let variant {
                    line.append(",\"taksi.variant\":\"")
                    line.appendEscaped(variant.utf8[...])
                    line.append("\"")
                }
                line.append(",\"http.request.id\":\"")
            } else {
                line.append(secondPrefix)
                line.appendTimeEnd(milliseconds)
                line.append(" ")
                line.appendEscaped(method.utf8[...])
                line.append(" ")
                line.appendEscaped(path)
                line.append(" ")
                line.appendDecimal(Int(status))
                line.append(" ")
                line.appendDecimal(written)
                line.append(" ")
                line.appendMilliseconds(nanoseconds)
                line.append("ms variant=")
                if let variant { line.appendEscaped(variant.utf8[...]) } else { line.append("-") }
                line.append(" id=")
            }
            return line.count
        }
        let start = bytes.writerIndex
        requestID(&bytes)
        escapeWritten(from: start)
        if json { bytes.writeStaticString("\"}\n") } else { bytes.writeStaticString("\n") }
        lines += 1
        if bytes.readableBytes >= Self.chunkBytes { handOver() }
    }

    /// Hands the lines so far to the writer (when a chunk is full, every second, and at shutdown).
    func handOver() {
        guard lines > 0 else { return }
        log.submit(bytes, lines: lines)
        bytes = ByteBufferAllocator().buffer(capacity: Self.chunkBytes + 1024)
        lines = 0
    }

    /// The milliseconds of the current time; ``secondPrefix`` is made its second's
    /// (`2026-11-21T10:15:02.`, UTC) when the second changed.
    private func currentMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if now.tv_sec != second {
            second = now.tv_sec
            var seconds = time_t(now.tv_sec)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            func digits(_ value: Int32, _ count: Int) -> [UInt8] {
                var value = Int(value)
                var result = [UInt8](repeating: 48, count: count)
                for index in stride(from: count - 1, through: 0, by: -1) {
                    result[index] = UInt8(48 + value % 10)
                    value /= 10
                }
                return result
            }
            secondPrefix =
                digits(parts.tm_year + 1900, 4) + [45] + digits(parts.tm_mon + 1, 2) + [45] + digits(parts.tm_mday, 2) + [84]
                + digits(parts.tm_hour, 2) + [58] + digits(parts.tm_min, 2) + [58] + digits(parts.tm_sec, 2) + [46]
        }
        return Int(now.tv_nsec) / 1_000_000
    }

    /// A line's bytes, written into free space the caller made large enough for it.
    private struct Line {
        private let free: UnsafeMutableRawBufferPointer
        private(set) var count = 0

        init(_ free: UnsafeMutableRawBufferPointer) {
            self.free = free
        }

        mutating func append(_ byte: UInt8) {
            free[count] = byte
            count += 1
        }

        mutating func append(_ text: StaticString) {
            text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
        }

        mutating func append(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { append($0) }
        }

        private mutating func append(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: free[count..<(count + bytes.count)]).copyMemory(from: bytes)
            count += bytes.count
        }

        /// `418Z`: the milliseconds after a second's prefix.
        mutating func appendTimeEnd(_ milliseconds: Int) {
            append(UInt8(48 + milliseconds / 100))
            append(UInt8(48 + milliseconds / 10 % 10))
            append(UInt8(48 + milliseconds % 10))
            append(UInt8(ascii: "Z"))
        }

        mutating func appendDecimal(_ value: Int) {
            if value < 0 { append(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var digits = 1
            var scale: UInt = 10
            while digits < 20, magnitude >= scale {
                digits += 1
                scale = scale &* 10
            }
            for index in stride(from: count + digits - 1, through: count, by: -1) {
                free[index] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
                magnitude /= 10
            }
            count += digits
        }

        /// `0.364`: milliseconds with three decimals, from integer nanoseconds.
        mutating func appendMilliseconds(_ nanoseconds: Int) {
            let microseconds = nanoseconds / 1000
            appendDecimal(microseconds / 1000)
            append(UInt8(ascii: "."))
            let fraction = microseconds % 1000
            append(UInt8(48 + fraction / 100))
            append(UInt8(48 + fraction / 10 % 10))
            append(UInt8(48 + fraction % 10))
        }

        /// Writes a value so that a line stays one line and one field in either format: bytes
        /// outside visible ASCII, and `"` and `\`, become `%XX` (so a path reads as the URL it was).
        mutating func appendEscaped(_ text: some Sequence<UInt8>) {
            // A string's bytes are read where they lie, and copied at once when none needs escaping
            // (the usual path and variant): a walk of its UTF-8 view a byte at a time cost more.
            let contiguous: Void? = text.withContiguousStorageIfAvailable { bytes in
                if bytes.allSatisfy(AccessLogBuffer.isPlain) {
                    append(UnsafeRawBufferPointer(bytes))
                } else {
                    appendEscapedBytes(bytes)
                }
            }
            if contiguous == nil { appendEscapedBytes(text) }
        }

        private mutating func appendEscapedBytes(_ text: some Sequence<UInt8>) {
            for byte in text {
                guard !AccessLogBuffer.isPlain(byte) else {
                    append(byte)
                    continue
                }
                append(UInt8(ascii: "%"))
                append(AccessLogBuffer.hexDigits[Int(byte >> 4)])
                append(AccessLogBuffer.hexDigits[Int(byte & 0xF)])
            }
        }
    }

    /// Escapes in place what was written since `start` (the request id is written by a closure).
    private func escapeWritten(from start: Int) {
        let end = bytes.writerIndex
        // Checked where it lies (generated ids always pass); copied only to be rewritten.
        guard !bytes.readableBytesView[start..<end].allSatisfy(Self.isPlain), let written = bytes.getBytes(at: start, length: end - start)
        else { return }
        bytes.moveWriterIndex(to: start)
        bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: 3 * written.count) { free in
            var line = Line(free)
            line.appendEscaped(written)
            return line.count
        }
    }

    fileprivate static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Visible ASCII but `"` and `\`, which neither format writes as they are.
    fileprivate static func isPlain(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
