import NIOCore

/// Closes connections that hold the server without using it: idle keep-alive connections after
/// ``ConnectionLimits/idleTimeout``, and clients that trickle a request head (slowloris) after
/// ``ConnectionLimits/headerTimeout``. Sits before the HTTP decoder so it sees raw bytes arrive;
/// ``HTTPConnectionHandler`` tells it when a head is complete and when the connection is idle.
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
    private var state = State.idle
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(idleTimeout: TimeAmount, headerTimeout: TimeAmount) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { arm(idleTimeout) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(idleTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state == .idle {
            state = .readingHead
            arm(headerTimeout)
        }
        context.fireChannelRead(data)
    }

    /// A request head is complete: no timeout while it is answered.
    func requestStarted() {
        state = .busy
        timer?.cancel()
        timer = nil
    }

    /// Every request is answered: the idle timeout runs.
    func connectionIdle() {
        guard state != .idle else { return }
        state = .idle
        arm(idleTimeout)
    }

    private func arm(_ timeout: TimeAmount) {
        timer?.cancel()
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            context.close(promise: nil)
        }
    }
}
