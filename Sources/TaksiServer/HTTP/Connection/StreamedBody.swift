import NIOCore

/// A response body written as it is produced, after its head, until the client goes away or the
/// server ends it (server-sent events). The connection knows only this; the preview's events
/// (``PreviewEvents``) are one.
protocol StreamedBody: Sendable {
    /// Written on a stream that has been quiet this long (a comment, for server-sent events), so
    /// proxies keep it open.
    var heartbeatInterval: TimeAmount { get }
    var heartbeat: ByteBuffer { get }
    /// Starts a stream: `send` runs on `loop` with each part produced from now on, until
    /// ``stop(_:)``.
    /// - Returns: the stream's id, and the part written first.
    func start(on loop: any EventLoop, send: @escaping @Sendable (ByteBuffer) -> Void) -> (id: Int, first: ByteBuffer)
    /// Stops sending to the stream `id`.
    func stop(_ id: Int)
}

/// A streamed body being written on a connection: its subscription, its heartbeat, the timer
/// that ends it at ``ConnectionLimits/maxStreamDuration``, and how its parts are framed.
struct OpenStream {
    var id: Int
    var body: any StreamedBody
    var heartbeat: RepeatedTask
    var end: Scheduled<Void>
    /// Parts go in chunks (HTTP/1.1); for HTTP/1.0 the body ends with the connection.
    var chunked: Bool

    /// Stops the heartbeat, the end timer and the parts.
    func stop() {
        heartbeat.cancel()
        end.cancel()
        body.stop(id)
    }

    /// `bytes` as one chunk of a chunked body, or as they are.
    static func frame(_ bytes: ByteBuffer, chunked: Bool, into buffer: inout ByteBuffer) {
        guard chunked else {
            buffer.writeImmutableBuffer(bytes)
            return
        }
        guard bytes.readableBytes > 0 else { return }
        buffer.writeString(String(bytes.readableBytes, radix: 16))
        buffer.writeStaticString("\r\n")
        buffer.writeImmutableBuffer(bytes)
        buffer.writeStaticString("\r\n")
    }
}
