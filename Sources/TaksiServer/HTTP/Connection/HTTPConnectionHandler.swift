import Foundation
public import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 on one connection: asks ``HTTPConnectionStateMachine`` what to do with each
/// event of the channel and does it: reads, answers through the ``Responder`` (on the event loop,
/// or off it for a pending reply), writes precomputed responses as bytes, streams a streamed body,
/// and closes. The rules (order, backpressure, limits, how the connection ends) are the machine's.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let responder: Responder
    private let limits: ConnectionLimits
    private let timeouts: RequestTimeoutHandler
    private let accessLog: AccessLogBuffer?
    private let observer: (any RequestObserver)?

    private var machine: HTTPConnectionStateMachine
    private var ids = RequestIDs()
    private var date = HTTPDate()
    /// The streamed body being written, while the machine is `.streaming`.
    private var stream: OpenStream?
    /// Responses were written since the last flush.
    private var needsFlush = false

    init(
        responder: Responder, limits: ConnectionLimits, timeouts: RequestTimeoutHandler, accessLog: AccessLogBuffer?,
        observer: (any RequestObserver)?
    ) {
        self.responder = responder
        self.limits = limits
        self.timeouts = timeouts
        self.accessLog = accessLog
        self.observer = observer
        self.machine = HTTPConnectionStateMachine(limits: limits)
    }

    /// NIO's request decoder, bounded a little above our own limits so an oversized head is
    /// refused early. Leftover bytes are forwarded when it is removed, so it can be replaced
    /// after an upgrade offer (see ``replaceDecoder(context:)``).
    static func makeDecoder(limits: ConnectionLimits) -> ByteToMessageHandler<HTTPRequestDecoder> {
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderListSize = limits.maxURILength + limits.maxHeaderBytes + 4096
        decoderLimits.maxHeaderFieldSize = decoderLimits.maxHeaderListSize
        return ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: decoderLimits))
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard machine.readsRequests else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            receivedHead(head, context: context)
        case .body(let part):
            if !machine.receivedBody(part) { reject(.bodyTooLarge(limit: limits.maxBodyBytes), context: context) }
        case .end:
            guard let request = machine.receivedEnd() else { return }
            timeouts.requestStarted()
            if request.offersUpgrade { replaceDecoder(context: context) }
            answerWaiting(context: context)
        }
    }

    /// A request head: what must be refused is decided now, and answered at once when it does
    /// not depend on the body (which is then never read, nor asked for with `100 Continue`).
    private func receivedHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let (request, verdict) = ConnectionRequest.read(head, limits: limits, ids: &ids)
        machine.receivedHead(request)
        if verdict.expectsContinue, machine.hasNothingAhead {
            if let refusal = responder.refusal(beforeBodyOf: head.method, uri: head.uri, headers: head.headers) {
                // Refused whatever the body: the final answer now, and the body never asked for.
                reject(refusal, context: context)
                return
            }
            // The client waits for this before it sends the body. With answers still to write
            // ahead of it, it is left out (RFC 9110, 10.1.1 lets the client go on).
            var interim = context.channel.allocator.buffer(capacity: 25)
            interim.writeStaticString("HTTP/1.1 100 Continue\r\n\r\n")
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(interim)), promise: nil)
        }
        if verdict.answersBeforeBody, let rejection = verdict.rejection {
            reject(rejection, context: context)
            return
        }
        // A body the server does not read yet (bodies before it wait for their answers) has no
        // clock until reading goes on: the wait is the server's, not the client's.
        if verdict.hasBody, !machine.holdsBody(isWritable: context.channel.isWritable) {
            timeouts.bodyStarted()
        } else {
            timeouts.requestStarted()
        }
    }

    /// Answers the request being read (or a placeholder for bytes that never made one) with
    /// `rejection`, after the requests before it; nothing more is read, and the connection closes
    /// once the answer is written.
    private func reject(_ rejection: APIError, context: ChannelHandlerContext) {
        machine.reject(rejection) { ConnectionRequest.placeholder(ids: &ids) }
        timeouts.requestStarted()
        answerWaiting(context: context)
        flushIfNeeded(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested(isWritable: context.channel.isWritable) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            timeouts.writesFlowing()
            answerWaiting(context: context)
            flushIfNeeded(context: context)
        } else {
            // The client is not taking its responses; it has ``ConnectionLimits/writeTimeout`` to.
            timeouts.writesHeld()
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is RequestTimeoutHandler.BodyTimedOut {
            if machine.bodyTimedOut() { reject(.bodyTimeout, context: context) }
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        switch machine.quiesce() {
        case .none: break
        case .close: context.close(promise: nil)
        case .endStream: endStream(context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let parserError = error as? HTTPParserError
        switch machine.errorCaught(isParserError: parserError != nil) {
        case .ignore:
            return
        case .close:
            // A broken connection is the client's business; close it and keep serving the others.
            context.close(promise: nil)
        case .reject:
            // Answer the bytes that are not HTTP after the requests before them, then close.
            reject(rejection(for: parserError), context: context)
        }
    }

    /// The answer to bytes NIO's decoder could not read: the most precise the first line allows.
    private func rejection(for error: HTTPParserError?) -> APIError {
        switch error {
        case .headerOverflow?:
            // Too large for the decoder: the target, when the request line alone is over its limit.
            timeouts.requestLineBytes > limits.maxURILength
                ? .uriTooLong(limit: limits.maxURILength) : .headersTooLarge(limit: limits.maxHeaderBytes)
        case .invalidMethod? where timeouts.wellFormedRequestLineMajorVersion == 1: .methodNotImplemented(nil)
        case .invalidVersion? where (timeouts.wellFormedRequestLineMajorVersion ?? 1) != 1: .versionNotSupported
        default: .malformedRequest
        }
    }

    /// Upgrades are not taken (HTTP/2 belongs at the load balancer), but NIO's decoder stops
    /// parsing after an upgrade offer, so the connection would answer nothing more. It is replaced
    /// by a fresh one; the bytes the old one holds are forwarded to it on removal.
    private func replaceDecoder(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        guard let old = try? pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        do {
            try pipeline.addHandler(Self.makeDecoder(limits: limits), position: .after(old.handler))
            // Requests in the forwarded bytes are answered outside a read, so nothing else flushes them.
            let removed = context.eventLoop.makePromise(of: Void.self)
            removed.futureResult.assumeIsolated().whenComplete { _ in self.flushIfNeeded(context: context) }
            pipeline.removeHandler(context: old, promise: removed)
        } catch {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed()
        stream?.stop()
        stream = nil
        context.fireChannelInactive()
    }

    // MARK: Answering

    /// Answers waiting requests in order while the client keeps reading; then reads on if a read
    /// is owed, and starts the idle clock when nothing is left to do.
    private func answerWaiting(context: ChannelHandlerContext) {
        while var request = machine.nextToAnswer(isWritable: context.channel.isWritable) {
            if let tracing = responder.tracing,
                let span = tracing.requestSpan(method: request.head.method, target: request.head.uri, headers: request.head.headers)
            {
                request.trace = RequestTrace(span: span, tracing: tracing)
            }
            switch reply(to: request) {
            case .ready(let response):
                write(response, for: request, context: context)
            case .pending(let work):
                wait(for: work, of: request, context: context)
                return
            }
        }
        if machine.owedRead(isWritable: context.channel.isWritable) {
            // A body held back gets its clock now that it is read.
            if machine.isReceiving { timeouts.bodyStarted() }
            context.read()
        }
        if machine.isIdle { timeouts.connectionIdle() }
    }

    /// The responder's reply, or the rejection decided while reading.
    private func reply(to request: ConnectionRequest) -> Reply {
        if let rejection = request.rejection { return .ready(HTTPResponse(error: rejection)) }
        var http = HTTPRequest(method: request.head.method, uri: request.head.uri, headers: request.head.headers, body: request.body)
        http.id = ids.reference(request.id)
        http.trace = request.trace
        return responder.respond(to: http)
    }

    /// Waits off the event loop for a reply made there, then writes it and goes on answering.
    private func wait(
        for work: @escaping @Sendable () async -> HTTPResponse, of request: ConnectionRequest, context: ChannelHandlerContext
    ) {
        let promise = context.eventLoop.makePromise(of: HTTPResponse.self)
        promise.completeWithTask(work)
        promise.futureResult.assumeIsolated().whenSuccess { response in
            guard self.machine.replyArrived(), context.channel.isActive else { return }
            self.write(response, for: request, context: context)
            self.answerWaiting(context: context)
            self.flushIfNeeded(context: context)
        }
    }

    private func write(_ response: HTTPResponse, for request: ConnectionRequest, context: ChannelHandlerContext) {
        if let body = response.stream, request.head.method != .HEAD {
            startStream(response, body: body, for: request, context: context)
            return
        }
        let framing = machine.writing()
        let sendsBody = request.head.method != .HEAD && response.body.readableBytes > 0
        // A small body goes in the same buffer as the head: one write through the pipeline and one
        // system call instead of two. Large ones are written as they are, without a copy.
        let inline = sendsBody && response.body.readableBytes <= Self.inlineBodyLimit
        var head = context.channel.allocator.buffer(
            capacity: (response.encodedHead?.readableBytes ?? 256) + 128 + (inline ? response.body.readableBytes : 0)
        )
        if let encoded = response.encodedHead {
            head.writeImmutableBuffer(encoded)
        } else {
            var encoded = HTTPResponse.encodeHead(status: response.status, headers: response.headers)
            head.writeBuffer(&encoded)
        }
        writeDateAndID(of: request, to: &head)
        if framing != .keepAlive {
            head.writeStaticString("\r\nConnection: close")
        } else if request.head.version.minor == 0 {
            head.writeStaticString("\r\nConnection: keep-alive")
        }
        head.writeStaticString("\r\n\r\n")
        let headBytes = head.readableBytes
        if inline { head.writeImmutableBuffer(response.body) }
        let last: EventLoopPromise<Void>? = framing == .keepAlive ? nil : context.eventLoop.makePromise()
        context.write(wrapOutboundOut(.byteBuffer(head)), promise: sendsBody && !inline ? nil : last)
        if sendsBody, !inline { context.write(wrapOutboundOut(.byteBuffer(response.body)), promise: last) }
        needsFlush = true
        finished(request, response: response, bytes: headBytes + (sendsBody ? response.body.readableBytes : 0))
        if let last {
            flushIfNeeded(context: context)
            closeAfter(last.futureResult, lingering: framing == .closeAndLinger, context: context)
        }
    }

    /// Closes the connection once its last response is out. After a rejection the client may
    /// still be sending (a body, an oversized head): closing at once would reset the connection
    /// and lose the answer, so the output closes and what arrives is dropped for a moment.
    private func closeAfter(_ written: EventLoopFuture<Void>, lingering: Bool, context: ChannelHandlerContext) {
        let channel = context.channel
        guard lingering else {
            written.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        written.assumeIsolated().whenComplete { _ in
            guard channel.isActive else { return }
            self.machine.lingering()
            self.timeouts.linger()
            let halfClosed = context.eventLoop.makePromise(of: Void.self)
            halfClosed.futureResult.whenFailure { _ in channel.close(promise: nil) }
            channel.close(mode: .output, promise: halfClosed)
            context.read()
        }
    }

    /// Bodies up to this size are copied next to their head.
    private static let inlineBodyLimit = 16 * 1024

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    // MARK: Streamed bodies

    /// Writes the head of a streamed body, its first bytes and the stream's first part, then
    /// every part produced until the client goes away, the stream's time is up or the server
    /// shuts down.
    private func startStream(
        _ response: HTTPResponse, body: any StreamedBody, for request: ConnectionRequest, context: ChannelHandlerContext
    ) {
        machine.streaming()
        let chunked = request.head.version.minor >= 1
        var buffer = HTTPResponse.encodeHead(status: response.status, headers: response.headers)
        writeDateAndID(of: request, to: &buffer)
        buffer.writeStaticString(chunked ? "\r\nTransfer-Encoding: chunked\r\n\r\n" : "\r\nConnection: close\r\n\r\n")
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let (id, first) = body.start(on: loop) { part in bound.value.handler.send(part, context: bound.value.context) }
        let heartbeat = loop.scheduleRepeatedTask(initialDelay: body.heartbeatInterval, delay: body.heartbeatInterval) { _ in
            bound.value.handler.send(body.heartbeat, context: bound.value.context)
        }
        let end = loop.scheduleTask(in: limits.maxStreamDuration) {
            bound.value.handler.endStream(context: bound.value.context)
        }
        stream = OpenStream(id: id, body: body, heartbeat: heartbeat, end: end, chunked: chunked)
        OpenStream.frame(response.body, chunked: chunked, into: &buffer)
        OpenStream.frame(first, chunked: chunked, into: &buffer)
        finished(request, response: response, bytes: buffer.readableBytes)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        // Asked for while the server drains: it ends at once, rather than holding the drain up.
        if machine.isQuiescing { endStream(context: context) }
    }

    /// Writes one part; a client that stopped reading is disconnected (a browser reconnects).
    private func send(_ part: ByteBuffer, context: ChannelHandlerContext) {
        guard let stream, context.channel.isActive else { return }
        guard context.channel.isWritable else {
            context.close(promise: nil)
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: part.readableBytes + 16)
        OpenStream.frame(part, chunked: stream.chunked, into: &buffer)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
    }

    /// Ends the stream (at shutdown, or when it has lasted long enough): the last chunk, then the
    /// connection closes.
    private func endStream(context: ChannelHandlerContext) {
        guard let stream else { return }
        stream.stop()
        self.stream = nil
        machine.streamEnded()
        let channel = context.channel
        // A client that is not reading would never take the last chunk: no goodbye for it.
        guard stream.chunked, channel.isWritable else {
            channel.close(promise: nil)
            return
        }
        var last = channel.allocator.buffer(capacity: 5)
        last.writeStaticString("0\r\n\r\n")
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(last))).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: What every response carries

    /// Reports a written response to the observer and the access log.
    private func finished(_ request: ConnectionRequest, response: HTTPResponse, bytes: Int) {
        let duration = NIODeadline.now() - request.started
        observer?.responded(
            route: response.route, status: response.status.code, bytes: bytes, duration: duration, variant: response.variant)
        accessLog?.record(
            method: request.head.method.rawValue, uri: request.head.uri, status: response.status.code, bytes: bytes,
            duration: duration, variant: response.variant
        ) { buffer in ids.write(request.id, to: &buffer) }
        if let trace = request.trace {
            trace.tracing.end(trace.span, route: response.route, status: response.status.code, bytes: bytes, variant: response.variant)
        }
    }

    /// The `Date` and `X-Request-Id` header lines every response carries (`Date: ...\r\nX-Request-Id: ...`,
    /// without the final line end), after the response's own head.
    private func writeDateAndID(of request: ConnectionRequest, to buffer: inout ByteBuffer) {
        buffer.writeStaticString("Date: ")
        buffer.writeString(date.current())
        buffer.writeStaticString("\r\nX-Request-Id: ")
        ids.write(request.id, to: &buffer)
        // With tracing on, the trace the request is part of (when it is recorded), so an app can
        // name it in a report.
        if let trace = request.trace, trace.span.isRecording,
            let parent = trace.tracing.headers(of: trace.span).first(where: { $0.0 == "traceparent" })
        {
            buffer.writeStaticString("\r\ntraceparent: ")
            buffer.writeString(parent.1)
        }
    }
}

/// Told about every response written, for metrics.
public protocol RequestObserver: Sendable {
    /// - Parameter variant: the screen variant served (`home|*|default`), if the response is one's.
    func responded(route: String, status: UInt, bytes: Int, duration: TimeAmount, variant: String?)
}
