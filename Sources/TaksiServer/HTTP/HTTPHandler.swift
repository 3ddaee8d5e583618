import Logging
import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 requests on one connection. Pipelined requests are answered in order (the
/// pipeline's `HTTPServerPipelineHandler` holds later requests until a response is written).
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let responder: Responder
    private var request: HTTPRequestHead?

    init(responder: Responder) {
        self.responder = responder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            // No endpoint takes a body; it is read and discarded so the connection stays usable.
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let response = responder.respond(method: head.method, uri: head.uri, headers: head.headers)
        var headers = response.headers
        let keepAlive = head.isKeepAlive
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if head.version.major == 1, head.version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let responseHead = HTTPResponseHead(version: head.version, status: response.status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if head.method != .HEAD, response.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A broken connection is the client's business; close it and keep serving the others.
        context.close(promise: nil)
    }
}
