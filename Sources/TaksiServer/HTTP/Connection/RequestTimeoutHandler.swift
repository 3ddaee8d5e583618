import NIOCore

/// Closes connections that hold the server without using it: idle keep-alive connections after
/// ``ConnectionLimits/idleTimeout``, clients that trickle a request head (slowloris) after
/// ``ConnectionLimits/headerTimeout``, and clients that announce a body and do not send it after
/// ``ConnectionLimits/bodyTimeout`` (the connection handler is told first, so it can answer 408),
/// and clients that stop taking their responses after ``ConnectionLimits/writeTimeout``.
/// Sits before the HTTP decoder so it sees raw bytes arrive; ``HTTPConnectionHandler`` tells it
/// when a head is complete, when a body is awaited and when the connection is idle.
///
/// It also drops what arrives while the connection lingers: after an error response that closes
/// the connection, the client's remaining bytes are read and discarded for
/// ``ConnectionLimits/lingerTimeout``, so closing does not reset the connection before the client
/// has read the answer.
///
/// A request only moves a deadline; one ``ConnectionSweeper`` per event loop closes the
/// connections whose deadline passed. Scheduling a timer per request instead cost a fifth of the
/// server's time in the benchmark (NIO's timer heap is not made for one insert and one removal per
/// request on thousands of connections).
final class RequestTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        /// Waiting for the next request.
        case idle
        /// The first bytes of a head arrived; the rest must follow in time.
        case readingHead
        /// A request's body is awaited; it must arrive in time.
        case readingBody
        /// A request is being answered; its time is bounded elsewhere (upstream timeouts).
        case busy
        /// The answer is sent and the output closed; what arrives is dropped until the deadline.
        case lingering
    }

    /// Told to the connection handler when a request body did not arrive in time.
    struct BodyTimedOut {}

    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let lingerTimeout: TimeAmount
    private let writeTimeout: TimeAmount
    private let sweeper: ConnectionSweeper
    private var state = State.idle
    private var context: ChannelHandlerContext?
    /// When the connection is closed unless something happens; nil while a request is answered.
    private(set) var deadline: NIODeadline?
    /// When the connection is closed unless the client takes some of the responses held for it;
    /// nil while writing goes on. Apart from ``deadline``: a client can be slow to read and to
    /// send at once, and each clock runs on its own.
    private(set) var writeDeadline: NIODeadline?

    init(limits: ConnectionLimits, sweeper: ConnectionSweeper) {
        self.idleTimeout = limits.idleTimeout
        self.headerTimeout = limits.headerTimeout
        self.bodyTimeout = limits.bodyTimeout
        self.lingerTimeout = limits.lingerTimeout
        self.writeTimeout = limits.writeTimeout
        self.sweeper = sweeper
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        deadline = .now() + idleTimeout
        sweeper.add(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweeper.remove(self)
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        sweeper.remove(self)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state == .lingering { return }
        if state == .idle {
            state = .readingHead
            deadline = .now() + headerTimeout
            requestLineBytes = 0
            requestLineComplete = false
            requestStart = nil
        }
        if state == .readingHead, !requestLineComplete {
            // Measure the request line, so a head too large for the decoder can be answered 414
            // when its target is what is too long (the decoder only says "too large"), and keep
            // its first bytes (a reference, not a copy) to tell an unknown method from garbage.
            var buffer = unwrapInboundIn(data)
            let isFirstRead = requestStart == nil
            var changed = false
            if let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                requestLineBytes += end - buffer.readerIndex
                requestLineComplete = true
                changed = Self.downgradeMinorVersion(&buffer, lineEnd: end)
            } else {
                requestLineBytes += buffer.readableBytes
            }
            if isFirstRead { requestStart = buffer }
            if changed {
                context.fireChannelRead(wrapInboundOut(buffer))
                return
            }
        }
        context.fireChannelRead(data)
    }

    /// `HTTP/1.2` (any later 1.x) is read as `HTTP/1.1`, the highest minor version this server
    /// implements, as RFC 9110, 2.5 asks of a recipient; NIO's decoder would refuse it.
    /// - Returns: whether the line was changed.
    private static func downgradeMinorVersion(_ buffer: inout ByteBuffer, lineEnd: Int) -> Bool {
        var end = lineEnd
        if end > buffer.readerIndex, buffer.getInteger(at: end - 1, as: UInt8.self) == UInt8(ascii: "\r") { end -= 1 }
        guard end - buffer.readerIndex >= 9, let minor = buffer.getInteger(at: end - 1, as: UInt8.self),
            (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(minor),
            buffer.getBytes(at: end - 9, length: 8) == Array(" HTTP/1.".utf8)
        else { return false }
        buffer.setInteger(UInt8(ascii: "1"), at: end - 1)
        return true
    }

    /// Bytes of the current request's first line seen so far (the whole line once complete).
    private(set) var requestLineBytes = 0
    private var requestLineComplete = false
    /// The first bytes read of the current request (when it began on an idle connection).
    private var requestStart: ByteBuffer?

    /// The major HTTP version of the current request's first line when it reads
    /// `TOKEN SP TARGET SP HTTP/D.D`; nil when it is not a request line at all. Tells a method or
    /// a version the decoder does not know from bytes that are not HTTP.
    var wellFormedRequestLineMajorVersion: Int? {
        guard let start = requestStart, let end = start.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        var line = Array(start.readableBytesView[start.readerIndex..<end])
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        let token = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(token.contains), !parts[1].isEmpty,
            parts[2].count == 8, parts[2].starts(with: "HTTP/".utf8)
        else { return nil }
        let version = Array(parts[2].dropFirst(5))
        guard digits.contains(version[0]), version[1] == UInt8(ascii: "."), digits.contains(version[2]) else { return nil }
        return Int(version[0] - UInt8(ascii: "0"))
    }

    /// A request head is complete: no timeout while it is answered.
    func requestStarted() {
        state = .busy
        deadline = nil
        // Dropped at once: a receive buffer still referenced cannot be reused for the next read.
        requestStart = nil
    }

    /// A request head announced a body: it must arrive within the body timeout.
    func bodyStarted() {
        requestStart = nil
        state = .readingBody
        deadline = .now() + bodyTimeout
    }

    /// Every request is answered: the idle timeout runs.
    func connectionIdle() {
        guard state != .idle, state != .lingering else { return }
        state = .idle
        deadline = .now() + idleTimeout
    }

    /// Responses wait for the client to read (the channel is not writable): it must take some
    /// within the write timeout. Called again while it still waits, the clock goes on.
    func writesHeld() {
        if writeDeadline == nil { writeDeadline = .now() + writeTimeout }
    }

    /// The client took enough of its responses for writing to go on.
    func writesFlowing() {
        writeDeadline = nil
    }

    /// The last answer is sent: drop what arrives from now on, and close at the linger deadline.
    func linger() {
        state = .lingering
        deadline = .now() + lingerTimeout
    }

    /// Called by the sweeper when a deadline has passed.
    fileprivate func expire(now: NIODeadline) {
        if let writeDeadline, writeDeadline <= now {
            // Nothing can be answered to a client that does not read: close at once.
            sweeper.remove(self)
            context?.close(promise: nil)
            return
        }
        if state == .readingBody, let context {
            // The connection handler answers 408 and closes; if even that does not happen in
            // time, the connection is closed as for any other timeout.
            state = .busy
            deadline = .now() + lingerTimeout
            context.fireUserInboundEventTriggered(BodyTimedOut())
            return
        }
        sweeper.remove(self)
        context?.close(promise: nil)
    }
}

/// The connections of one event loop whose timeouts run, checked a few times a second. Lives on
/// its event loop and is only touched there.
final class ConnectionSweeper {
    private var handlers: [ObjectIdentifier: RequestTimeoutHandler] = [:]
    private var task: RepeatedTask?

    /// Starts sweeping on `loop` every `interval`.
    static func start(on loop: any EventLoop, interval: TimeAmount) async throws -> NIOLoopBound<ConnectionSweeper> {
        try await loop.submit {
            let bound = NIOLoopBound(ConnectionSweeper(), eventLoop: loop)
            bound.value.task = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                bound.value.sweep()
            }
            return bound
        }.get()
    }

    func add(_ handler: RequestTimeoutHandler) {
        handlers[ObjectIdentifier(handler)] = handler
    }

    func remove(_ handler: RequestTimeoutHandler) {
        handlers[ObjectIdentifier(handler)] = nil
    }

    /// Stops sweeping (when the server stops).
    func stop() {
        task?.cancel()
        task = nil
        handlers = [:]
    }

    private func sweep() {
        let now = NIODeadline.now()
        for handler in handlers.values {
            let due = (handler.deadline.map { $0 <= now } ?? false) || (handler.writeDeadline.map { $0 <= now } ?? false)
            if due { handler.expire(now: now) }
        }
    }
}
