public import CoreMetrics
public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The listening HTTP server on SwiftNIO. ``start(host:port:group:responder:logger:)`` binds and
/// returns at once; ``shutdown()`` stops accepting, lets in-flight requests finish and closes
/// idle keep-alive connections.
public final class HTTPServer: Sendable {
    private let channel: any Channel
    private let quiescing: ServerQuiescingHelper
    private let sweepers: [NIOLoopBound<ConnectionSweeper>]
    /// Each event loop's access log buffer, handed to the writer every second and at shutdown.
    private let accessLogBuffers: [NIOLoopBound<AccessLogBuffer>]
    private let accessLogFlushes: [RepeatedTask]
    /// Where the access log is written, if it is on.
    public let accessLog: AccessLog?
    private let logger: Logger

    /// The address the server is bound to (with the real port when 0 was asked for).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// The bound port.
    public var port: Int? { channel.localAddress?.port }

    private init(
        channel: any Channel, quiescing: ServerQuiescingHelper, sweepers: [NIOLoopBound<ConnectionSweeper>],
        accessLog: AccessLog?, accessLogBuffers: [NIOLoopBound<AccessLogBuffer>], accessLogFlushes: [RepeatedTask], logger: Logger
    ) {
        self.channel = channel
        self.quiescing = quiescing
        self.sweepers = sweepers
        self.accessLog = accessLog
        self.accessLogBuffers = accessLogBuffers
        self.accessLogFlushes = accessLogFlushes
        self.logger = logger
    }

    /// Binds and starts serving.
    /// - Parameters:
    ///   - limits: connection cap, timeouts and request size limits.
    ///   - accessLog: where one line per request goes, or nil for none. Each event loop buffers its
    ///     lines and hands them over when 64 KiB fill and every second; ``shutdown(drainTimeout:)``
    ///     writes what is left.
    ///   - observer: told about every response (metrics).
    public static func start(
        host: String, port: Int, group: any EventLoopGroup, responder: Responder, limits: ConnectionLimits = .init(),
        accessLog: AccessLog? = nil, observer: (any RequestObserver)? = nil, openConnections: Gauge? = nil, logger: Logger
    ) async throws -> HTTPServer {
        let quiescing = ServerQuiescingHelper(group: group)
        // One sweeper per event loop closes the connections whose timeouts passed.
        let shortest =
            [limits.idleTimeout, limits.headerTimeout, limits.bodyTimeout, limits.writeTimeout, limits.lingerTimeout].map(\.nanoseconds)
            .min() ?? 0
        let sweepInterval = TimeAmount.nanoseconds(max(10_000_000, min(1_000_000_000, shortest / 4)))
        var sweepers: [ObjectIdentifier: NIOLoopBound<ConnectionSweeper>] = [:]
        for loop in group.makeIterator() {
            sweepers[ObjectIdentifier(loop)] = try await ConnectionSweeper.start(on: loop, interval: sweepInterval)
        }
        let allSweepers = sweepers
        var accessLogBuffers: [ObjectIdentifier: NIOLoopBound<AccessLogBuffer>] = [:]
        var accessLogFlushes: [RepeatedTask] = []
        if let accessLog {
            for loop in group.makeIterator() {
                let buffer = try await loop.submit { NIOLoopBound(accessLog.makeBuffer(), eventLoop: loop) }.get()
                accessLogBuffers[ObjectIdentifier(loop)] = buffer
                accessLogFlushes.append(
                    loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in buffer.value.handOver() }
                )
            }
        }
        let allAccessLogBuffers = accessLogBuffers
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // One connection accepted per read, so the cap below is exact: with NIO's default of
            // four, a read at the cap could accept three more (nginx's multi_accept is off too).
            .serverChannelOption(.maxMessagesPerRead, value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionLimiter(maxConnections: limits.maxConnections, gauge: openConnections)
                    )
                }
            }
            // A TCP-level option: `.socketOption(.tcp_nodelay)` would set SOL_SOCKET option 1, which is
            // SO_DEBUG, and fails for a non-root user, resetting every connection (the container
            // check found it).
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // Small reads, and a small allowance of unsent responses, bound what one client that does
            // not read can cost: in the slow-reader flood (300 such clients) the server grew by
            // about 58 MB with 8 KiB reads and NIO's default 64 KiB allowance.
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 512, initial: 2048, maximum: 4096))
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 16 * 1024, high: 32 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let sweeper = allSweepers[ObjectIdentifier(channel.eventLoop)]?.value else {
                        throw ChannelError.inappropriateOperationForState
                    }
                    let accessLog = allAccessLogBuffers[ObjectIdentifier(channel.eventLoop)]?.value
                    try channel.pipeline.syncOperations.addHandlers(
                        HTTPConnectionHandler.handlers(
                            responder: responder, limits: limits, sweeper: sweeper, accessLog: accessLog, observer: observer
                        )
                    )
                }
            }
            .bind(host: host, port: port)
            .flatMapErrorThrowing { error in throw ServerStartError(host: host, port: port, cause: error) }
            .get()
        let server = HTTPServer(
            channel: channel, quiescing: quiescing, sweepers: Array(sweepers.values), accessLog: accessLog,
            accessLogBuffers: Array(accessLogBuffers.values), accessLogFlushes: accessLogFlushes, logger: logger
        )
        let boundPort = channel.localAddress?.port ?? port
        logger.info("listening on http://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)")
        return server
    }

    /// Stops accepting connections, finishes the requests in flight, closes idle connections and
    /// returns when every connection is closed, or after `drainTimeout` (the connections still open
    /// then are closed when the event loops shut down).
    public func shutdown(drainTimeout: Duration = .seconds(30)) async {
        logger.info("draining connections", metadata: ["timeout_s": .stringConvertible(drainTimeout.components.seconds)])
        let loop = channel.eventLoop
        let drained = loop.makePromise(of: Bool.self)
        let quiesced = loop.makePromise(of: Void.self)
        quiesced.futureResult.whenComplete { _ in drained.succeed(true) }
        // Whichever comes first wins; completing a promise twice is a no-op.
        let timer = loop.scheduleTask(in: .nanoseconds(Int64(drainTimeout / .nanoseconds(1)))) { drained.succeed(false) }
        quiescing.initiateShutdown(promise: quiesced)
        let finished = (try? await drained.futureResult.get()) ?? true
        timer.cancel()
        for sweeper in sweepers {
            sweeper.eventLoop.execute { sweeper.value.stop() }
        }
        for flush in accessLogFlushes { flush.cancel() }
        await flushAccessLog()
        if finished {
            logger.info("server stopped")
        } else {
            logger.warning("drain timed out; closing the remaining connections")
        }
    }
}

extension HTTPServer {
    /// Writes every access log line buffered so far and returns when they are written (shutdown
    /// calls it after the drain; tests, to read the log).
    public func flushAccessLog() async {
        guard let accessLog else { return }
        await handOverAccessLog()
        await accessLog.written()
    }

    /// Reopens the access log file after a rotation (SIGHUP): the lines buffered before go to the
    /// old file, the lines after to the new one.
    public func reopenAccessLog() async {
        guard let accessLog else { return }
        await handOverAccessLog()
        accessLog.reopen()
        await accessLog.written()
    }

    /// Hands every event loop's buffered lines to the writer.
    private func handOverAccessLog() async {
        for buffer in accessLogBuffers {
            try? await buffer.eventLoop.submit { buffer.value.handOver() }.get()
        }
    }
}

/// The server could not listen: said the way a person fixes it, not as a socket error.
public struct ServerStartError: Error, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The underlying error (NIO's), for logs.
    public var cause: any Error

    public var description: String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        switch (cause as? IOError)?.errnoCode {
        case EADDRINUSE:
            return
                "cannot listen on \(address): the port is already in use by another process; stop it, or choose another port with --port (or \"port\" in config.json, or TAKSI_PORT)"
        case EACCES:
            return "cannot listen on \(address): permission denied; ports below 1024 need privileges, so use a port like 8080"
        case EADDRNOTAVAIL:
            return
                "cannot listen on \(address): no network interface has that address; use 127.0.0.1, 0.0.0.0 or an address of this machine"
        default:
            return "cannot listen on \(address): \(cause)"
        }
    }
}
