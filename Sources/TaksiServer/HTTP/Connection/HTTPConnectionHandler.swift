import Foundation
public import NIOCore
import NIOHTTP1

/// Serves HTTP/1.1 on one connection: hands each event of the channel (bytes arriving, a decoded
/// request part, a read asked for, writability, a deadline passed, shutdown, an error) to
/// ``HTTPConnectionStateMachine`` and carries out the one ``HTTPConnectionStateMachine/Action`` it
/// returns: reads, answers through the ``Responder`` (on the event loop, or off it for a pending
/// reply), writes precomputed responses as bytes, streams a streamed body, and closes. The rules
/// (order, backpressure, limits, deadlines, how the connection ends) are the machine's; this class
/// only does I/O.
///
/// It reads the requests from the bytes itself (``RequestReader``, in place of NIO's decoder and
/// the handler that carried its parts): a head's clock starts with its first byte, and each part
/// goes to the machine as it is read. Build a connection's pipeline with
/// ``handlers(responder:limits:sweeper:accessLog:observer:)``.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData
    typealias Action = HTTPConnectionStateMachine.Action

    private let responder: Responder
    private let limits: ConnectionLimits
    private let sweeper: ConnectionSweeper
    private let accessLog: AccessLogBuffer?
    private let observer: (any RequestObserver)?

    // What follows is used on the connection's event loop alone, one event at a time, and each
    // access ends before another to the same property starts: the run-time exclusivity checks,
    // made many times a request, are left out. The reader keeps its check (one a read): a
    // read that came back into it while it hands out parts would stop the process, not go on.
    @exclusivity(unchecked) private var machine: HTTPConnectionStateMachine
    private var reader: RequestReader
    @exclusivity(unchecked) private var date = HTTPDate()
    /// The streamed body being written, while the machine is `.streaming`.
    private var stream: OpenStream?
    /// The observer's instruments for the last response's kind (route, status, variant).
    @exclusivity(unchecked) private var counted: (label: MetricsLabel, status: UInt, variant: String?, instruments: ResponseInstruments)?
    /// Responses were written since the last flush.
    @exclusivity(unchecked) private var needsFlush = false
    /// Whether the channel takes more writes, as its last writability event said (NIO sends one,
    /// on this loop, each time it changes): read here rather than through `context.channel`,
    /// which retains and releases the channel every time, several times a request.
    @exclusivity(unchecked) private var isWritable = true
    /// The channel's allocator, kept for the same reason.
    @exclusivity(unchecked) private var allocator = ByteBufferAllocator()
    /// This handler's place in the pipeline, for the sweeper's calls (every other event brings
    /// its own).
    private var context: ChannelHandlerContext?

    init(
        responder: Responder, limits: ConnectionLimits, sweeper: ConnectionSweeper, accessLog: AccessLogBuffer?,
        observer: (any RequestObserver)?
    ) {
        self.responder = responder
        self.limits = limits
        self.sweeper = sweeper
        self.accessLog = accessLog
        self.observer = observer
        self.machine = HTTPConnectionStateMachine(limits: limits, now: .now())
        self.reader = RequestReader(limits: limits)
    }

    /// A connection's handlers, in pipeline order: this one alone.
    static func handlers(
        responder: Responder, limits: ConnectionLimits, sweeper: ConnectionSweeper, accessLog: AccessLogBuffer?,
        observer: (any RequestObserver)?
    ) -> [any ChannelHandler] {
        [HTTPConnectionHandler(responder: responder, limits: limits, sweeper: sweeper, accessLog: accessLog, observer: observer)]
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isWritable = context.channel.isWritable
        allocator = context.channel.allocator
        sweeper.add(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweeper.remove(self)
        self.context = nil
    }

    /// Carries out what the machine decided, and what follows from it.
    private func run(_ action: Action, context: ChannelHandlerContext) {
        var action = action
        while true {
            switch action {
            case .none, .decode, .drop, .write, .stream:
                // Bytes are read in `channelRead`; writes follow an answer (see `answer`).
                return
            case .read:
                context.read()
                return
            case .sendContinue:
                var interim = context.channel.allocator.buffer(capacity: 25)
                interim.writeStaticString("HTTP/1.1 100 Continue\r\n\r\n")
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(interim)), promise: nil)
                return
            case .answer(let request):
                action = answer(request, context: context)
            case .closeOutputAndDrain:
                let channel = context.channel
                let halfClosed = context.eventLoop.makePromise(of: Void.self)
                halfClosed.futureResult.whenFailure { _ in channel.close(promise: nil) }
                channel.close(mode: .output, promise: halfClosed)
                context.read()
                return
            case .endStream:
                endStream(context: context)
                return
            case .close:
                context.close(promise: nil)
                return
            }
        }
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .decode = machine.bytesArrived(now: .now()) else { return }
        do {
            try reader.read(unwrapInboundIn(data)) { part in
                received(part, context: context)
                // Once the connection stops answering (a refused request is its last), what
                // follows is dropped.
                return machine.state == .open
            }
        } catch {
            run(machine.unreadable(error, isWritable: isWritable, now: .now()), context: context)
        }
    }

    /// One part of a request, read.
    private func received(_ part: RequestPart, context: ChannelHandlerContext) {
        let action: Action
        switch part {
        case .head(let head):
            action = machine.receivedHead(head, isWritable: isWritable, now: .now()) { head in
                responder.refusal(beforeBodyOf: head)
            }
        case .body(let part):
            action = machine.receivedBody(part, isWritable: isWritable, now: .now())
        case .end:
            action = machine.receivedEnd(isWritable: isWritable, now: .now())
        }
        run(action, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        run(machine.readRequested(isWritable: isWritable), context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        run(machine.writabilityChanged(isWritable: isWritable, now: .now()), context: context)
        flushIfNeeded(context: context)
        context.fireChannelWritabilityChanged()
    }

    /// A deadline passed (see ``ConnectionSweeper``).
    func timedOut(now: NIODeadline) {
        guard let context else { return }
        run(machine.timedOut(now: now, isWritable: isWritable), context: context)
        flushIfNeeded(context: context)
    }

    /// When the sweeper looks at this connection again.
    var nextDeadline: NIODeadline? { machine.nextDeadline }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        run(machine.quiesce(), context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(machine.errorCaught(), context: context)
        flushIfNeeded(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed()
        sweeper.remove(self)
        stream?.stop()
        stream = nil
        context.fireChannelInactive()
    }

    // MARK: Answering

    /// Makes the answer to `request` and writes it when it is ready now (returning what comes
    /// next); an answer made off the event loop is written when it arrives.
    private func answer(_ request: ConnectionRequest, context: ChannelHandlerContext) -> Action {
        switch reply(to: request) {
        case .ready(let response):
            return write(response, for: request, context: context)
        case .pending(let work):
            wait(for: work, of: request, context: context)
            return .none
        }
    }

    /// The responder's reply (to the rejection decided while reading, if there is one).
    private func reply(to request: ConnectionRequest) -> Reply {
        var http = HTTPRequest(head: request.head, body: request.body)
        http.id = machine.ids.reference(request.id)
        http.rejection = request.rejection
        return responder.respond(to: http)
    }

    /// Waits off the event loop for a reply made there, then writes it and goes on answering.
    private func wait(
        for work: @escaping @Sendable () async -> HTTPResponse, of request: ConnectionRequest, context: ChannelHandlerContext
    ) {
        let promise = context.eventLoop.makePromise(of: HTTPResponse.self)
        promise.completeWithTask(work)
        promise.futureResult.assumeIsolated().whenSuccess { response in
            guard context.channel.isActive else { return }
            self.run(self.write(response, for: request, context: context), context: context)
            self.flushIfNeeded(context: context)
        }
    }

    /// Writes the answer to `request`, as the machine frames it; returns what comes next.
    private func write(_ response: HTTPResponse, for request: ConnectionRequest, context: ChannelHandlerContext) -> Action {
        let streams = response.stream != nil && request.head.method != .HEAD
        switch machine.answerReady(streams: streams) {
        case .write(let framing):
            write(response, for: request, framing: framing, context: context)
            guard framing == .keepAlive else { return .none }
            return machine.responseWritten(isWritable: isWritable, now: .now())
        case .stream(let endsAtOnce):
            guard let body = response.stream else { return .none }
            startStream(response, body: body, for: request, context: context)
            return endsAtOnce ? .endStream : .none
        default:
            return .none
        }
    }

    private func write(
        _ response: HTTPResponse, for request: ConnectionRequest, framing: HTTPConnectionStateMachine.Framing,
        context: ChannelHandlerContext
    ) {
        let sendsBody = request.head.method != .HEAD && response.body.readableBytes > 0
        // A small body goes in the same buffer as the head: one write through the pipeline and one
        // system call instead of two. Large ones are written as they are, without a copy.
        let inline = sendsBody && response.body.readableBytes <= Self.inlineBodyLimit
        var head = allocator.buffer(
            capacity: (response.encodedHead?.readableBytes ?? 512) + 128 + (inline ? response.body.readableBytes : 0)
        )
        response.writeHead(to: &head)
        writeDateAndID(of: request, response: response, to: &head)
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
            // After a rejection the client may still be sending (a body, an oversized head):
            // closing at once would reset the connection and lose the answer, so the machine
            // lingers.
            let lingers = framing == .closeAndLinger
            last.futureResult.assumeIsolated().whenComplete { _ in
                guard context.channel.isActive else { return }
                self.run(self.machine.lastResponseSent(lingers: lingers, now: .now()), context: context)
            }
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
        let chunked = request.head.version.minor >= 1
        var buffer = context.channel.allocator.buffer(capacity: 512)
        response.writeHead(to: &buffer)
        writeDateAndID(of: request, response: response, to: &buffer)
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
        count(response, bytes: bytes, duration: duration)
        accessLog?.record(
            request.head, status: response.status.code, bytes: bytes,
            duration: duration, variant: response.variant
        ) { buffer in machine.ids.write(request.id, to: &buffer) }
        response.trace?.end(response, bytes: bytes)
    }

    /// Counts a response with the observer's instruments for its kind, those of the last
    /// response when it was of the same kind.
    private func count(_ response: HTTPResponse, bytes: Int, duration: TimeAmount) {
        guard let observer else { return }
        let (label, status, variant) = (response.metricsLabel, response.status.code, response.variant)
        if let counted, counted.label == label, counted.status == status, counted.variant == variant {
            counted.instruments.record(bytes: bytes, duration: duration)
            return
        }
        let instruments = observer.instruments(label: label, status: status, variant: variant)
        counted = (label, status, variant, instruments)
        instruments.record(bytes: bytes, duration: duration)
    }

    /// The `Date` and `X-Request-Id` header lines every response carries (`Date: ...\r\nX-Request-Id: ...`,
    /// without the final line end), after the response's own head.
    private func writeDateAndID(of request: ConnectionRequest, response: HTTPResponse, to buffer: inout ByteBuffer) {
        buffer.writeStaticString("Date: ")
        buffer.writeString(date.current())
        buffer.writeStaticString("\r\nX-Request-Id: ")
        machine.ids.write(request.id, to: &buffer)
        response.trace?.writeTraceParent(to: &buffer)
    }
}

/// Told about every response written, for metrics.
public protocol RequestObserver: Sendable {
    /// - Parameter variant: the screen variant served (`home|*|default`), if the response is one's.
    func responded(label: MetricsLabel, status: UInt, bytes: Int, duration: TimeAmount, variant: String?)

    /// What counts the responses of one route, status and variant: a connection keeps the last
    /// ones, so a response like the one before is counted without looking them up. By default,
    /// ``responded(label:status:bytes:duration:variant:)``.
    func instruments(label: MetricsLabel, status: UInt, variant: String?) -> ResponseInstruments
}

extension RequestObserver {
    public func instruments(label: MetricsLabel, status: UInt, variant: String?) -> ResponseInstruments {
        ResponseInstruments { bytes, duration in
            responded(label: label, status: status, bytes: bytes, duration: duration, variant: variant)
        }
    }
}

/// Counts a response of one kind (see ``RequestObserver/instruments(label:status:variant:)``).
public struct ResponseInstruments: Sendable {
    private let count: @Sendable (_ bytes: Int, _ duration: TimeAmount) -> Void

    public init(_ count: @escaping @Sendable (_ bytes: Int, _ duration: TimeAmount) -> Void) {
        self.count = count
    }

    /// Counts one response of `bytes`, written `duration` after its request began.
    public func record(bytes: Int, duration: TimeAmount) {
        count(bytes, duration)
    }
}
