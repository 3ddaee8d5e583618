import NIOCore
import NIOHTTP1

/// The life of one HTTP/1.1 connection as a value: which requests are read, which wait, which one
/// is answered next, whether more may be read, every deadline the connection keeps, and how it
/// ends. It does no I/O: each event returns one ``Action`` and ``HTTPConnectionHandler`` carries it
/// out, so every rule here is tested without a socket or a clock (`HTTPConnectionStateMachineTests`),
/// as async-http-client's `HTTP1ConnectionStateMachine` is.
///
/// Requests are answered in the order they arrived (pipelined ones included), one at a time.
/// Backpressure: while the client does not take its responses, or
/// ``ConnectionLimits/maxPipelinedRequests`` requests wait, or a waiting request holds a body,
/// nothing more is read (a read asked for then is held and owed).
///
/// Deadlines: an idle keep-alive connection closes after ``ConnectionLimits/idleTimeout``; a head
/// must arrive within ``ConnectionLimits/headerTimeout`` of its first byte (slowloris); a body
/// within ``ConnectionLimits/bodyTimeout`` of its head (408); a client that takes none of its
/// responses is dropped after ``ConnectionLimits/writeTimeout``; after an error, what the client
/// still sends is read and dropped for ``ConnectionLimits/lingerTimeout``. While a request is
/// answered no clock runs: that time is the server's (upstream timeouts bound it). The machine only
/// moves its deadlines; one ``ConnectionSweeper`` per event loop sends ``timedOut(now:)`` to the
/// connections whose deadline passed (a timer per request cost a fifth of the server's time).
struct HTTPConnectionStateMachine {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// Reading requests and answering them in order.
        case open
        /// A rejected request (a broken head, an exceeded limit) is the last one: nothing more is
        /// read; it is answered after the requests before it, and the connection closes.
        case discarding
        /// The last response is being written; the connection closes once it is out.
        case closing
        /// The last answer (an error's) is out and the output is closed; what the client still
        /// sends is read and dropped for a moment, so it gets the answer rather than a reset.
        case lingering
        /// The connection carries a streamed body until the client goes away; nothing more is
        /// answered on it, and what arrives is dropped.
        case streaming
        /// The channel is gone.
        case closed
    }

    /// How far the request being read has come.
    enum Reading {
        /// No request is being read.
        case between
        /// The first bytes of a head arrived.
        case head
        /// The head arrived; the body has not ended.
        case body(ConnectionRequest)
    }

    /// What a deadline ends.
    enum Clock: Equatable {
        /// Nothing is in progress: the connection closes.
        case idle
        /// A head is not whole: the connection closes.
        case head
        /// A body has not arrived: 408, then the connection closes.
        case body
        /// The connection lingers after its last answer: it closes.
        case close
    }

    /// How a response ends its connection.
    enum Framing: Equatable {
        /// The connection stays open for the next request.
        case keepAlive
        /// `Connection: close`; once it is written the connection closes...
        case close
        /// ...or, for a rejected request, lingers: the output closes and the input is drained.
        case closeAndLinger
    }

    /// What the handler does after an event.
    enum Action {
        /// Nothing.
        case none
        /// Read requests from the bytes that arrived (see ``RequestReader``).
        case decode
        /// Drop the bytes that arrived: nothing reads requests any more.
        case drop
        /// Ask the channel for more bytes.
        case read
        /// Tell the client waiting with `Expect: 100-continue` to send its body.
        case sendContinue
        /// Make the answer to this request; then ``answerReady(streams:)``.
        case answer(ConnectionRequest)
        /// Write the answer with this framing; then ``responseWritten(isWritable:now:)``, or once
        /// a last response is out, ``lastResponseSent(lingers:now:)``.
        case write(Framing)
        /// Write the streamed body's head and first parts, and end it at once if told.
        case stream(endsAtOnce: Bool)
        /// The last response is out: close the output, and read on to drop what arrives.
        case closeOutputAndDrain
        /// End the streamed body, then close.
        case endStream
        /// Close the connection now.
        case close
    }

    private(set) var state = State.open
    private(set) var reading = Reading.between
    /// The server is shutting down: the next response closes the connection.
    private(set) var isQuiescing = false
    /// When the connection ends unless something happens, and how; nil while the server has the
    /// next move.
    private(set) var deadline: (at: NIODeadline, clock: Clock)?
    /// When the connection closes unless the client takes some of the responses held for it; nil
    /// while writing goes on. Apart from ``deadline``: a client can be slow to read and to send at
    /// once, and each clock runs on its own.
    private(set) var writeDeadline: NIODeadline?
    /// Complete requests not answered yet, oldest first.
    private var waiting = CircularBuffer<ConnectionRequest>(initialCapacity: 4)
    /// The oldest request's answer is being made (off the event loop, or being written now).
    private var answering: ConnectionRequest?
    /// A read was asked for and held back; it is owed once reading may go on.
    private var readHeld = false
    /// Responses written on this connection (see ``ConnectionLimits/maxRequestsPerConnection``).
    private var answered = 0
    /// The ids of this connection's requests.
    private(set) var ids = RequestIDs()
    private let limits: ConnectionLimits

    /// A connection accepted at `now`: its idle clock runs.
    init(limits: ConnectionLimits, now: NIODeadline) {
        self.limits = limits
        deadline = (now + limits.idleTimeout, .idle)
    }

    /// The earlier of the two deadlines, for the sweeper.
    var nextDeadline: NIODeadline? {
        switch (deadline?.at, writeDeadline) {
        case (let at?, let write?): min(at, write)
        case (let at?, nil): at
        case (nil, let write?): write
        case (nil, nil): nil
        }
    }

    // MARK: Reading

    /// Bytes arrived, before requests are read from them: a head's clock starts with its first
    /// byte.
    /// - Returns: ``Action/decode`` or ``Action/drop``.
    mutating func bytesArrived(now: @autoclosure () -> NIODeadline) -> Action {
        guard state == .open else { return .drop }
        if case .between = reading {
            reading = .head
            if deadline?.clock == .idle { deadline = (now() + limits.headerTimeout, .head) }
        }
        return .decode
    }

    /// A request's head was decoded: what must be refused is decided now, and answered at once
    /// when it does not depend on the body (which is then never read, nor asked for with
    /// `100 Continue`). `refusal` gives the route's answer whatever the body, asked for only when
    /// the client waits for `100 Continue`.
    mutating func receivedHead(
        _ head: RequestHead, isWritable: Bool, now: @autoclosure () -> NIODeadline,
        refusal: (RequestHead) -> APIError?
    ) -> Action {
        guard state == .open else { return .none }
        let (request, verdict) = ConnectionRequest.read(head, limits: limits, ids: &ids)
        reading = .body(request)
        var sendsContinue = false
        if verdict.expectsContinue, hasNothingAhead {
            // Refused whatever the body: the final answer now, and the body never asked for.
            if let refusal = refusal(head) { return reject(refusal, isWritable: isWritable, now: now()) }
            // The client waits for this before it sends the body. With answers still to write
            // ahead of it, it is left out (RFC 9110, 10.1.1 lets the client go on).
            sendsContinue = true
        }
        if verdict.answersBeforeBody, let rejection = verdict.rejection {
            return reject(rejection, isWritable: isWritable, now: now())
        }
        // A body the server does not read yet (bodies before it wait for their answers) has no
        // clock until reading goes on: the wait is the server's, not the client's.
        deadline = verdict.hasBody && mayReadMore(isWritable: isWritable) ? (now() + limits.bodyTimeout, .body) : nil
        return sendsContinue ? .sendContinue : .none
    }

    /// Part of the body of the request being received. Only a POST's body is kept (actions take
    /// one); others are counted and dropped, so the connection stays usable. One past
    /// ``ConnectionLimits/maxBodyBytes`` is refused.
    mutating func receivedBody(_ part: ByteBuffer, isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        guard state == .open, case .body(let request) = reading else { return .none }
        request.bodyBytes += part.readableBytes
        if request.head.method == .POST, request.bodyBytes <= limits.maxBodyBytes {
            var part = part
            if request.body == nil {
                request.body = part
            } else {
                request.body!.writeBuffer(&part)
            }
        }
        guard request.bodyBytes <= limits.maxBodyBytes else {
            return reject(.bodyTooLarge(limit: limits.maxBodyBytes), isWritable: isWritable, now: now())
        }
        return .none
    }

    /// The end of the request being received: it waits for its answer.
    mutating func receivedEnd(isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        guard state == .open, case .body(let request) = reading else { return .none }
        reading = .between
        waiting.append(request)
        deadline = nil
        return next(isWritable: isWritable, now: now())
    }

    /// The request being received (or, when the bytes never made one, a placeholder) is refused
    /// with `rejection`: it is the connection's last; nothing more is read. It is answered after
    /// the requests before it, and the connection closes once the answer is written.
    private mutating func reject(_ rejection: APIError, isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        let request: ConnectionRequest
        if case .body(let received) = reading { request = received } else { request = .placeholder(ids: &ids) }
        request.rejection = rejection
        reading = .between
        waiting.append(request)
        state = .discarding
        deadline = nil
        return next(isWritable: isWritable, now: now())
    }

    /// Bytes that are not a request (see ``HTTPRequestParser``): they are answered after the
    /// requests before them, as the reader's failure says.
    mutating func unreadable(_ failure: HTTPRequestParser.Failure, isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        guard state == .open else { return .none }
        return reject(rejection(for: failure), isWritable: isWritable, now: now())
    }

    /// An error reached the connection: it closes.
    mutating func errorCaught() -> Action {
        switch state {
        case .lingering, .discarding:
            // Its last answer is on its way.
            return .none
        case .open:
            return close()
        case .closing, .streaming, .closed:
            // A broken connection is the client's business.
            return .close
        }
    }

    /// The answer to bytes that are not a request.
    private func rejection(for failure: HTTPRequestParser.Failure) -> APIError {
        switch failure {
        case .malformed: .malformedRequest
        case .unknownMethod: .methodNotImplemented(nil)
        case .unsupportedVersion: .versionNotSupported
        case .targetTooLong: .uriTooLong(limit: limits.maxURILength)
        case .fieldsTooLarge: .headersTooLarge(limit: limits.maxHeaderBytes)
        case .unsupportedTransferCoding: .transferCodingNotImplemented
        case .lengthTooLarge: .bodyTooLarge(limit: limits.maxBodyBytes)
        }
    }

    /// A read is asked for: ``Action/read`` now, or none (it is held and owed).
    mutating func readRequested(isWritable: Bool) -> Action {
        switch state {
        case .lingering, .streaming:
            // Read (and drop) on, to see the client go away.
            return .read
        case .open where mayReadMore(isWritable: isWritable):
            return .read
        case .open, .discarding, .closing, .closed:
            readHeld = true
            return .none
        }
    }

    /// The client took some of its responses (`isWritable`), or stopped taking them.
    mutating func writabilityChanged(isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        guard isWritable else {
            // Called again while it still waits, the clock goes on.
            if writeDeadline == nil { writeDeadline = now() + limits.writeTimeout }
            return .none
        }
        writeDeadline = nil
        return next(isWritable: isWritable, now: now())
    }

    /// Nothing is being answered or waits: a new request would be answered at once.
    private var hasNothingAhead: Bool { waiting.isEmpty && answering == nil }

    /// More requests may be read: the client takes its responses, fewer than
    /// ``ConnectionLimits/maxPipelinedRequests`` wait, and none of them holds a body, but for one
    /// whose successor is being received: that one is read to its end. So at most two bodies are
    /// kept (one waiting or answered, one read) and what one read brought of a third: a head that
    /// arrived in the same read as the end of the second body does not let reading go on, as it
    /// once did, read after read, to the end of everything a client pipelined.
    private func mayReadMore(isWritable: Bool) -> Bool {
        let count = waiting.count + (answering == nil ? 0 : 1)
        guard isWritable, count < limits.maxPipelinedRequests else { return false }
        let bodies = (answering?.body == nil ? 0 : 1) + waiting.count { $0.body != nil }
        let receiving = if case .body = reading { true } else { false }
        return bodies == 0 || (bodies == 1 && receiving)
    }

    // MARK: Answering

    /// What comes next when something was answered or may be: the oldest waiting request, when
    /// nothing else is being answered, the client takes its responses and the connection still
    /// answers; else a read that is owed (a held body's clock starts then); else nothing, and when
    /// nothing is left to do, the idle clock (or a partial head's) runs.
    private mutating func next(isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        if answering == nil, state == .open || state == .discarding, isWritable, let request = waiting.popFirst() {
            answering = request
            deadline = nil
            return .answer(request)
        }
        guard state == .open else { return .none }
        var action = Action.none
        if readHeld, mayReadMore(isWritable: isWritable) {
            readHeld = false
            if case .body = reading { deadline = (now() + limits.bodyTimeout, .body) }
            action = .read
        }
        if hasNothingAhead {
            switch reading {
            case .between where deadline?.clock != .idle: deadline = (now() + limits.idleTimeout, .idle)
            case .head where deadline == nil: deadline = (now() + limits.headerTimeout, .head)
            case .between, .head, .body: break
            }
        }
        return action
    }

    /// The answer being made is ready (one made off the event loop may arrive after the
    /// connection went away): ``Action/write(_:)`` with how it ends the connection,
    /// ``Action/stream(endsAtOnce:)`` for a streamed body (the connection carries it and answers
    /// nothing more), or none.
    mutating func answerReady(streams: Bool) -> Action {
        guard let request = answering, state == .open || state == .discarding else { return .none }
        answering = nil
        if streams {
            waiting.removeAll()
            state = .streaming
            deadline = nil
            // Asked for while the server drains: it ends at once, rather than holding the drain up.
            return .stream(endsAtOnce: isQuiescing)
        }
        answered += 1
        if request.head.isKeepAlive, !isQuiescing, request.rejection == nil, answered < limits.maxRequestsPerConnection {
            return .write(.keepAlive)
        }
        state = .closing
        return .write(request.rejection == nil ? .close : .closeAndLinger)
    }

    /// A response was written (kept alive): what comes next.
    mutating func responseWritten(isWritable: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        next(isWritable: isWritable, now: now())
    }

    /// The last response is out (`lingers` after a rejection): the output closes and what arrives
    /// is dropped until the linger deadline; else the connection closes.
    mutating func lastResponseSent(lingers: Bool, now: @autoclosure () -> NIODeadline) -> Action {
        guard lingers, state == .closing else { return .close }
        state = .lingering
        deadline = (now() + limits.lingerTimeout, .close)
        return .closeOutputAndDrain
    }

    /// The streamed body ended: the connection closes.
    mutating func streamEnded() {
        state = .closing
    }

    // MARK: Life

    /// The server is shutting down.
    mutating func quiesce() -> Action {
        isQuiescing = true
        switch state {
        case .streaming:
            return .endStream
        case .lingering:
            // Its answer is out; the client has had its moment.
            state = .closing
            return .close
        case .open where hasNothingAhead && isBetweenRequests:
            state = .closing
            return .close
        case .open, .discarding, .closing, .closed:
            return .none
        }
    }

    /// No request has been read in part.
    private var isBetweenRequests: Bool {
        if case .body = reading { false } else { true }
    }

    /// A deadline passed (the sweeper's `now`): a body not arrived in time is refused with 408
    /// (after the requests before it); anything else closes the connection. Nothing when no
    /// deadline passed.
    mutating func timedOut(now: NIODeadline, isWritable: Bool) -> Action {
        if let writeDeadline, writeDeadline <= now {
            // Nothing can be answered to a client that does not read.
            return close()
        }
        guard let deadline, deadline.at <= now else { return .none }
        guard deadline.clock == .body, state == .open, case .body = reading else { return close() }
        return reject(.bodyTimeout, isWritable: isWritable, now: now)
    }

    /// The connection closes now.
    private mutating func close() -> Action {
        state = .closing
        deadline = nil
        writeDeadline = nil
        return .close
    }

    /// The channel went inactive: nothing more is answered.
    mutating func closed() {
        state = .closed
        reading = .between
        waiting.removeAll()
        deadline = nil
        writeDeadline = nil
    }
}
