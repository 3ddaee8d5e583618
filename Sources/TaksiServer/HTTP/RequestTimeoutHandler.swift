import NIOCore

/// Closes connections that hold the server without using it: idle keep-alive connections after
/// ``ConnectionLimits/idleTimeout``, and clients that trickle a request head (slowloris) after
/// ``ConnectionLimits/headerTimeout``. Sits before the HTTP decoder so it sees raw bytes arrive;
/// ``HTTPConnectionHandler`` tells it when a head is complete and when the connection is idle.
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
        /// A request is being answered; its time is bounded elsewhere (upstream timeouts).
        case busy
    }

    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    private let sweeper: ConnectionSweeper
    private var state = State.idle
    private var context: ChannelHandlerContext?
    /// When the connection is closed unless something happens; nil while a request is answered.
    private(set) var deadline: NIODeadline?

    init(idleTimeout: TimeAmount, headerTimeout: TimeAmount, sweeper: ConnectionSweeper) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
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
        if state == .idle {
            state = .readingHead
            deadline = .now() + headerTimeout
        }
        context.fireChannelRead(data)
    }

    /// A request head is complete: no timeout while it is answered.
    func requestStarted() {
        state = .busy
        deadline = nil
    }

    /// Every request is answered: the idle timeout runs.
    func connectionIdle() {
        guard state != .idle else { return }
        state = .idle
        deadline = .now() + idleTimeout
    }

    /// Called by the sweeper when the deadline has passed.
    fileprivate func expire() {
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
            if let deadline = handler.deadline, deadline <= now { handler.expire() }
        }
    }
}
