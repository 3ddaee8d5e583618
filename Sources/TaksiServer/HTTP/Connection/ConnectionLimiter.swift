import CoreMetrics
import NIOCore

/// Caps open connections on the listening channel: at the cap it stops accepting (new clients
/// wait in the kernel's backlog, as with nginx's `worker_connections`) and resumes when one closes.
/// Also reports the number of open connections.
final class ConnectionLimiter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = any Channel
    typealias OutboundOut = any Channel

    private let maxConnections: Int
    private let gauge: Gauge?
    private var open = 0
    private var heldRead = false

    init(maxConnections: Int, gauge: Gauge?) {
        self.maxConnections = maxConnections
        self.gauge = gauge
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        open += 1
        gauge?.record(open)
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        child.closeFuture.whenComplete { _ in
            loop.execute {
                let (limiter, context) = bound.value
                limiter.connectionClosed(context: context)
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        if open >= maxConnections {
            heldRead = true
        } else {
            context.read()
        }
    }

    private func connectionClosed(context: ChannelHandlerContext) {
        open -= 1
        gauge?.record(open)
        if heldRead, open < maxConnections {
            heldRead = false
            context.read()
        }
    }
}
