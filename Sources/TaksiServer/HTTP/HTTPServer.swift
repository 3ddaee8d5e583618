public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix

/// The listening HTTP server on SwiftNIO. ``start(host:port:group:responder:logger:)`` binds and
/// returns at once; ``shutdown()`` stops accepting, lets in-flight requests finish and closes
/// idle keep-alive connections.
public final class HTTPServer: Sendable {
    private let channel: any Channel
    private let quiescing: ServerQuiescingHelper
    private let logger: Logger

    /// The address the server is bound to (with the real port when 0 was asked for).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// The bound port.
    public var port: Int? { channel.localAddress?.port }

    private init(channel: any Channel, quiescing: ServerQuiescingHelper, logger: Logger) {
        self.channel = channel
        self.quiescing = quiescing
        self.logger = logger
    }

    /// Binds and starts serving.
    public static func start(
        host: String, port: Int, group: any EventLoopGroup, responder: Responder, logger: Logger
    ) async throws -> HTTPServer {
        let quiescing = ServerQuiescingHelper(group: group)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: true
                    )
                    try channel.pipeline.syncOperations.addHandler(HTTPHandler(responder: responder))
                }
            }
            .bind(host: host, port: port)
            .get()
        let server = HTTPServer(channel: channel, quiescing: quiescing, logger: logger)
        let boundPort = channel.localAddress?.port ?? port
        logger.info("listening on http://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)")
        return server
    }

    /// Stops accepting connections, finishes the requests in flight, closes idle connections and
    /// returns when every connection is closed.
    public func shutdown() async {
        logger.info("draining connections")
        let promise = channel.eventLoop.makePromise(of: Void.self)
        quiescing.initiateShutdown(promise: promise)
        try? await promise.futureResult.get()
        logger.info("server stopped")
    }
}
