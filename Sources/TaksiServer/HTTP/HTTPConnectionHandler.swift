import Foundation
public import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 on one connection: answers requests in order (pipelined ones included), writes
/// precomputed responses as bytes, and pushes back on clients that send faster than they read.
///
/// Backpressure: while the channel is not writable (the client is not reading) or
/// ``ConnectionLimits/maxPipelinedRequests`` requests wait, no response is produced and nothing
/// more is read from the socket, so a client that never reads costs a bounded amount of memory.
/// Nor is anything read while a request with a body waits for its answer: pipelined submits would
/// each keep up to ``ConnectionLimits/maxBodyBytes`` in memory (16 of them, 1 MB a connection).
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// A request's id: the client's, or this connection's prefix and a counter, written into the
    /// response without building a string (one is built only for the access log).
    private enum RequestID {
        case given(String)
        case generated(Int)
    }

    private struct Request {
        var head: HTTPRequestHead
        var id: RequestID
        var started: NIODeadline
        /// An answer decided while reading: a limit was exceeded or the request was malformed.
        var rejection: APIError?
        /// Body bytes received so far.
        var bodyBytes = 0
        /// The body of a POST (actions take one, up to the body limit); other methods' bodies are
        /// counted and discarded.
        var body: ByteBuffer?
        /// The head asks for a protocol upgrade, after which NIO's decoder parses nothing more.
        var offersUpgrade = false
    }

    private let responder: Responder
    private let limits: ConnectionLimits
    private let timeouts: RequestTimeoutHandler
    private let accessLog: AccessLogBuffer?
    private let observer: (any RequestObserver)?

    /// The request whose head arrived and whose end has not.
    private var receiving: Request?
    /// Complete requests not answered yet, oldest first.
    private var queue = CircularBuffer<Request>(initialCapacity: 4)
    /// The oldest request's reply is being computed off the event loop.
    private var awaitingReply = false
    /// A `read` was held back and is owed to the channel.
    private var heldRead = false
    /// The connection closes after the response being written; nothing more is read or answered.
    private var closing = false
    /// The server is shutting down: the next response closes the connection.
    private var quiescing = false
    /// A rejected request ends this connection: nothing more is read until its answer is written.
    private var discarding = false
    /// The last answer is written and the output closed; reads go on (and are dropped) for a
    /// moment so the client gets the answer rather than a reset.
    private var lingering = false
    private var needsFlush = false
    /// The connection carries a stream of server-sent events (the preview's): nothing more is
    /// answered on it; events are written as they are published until the client goes away.
    private var stream: EventStream?

    private struct EventStream {
        var id: Int
        var events: PreviewEvents
        var heartbeat: RepeatedTask
        /// Ends the stream at ``ConnectionLimits/maxStreamDuration``.
        var end: Scheduled<Void>
        /// Events go in chunks (HTTP/1.1); for HTTP/1.0 the body ends with the connection.
        var chunked: Bool
    }

    private let requestIDPrefix = String(UInt64.random(in: 0...UInt64.max) | (1 << 63), radix: 16) + "-"
    private var requestCount = 0
    /// Responses written on this connection (see ``ConnectionLimits/maxRequestsPerConnection``).
    private var answered = 0
    private var dateSecond = -1
    private var dateText = ""

    init(
        responder: Responder, limits: ConnectionLimits, timeouts: RequestTimeoutHandler, accessLog: AccessLogBuffer?,
        observer: (any RequestObserver)?
    ) {
        self.responder = responder
        self.limits = limits
        self.timeouts = timeouts
        self.accessLog = accessLog
        self.observer = observer
    }

    // MARK: Reading

    /// NIO's request decoder, bounded a little above our own limits so an oversized head is
    /// refused early. Leftover bytes are forwarded when it is removed, so it can be replaced
    /// after an upgrade offer (see ``replaceDecoder(context:)``).
    static func makeDecoder(limits: ConnectionLimits) -> ByteToMessageHandler<HTTPRequestDecoder> {
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderListSize = limits.maxURILength + limits.maxHeaderBytes + 4096
        decoderLimits.maxHeaderFieldSize = decoderLimits.maxHeaderListSize
        return ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: decoderLimits))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, !discarding else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): received(head, context: context)
        case .body(let part): received(part, context: context)
        case .end: receivedEnd(context: context)
        }
    }

    /// A request head: what must be refused is decided now, and answered at once when it does
    /// not depend on the body (which is then never read, nor asked for with `100 Continue`).
    private func received(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let summary = HeadSummary(head.headers)
        var request = Request(head: head, id: requestID(summary.requestID), started: .now())
        request.rejection = rejection(of: head, summary: summary)
        request.offersUpgrade = head.method == .CONNECT || summary.offersUpgrade
        let declaredLength = summary.contentLength?.trimmingOptionalWhitespace
        let length = declaredLength.flatMap { Int($0) }
        let hasBody = (length ?? 0) > 0 || (declaredLength != nil && length == nil) || summary.hasTransferEncoding
        var answerBeforeBody = false
        if let declaredLength, length == nil, request.rejection == nil {
            // The decoder takes lengths up to 2^64 - 1 and waits for that body; one an Int
            // cannot hold is larger than any limit. Anything else it would have refused.
            let isNumber = !declaredLength.isEmpty && declaredLength.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            request.rejection = isNumber ? .bodyTooLarge(limit: limits.maxBodyBytes) : .malformedRequest
            answerBeforeBody = true
        }
        if let length, length > limits.maxBodyBytes, request.rejection == nil {
            // Refused before a byte of it is read.
            request.rejection = .bodyTooLarge(limit: limits.maxBodyBytes)
            answerBeforeBody = true
        }
        if request.rejection == nil, let expectation = summary.expect {
            if expectation.trimmingOptionalWhitespace.lowercased() != "100-continue" {
                request.rejection = .expectationFailed
                answerBeforeBody = true
            } else if hasBody, queue.isEmpty, !awaitingReply {
                if let refusal = responder.refusal(beforeBodyOf: head.method, uri: head.uri, headers: head.headers) {
                    // Refused whatever the body: the final answer now, and the body never asked for.
                    request.rejection = refusal
                    answerBeforeBody = true
                } else {
                    // The client waits for this before it sends the body. With answers still to
                    // write ahead of it, it is left out (RFC 9110, 10.1.1 lets the client go on).
                    var interim = context.channel.allocator.buffer(capacity: 25)
                    interim.writeStaticString("HTTP/1.1 100 Continue\r\n\r\n")
                    context.writeAndFlush(wrapOutboundOut(.byteBuffer(interim)), promise: nil)
                }
            }
        }
        receiving = request
        if answerBeforeBody, let rejection = request.rejection {
            rejectReceiving(rejection, context: context)
            return
        }
        if hasBody { timeouts.bodyStarted() } else { timeouts.requestStarted() }
    }

    /// Part of a body. Only actions (POST) read one; others are counted and discarded, so the
    /// connection stays usable.
    private func received(_ part: ByteBuffer, context: ChannelHandlerContext) {
        guard var request = receiving else { return }
        request.bodyBytes += part.readableBytes
        if request.bodyBytes > limits.maxBodyBytes {
            receiving = request
            rejectReceiving(.bodyTooLarge(limit: limits.maxBodyBytes), context: context)
            return
        }
        if request.head.method == .POST {
            receiving = nil
            var part = part
            if request.body == nil {
                request.body = part
            } else {
                request.body!.writeBuffer(&part)
            }
        }
        receiving = request
    }

    /// A whole request: answered now when nothing waits ahead of it, else queued.
    private func receivedEnd(context: ChannelHandlerContext) {
        guard let request = receiving else { return }
        receiving = nil
        timeouts.requestStarted()
        if request.offersUpgrade { replaceDecoder(context: context) }
        if queue.isEmpty, !awaitingReply, context.channel.isWritable {
            // The common case, one request at a time: answer it without queueing it.
            let reply = reply(to: request)
            if case .ready(let response) = reply {
                write(response, for: request, context: context)
                if !closing { timeouts.connectionIdle() }
                return
            }
            queue.append(request)
            wait(for: reply, of: request, context: context)
            return
        }
        queue.append(request)
        processQueue(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if lingering || stream != nil {
            // Read (and drop) on, to see the client go away.
            context.read()
        } else if closing || discarding || !mayReadMore(context: context) {
            heldRead = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            timeouts.writesFlowing()
            processQueue(context: context)
            flushIfNeeded(context: context)
        } else {
            // The client is not taking its responses; it has ``ConnectionLimits/writeTimeout`` to.
            timeouts.writesHeld()
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is RequestTimeoutHandler.BodyTimedOut {
            if receiving != nil, !closing, !discarding { rejectReceiving(.bodyTimeout, context: context) }
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        if stream != nil {
            endStream(context: context)
            return
        }
        if queue.isEmpty, receiving == nil, !awaitingReply {
            closing = true
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if lingering || discarding { return }
        guard let parserError = error as? HTTPParserError, !closing else {
            // A broken connection is the client's business; close it and keep serving the others.
            context.close(promise: nil)
            return
        }
        // Answer the bytes that are not HTTP after the requests before them, then close.
        let rejection: APIError =
            switch parserError {
            case .headerOverflow:
                // Too large for the decoder: the target, when the request line alone is over its limit.
                timeouts.requestLineBytes > limits.maxURILength
                    ? .uriTooLong(limit: limits.maxURILength) : .headersTooLarge(limit: limits.maxHeaderBytes)
            case .invalidMethod where timeouts.wellFormedRequestLineMajorVersion == 1: .methodNotImplemented(nil)
            case .invalidVersion where (timeouts.wellFormedRequestLineMajorVersion ?? 1) != 1: .versionNotSupported
            default: .malformedRequest
            }
        rejectReceiving(rejection, context: context)
    }

    /// Answers the request being read (or a placeholder for bytes that never made one) with
    /// `rejection`, after the requests before it; nothing more is read, and the connection closes
    /// once the answer is written.
    private func rejectReceiving(_ rejection: APIError, context: ChannelHandlerContext) {
        var request = receiving ?? Request(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "-"), id: requestID(nil), started: .now())
        request.rejection = rejection
        receiving = nil
        discarding = true
        timeouts.requestStarted()
        queue.append(request)
        processQueue(context: context)
        flushIfNeeded(context: context)
    }

    /// What is wrong with a request head that must be refused whatever it asks for, if anything.
    private func rejection(of head: HTTPRequestHead, summary: HeadSummary) -> APIError? {
        if head.uri.utf8.count > limits.maxURILength { return .uriTooLong(limit: limits.maxURILength) }
        if summary.bytes > limits.maxHeaderBytes { return .headersTooLarge(limit: limits.maxHeaderBytes) }
        // RFC 9112, 3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0.
        if summary.hosts > 1 || (summary.hosts == 0 && head.version.minor >= 1) { return .invalidHost }
        return nil
    }

    /// What the connection needs to know of a request's headers, read in one pass (each lookup by
    /// name is a scan with case-insensitive comparisons, and a request head is read on every request).
    private struct HeadSummary {
        /// Bytes of the header lines, as the limit counts them.
        var bytes = 0
        var hosts = 0
        var requestID: String?
        var contentLength: String?
        var hasTransferEncoding = false
        var expect: String?
        /// llhttp's rule for an upgrade: an `Upgrade` header with `Connection: upgrade` (or
        /// CONNECT), after which NIO's decoder parses nothing more.
        var offersUpgrade: Bool { hasUpgrade && connectionUpgrade }
        private var hasUpgrade = false
        private var connectionUpgrade = false

        init(_ headers: HTTPHeaders) {
            for (name, value) in headers {
                bytes += name.utf8.count + value.utf8.count + 4
                switch name.utf8.count {
                case 4 where ContentCoding.equalsIgnoringCase(name[...], "host"): hosts += 1
                case 6 where ContentCoding.equalsIgnoringCase(name[...], "expect"): expect = expect ?? value
                case 7 where ContentCoding.equalsIgnoringCase(name[...], "upgrade"): hasUpgrade = true
                case 10 where ContentCoding.equalsIgnoringCase(name[...], "connection"):
                    connectionUpgrade =
                        connectionUpgrade
                        || value.split(separator: ",").contains { ContentCoding.equalsIgnoringCase($0.trimmingOptionalWhitespace, "upgrade") }
                case 12 where ContentCoding.equalsIgnoringCase(name[...], "x-request-id"): requestID = requestID ?? value
                case 14 where ContentCoding.equalsIgnoringCase(name[...], "content-length"): contentLength = contentLength ?? value
                case 17 where ContentCoding.equalsIgnoringCase(name[...], "transfer-encoding"): hasTransferEncoding = true
                default: break
                }
            }
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
        closing = true
        queue.removeAll()
        stopStream()
        context.fireChannelInactive()
    }

    // MARK: Answering

    /// Answers waiting requests in order while the client keeps reading.
    private func processQueue(context: ChannelHandlerContext) {
        while !awaitingReply, !closing, context.channel.isWritable, let request = queue.first {
            let reply = reply(to: request)
            switch reply {
            case .ready(let response):
                queue.removeFirst()
                write(response, for: request, context: context)
            case .pending:
                wait(for: reply, of: request, context: context)
                return
            }
        }
        if heldRead, !closing, mayReadMore(context: context) {
            heldRead = false
            context.read()
        }
        if queue.isEmpty, receiving == nil, !awaitingReply, !closing { timeouts.connectionIdle() }
    }

    /// Whether more requests may be read: the client takes its responses, fewer than
    /// ``ConnectionLimits/maxPipelinedRequests`` wait, and none of them holds a body (a request
    /// being received is read to its end, so at most two bodies are kept: one waiting, one read).
    private func mayReadMore(context: ChannelHandlerContext) -> Bool {
        guard context.channel.isWritable, queue.count < limits.maxPipelinedRequests else { return false }
        return receiving != nil || !queue.contains { $0.body != nil }
    }

    /// The responder's reply, or the rejection decided while reading.
    private func reply(to request: Request) -> Reply {
        if let rejection = request.rejection { return .ready(HTTPResponse(error: rejection)) }
        return responder.respond(
            to: HTTPRequest(method: request.head.method, uri: request.head.uri, headers: request.head.headers, body: request.body)
        )
    }

    /// Waits off the event loop for a pending reply to the oldest request (at the queue's head),
    /// then writes it and goes on with the queue.
    private func wait(for reply: Reply, of request: Request, context: ChannelHandlerContext) {
        guard case .pending(let work) = reply else { return }
        awaitingReply = true
        let promise = context.eventLoop.makePromise(of: HTTPResponse.self)
        promise.completeWithTask(work)
        promise.futureResult.assumeIsolated().whenSuccess { response in
            self.awaitingReply = false
            guard !self.closing, context.channel.isActive else { return }
            self.queue.removeFirst()
            self.write(response, for: request, context: context)
            self.processQueue(context: context)
            self.flushIfNeeded(context: context)
        }
    }

    private func write(_ response: HTTPResponse, for request: Request, context: ChannelHandlerContext) {
        if let events = response.events, request.head.method != .HEAD {
            startStream(response, events: events, for: request, context: context)
            return
        }
        answered += 1
        let keepAlive = request.head.isKeepAlive && !quiescing && request.rejection == nil && answered < limits.maxRequestsPerConnection
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
        if !keepAlive {
            head.writeStaticString("\r\nConnection: close")
        } else if request.head.version.minor == 0 {
            head.writeStaticString("\r\nConnection: keep-alive")
        }
        head.writeStaticString("\r\n\r\n")
        let headBytes = head.readableBytes
        if inline { head.writeImmutableBuffer(response.body) }
        let last: EventLoopPromise<Void>? = keepAlive ? nil : context.eventLoop.makePromise()
        context.write(wrapOutboundOut(.byteBuffer(head)), promise: sendsBody && !inline ? nil : last)
        if sendsBody, !inline { context.write(wrapOutboundOut(.byteBuffer(response.body)), promise: last) }
        needsFlush = true
        finished(request, response: response, bytes: headBytes + (sendsBody ? response.body.readableBytes : 0))
        if let last {
            closing = true
            flushIfNeeded(context: context)
            let channel = context.channel
            guard request.rejection != nil else {
                last.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return
            }
            // The client may still be sending (a body, an oversized head): closing now would reset
            // the connection and lose the answer. Close the output, drop what arrives for a moment.
            last.futureResult.assumeIsolated().whenComplete { _ in
                guard channel.isActive else { return }
                self.lingering = true
                self.timeouts.linger()
                let halfClosed = context.eventLoop.makePromise(of: Void.self)
                halfClosed.futureResult.whenFailure { _ in channel.close(promise: nil) }
                channel.close(mode: .output, promise: halfClosed)
                context.read()
            }
        }
    }

    // MARK: Event streams

    /// Writes the head of a stream of server-sent events, its first bytes and the current event,
    /// then writes every event published until the client goes away or the server shuts down.
    private func startStream(_ response: HTTPResponse, events: PreviewEvents, for request: Request, context: ChannelHandlerContext) {
        closing = true
        queue.removeAll()
        let chunked = request.head.version.minor >= 1
        var buffer = HTTPResponse.encodeHead(status: response.status, headers: response.headers)
        writeDateAndID(of: request, to: &buffer)
        buffer.writeStaticString(chunked ? "\r\nTransfer-Encoding: chunked\r\n\r\n" : "\r\nConnection: close\r\n\r\n")
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let (id, current) = events.subscribe(on: loop) { event in bound.value.handler.send(event, context: bound.value.context) }
        let heartbeat = loop.scheduleRepeatedTask(initialDelay: PreviewEvents.heartbeatInterval, delay: PreviewEvents.heartbeatInterval) { _ in
            bound.value.handler.send(PreviewEvents.heartbeat, context: bound.value.context)
        }
        let end = loop.scheduleTask(in: limits.maxStreamDuration) {
            bound.value.handler.endStream(context: bound.value.context)
        }
        stream = EventStream(id: id, events: events, heartbeat: heartbeat, end: end, chunked: chunked)
        Self.frame(response.body, chunked: chunked, into: &buffer)
        Self.frame(current, chunked: chunked, into: &buffer)
        finished(request, response: response, bytes: buffer.readableBytes)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        // Asked for while the server drains: it ends at once, rather than holding the drain up.
        if quiescing { endStream(context: context) }
    }

    /// Writes one event; a client that stopped reading is disconnected (its browser reconnects).
    private func send(_ event: ByteBuffer, context: ChannelHandlerContext) {
        guard let stream, context.channel.isActive else { return }
        guard context.channel.isWritable else {
            context.close(promise: nil)
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: event.readableBytes + 16)
        Self.frame(event, chunked: stream.chunked, into: &buffer)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
    }

    /// Stops the heartbeat and the events of the stream, if there is one; returns it.
    @discardableResult
    private func stopStream() -> EventStream? {
        guard let stream else { return nil }
        stream.heartbeat.cancel()
        stream.end.cancel()
        stream.events.unsubscribe(stream.id)
        self.stream = nil
        return stream
    }

    /// Ends a stream (at shutdown, or when it has lasted long enough): the last chunk, then the
    /// connection closes.
    private func endStream(context: ChannelHandlerContext) {
        guard let stream = stopStream() else { return }
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

    /// `bytes` as one chunk of a chunked body, or as they are.
    private static func frame(_ bytes: ByteBuffer, chunked: Bool, into buffer: inout ByteBuffer) {
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

    /// Bodies up to this size are copied next to their head.
    private static let inlineBodyLimit = 16 * 1024

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    /// Reports a written response to the observer and the access log.
    private func finished(_ request: Request, response: HTTPResponse, bytes: Int) {
        let duration = NIODeadline.now() - request.started
        observer?.responded(route: response.route, status: response.status.code, bytes: bytes, duration: duration)
        accessLog?.record(
            method: request.head.method.rawValue, uri: request.head.uri, status: response.status.code, bytes: bytes,
            duration: duration, variant: response.variant
        ) { buffer in write(request.id, to: &buffer) }
    }

    // MARK: Helpers

    /// The `Date` and `X-Request-Id` header lines every response carries (`Date: ...\r\nX-Request-Id: ...`,
    /// without the final line end), after the response's own head.
    private func writeDateAndID(of request: Request, to buffer: inout ByteBuffer) {
        buffer.writeStaticString("Date: ")
        buffer.writeString(currentDate())
        buffer.writeStaticString("\r\nX-Request-Id: ")
        write(request.id, to: &buffer)
    }

    /// The client's `X-Request-Id` when it is safe to echo (1 to 128 visible ASCII characters),
    /// else a new one: a random per-connection prefix and a counter.
    private func requestID(_ given: String?) -> RequestID {
        if let given, (1...128).contains(given.utf8.count),
            given.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        {
            return .given(given)
        }
        requestCount += 1
        return .generated(requestCount)
    }

    private func write(_ id: RequestID, to buffer: inout ByteBuffer) {
        switch id {
        case .given(let id):
            buffer.writeString(id)
        case .generated(let number):
            buffer.writeString(requestIDPrefix)
            buffer.writeDecimal(number)
        }
    }

    /// The `Date` header's value (RFC 9110 IMF-fixdate), formatted at most once a second.
    private func currentDate() -> String {
        var now = time(nil)
        guard now != dateSecond else { return dateText }
        dateSecond = now
        var parts = tm()
        gmtime_r(&now, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        dateText = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        return dateText
    }
}

/// Told about every response written, for metrics.
public protocol RequestObserver: Sendable {
    func responded(route: String, status: UInt, bytes: Int, duration: TimeAmount)
}
