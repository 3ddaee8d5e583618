import NIOCore

/// The life of one HTTP/1.1 connection as a value: which requests are read, which wait, which one
/// is answered next, whether more may be read, and how the connection ends. It does no I/O: each
/// event returns what to do, and ``HTTPConnectionHandler`` does it, so every rule here is tested
/// without a socket (`HTTPConnectionStateMachineTests`).
///
/// Requests are answered in the order they arrived (pipelined ones included), one at a time.
/// Backpressure: while the client does not take its responses, or
/// ``ConnectionLimits/maxPipelinedRequests`` requests wait, or a waiting request holds a body,
/// nothing more is read (a read asked for then is held and owed).
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

    /// How a response ends its connection.
    enum Framing: Equatable {
        /// The connection stays open for the next request.
        case keepAlive
        /// `Connection: close`; once it is written the connection closes...
        case close
        /// ...or, for a rejected request, lingers: the output closes and the input is drained.
        case closeAndLinger
    }

    /// What to do when the server asks connections to quiesce.
    enum QuiesceAction: Equatable {
        /// Nothing now: the next response says `Connection: close`.
        case none
        /// Nothing is in progress: close now.
        case close
        /// End the streamed body.
        case endStream
    }

    /// What to do with an error from the pipeline.
    enum ErrorAction: Equatable {
        /// Answer it (a request that is not HTTP) after the requests before it.
        case reject
        /// Close the connection (a broken socket, or the connection is ending anyway).
        case close
        /// Nothing: the connection is already discarding or lingering.
        case ignore
    }

    private(set) var state = State.open
    /// The server is shutting down: the next response closes the connection.
    private(set) var isQuiescing = false
    /// The request whose head arrived and whose end has not.
    private var receiving: ConnectionRequest?
    /// Complete requests not answered yet, oldest first.
    private var waiting = CircularBuffer<ConnectionRequest>(initialCapacity: 4)
    /// The oldest request's answer is being made (off the event loop, or being written now).
    private var answering: ConnectionRequest?
    /// A read was asked for and held back; it is owed once reading may go on.
    private var readHeld = false
    /// Responses written on this connection (see ``ConnectionLimits/maxRequestsPerConnection``).
    private var answered = 0

    private let maxPipelinedRequests: Int
    private let maxRequestsPerConnection: Int
    let maxBodyBytes: Int

    init(limits: ConnectionLimits) {
        maxPipelinedRequests = limits.maxPipelinedRequests
        maxRequestsPerConnection = limits.maxRequestsPerConnection
        maxBodyBytes = limits.maxBodyBytes
    }

    // MARK: Reading

    /// Whether what arrives is read as requests (else it is dropped).
    var readsRequests: Bool { state == .open }

    /// Nothing is being answered or waits: a new request would be answered at once.
    var hasNothingAhead: Bool { waiting.isEmpty && answering == nil }

    /// No request is in progress on an open connection: the idle timeout runs.
    var isIdle: Bool { state == .open && hasNothingAhead && receiving == nil }

    /// A request's head arrived.
    mutating func receivedHead(_ request: ConnectionRequest) {
        precondition(state == .open, "a head read on a connection that reads no requests")
        receiving = request
    }

    /// Part of the body of the request being received. Only a POST's body is kept (actions take
    /// one); others are counted and dropped, so the connection stays usable.
    /// - Returns: false when the body passed ``ConnectionLimits/maxBodyBytes`` (reject it).
    mutating func receivedBody(_ part: ByteBuffer) -> Bool {
        guard var request = receiving else { return true }
        receiving = nil
        defer { receiving = request }
        request.bodyBytes += part.readableBytes
        guard request.bodyBytes <= maxBodyBytes else { return false }
        if request.head.method == .POST {
            var part = part
            if request.body == nil {
                request.body = part
            } else {
                request.body!.writeBuffer(&part)
            }
        }
        return true
    }

    /// The end of the request being received: it waits for its answer.
    /// - Returns: the request, or nil when none was being received.
    mutating func receivedEnd() -> ConnectionRequest? {
        guard let request = receiving else { return nil }
        receiving = nil
        waiting.append(request)
        return request
    }

    /// The request being received (or, when the bytes never made one, `placeholder`) is refused
    /// with `rejection`: it is the connection's last; nothing more is read.
    mutating func reject(_ rejection: APIError, placeholder: () -> ConnectionRequest) {
        var request = receiving ?? placeholder()
        request.rejection = rejection
        receiving = nil
        waiting.append(request)
        state = .discarding
    }

    /// A read is asked for. Returns whether to read now; if not, it is held and owed.
    mutating func readRequested(isWritable: Bool) -> Bool {
        switch state {
        case .lingering, .streaming:
            // Read (and drop) on, to see the client go away.
            return true
        case .open where mayReadMore(isWritable: isWritable):
            return true
        case .open, .discarding, .closing, .closed:
            readHeld = true
            return false
        }
    }

    /// Whether a held read is owed now (answers went out, or the client read its responses).
    mutating func owedRead(isWritable: Bool) -> Bool {
        guard readHeld, state == .open, mayReadMore(isWritable: isWritable) else { return false }
        readHeld = false
        return true
    }

    /// More requests may be read: the client takes its responses, fewer than
    /// ``ConnectionLimits/maxPipelinedRequests`` wait, and none of them holds a body, but for one
    /// whose successor is being received: that one is read to its end. So at most two bodies are
    /// kept (one waiting or answered, one read) and what one read brought of a third: a head that
    /// arrived in the same read as the end of the second body does not let reading go on, as it
    /// once did, read after read, to the end of everything a client pipelined.
    private func mayReadMore(isWritable: Bool) -> Bool {
        let count = waiting.count + (answering == nil ? 0 : 1)
        guard isWritable, count < maxPipelinedRequests else { return false }
        let bodies = (answering?.body == nil ? 0 : 1) + waiting.count { $0.body != nil }
        return bodies == 0 || (bodies == 1 && receiving != nil)
    }

    /// A request is being received whose body the server does not read now (reads are held):
    /// its body clock should not run, since the wait is the server's.
    func holdsBody(isWritable: Bool) -> Bool {
        receiving != nil && !mayReadMore(isWritable: isWritable)
    }

    /// A request's body is being received (its head arrived, its end has not).
    var isReceiving: Bool { receiving != nil }

    // MARK: Answering

    /// The request to answer now, if one may be: the oldest waiting, when nothing else is being
    /// answered, the client takes its responses and the connection still answers.
    mutating func nextToAnswer(isWritable: Bool) -> ConnectionRequest? {
        guard answering == nil, state == .open || state == .discarding, isWritable, let request = waiting.popFirst() else {
            return nil
        }
        answering = request
        return request
    }

    /// An answer made off the event loop arrived. Returns whether to write it (not when the
    /// connection went away meanwhile).
    func replyArrived() -> Bool {
        answering != nil && (state == .open || state == .discarding)
    }

    /// The answer to the request being answered is written now: how it ends the connection.
    mutating func writing() -> Framing {
        guard let request = answering else { preconditionFailure("a response written with no request being answered") }
        answering = nil
        answered += 1
        if request.head.isKeepAlive, !isQuiescing, request.rejection == nil, answered < maxRequestsPerConnection {
            return .keepAlive
        }
        state = .closing
        return request.rejection == nil ? .close : .closeAndLinger
    }

    /// The answer is a streamed body: the connection carries it and answers nothing more.
    mutating func streaming() {
        answering = nil
        waiting.removeAll()
        state = .streaming
    }

    /// The last response of a rejected request is out: the output closes, the input is drained.
    mutating func lingering() {
        state = .lingering
    }

    /// The streamed body ended: the connection closes.
    mutating func streamEnded() {
        state = .closing
    }

    // MARK: Life

    /// The server is shutting down.
    mutating func quiesce() -> QuiesceAction {
        isQuiescing = true
        switch state {
        case .streaming:
            return .endStream
        case .lingering:
            // Its answer is out; the client has had its moment.
            state = .closing
            return .close
        case .open where isIdle:
            state = .closing
            return .close
        case .open, .discarding, .closing, .closed:
            return .none
        }
    }

    /// The request's body did not arrive in time. Returns whether to reject it (with 408).
    func bodyTimedOut() -> Bool {
        receiving != nil && state == .open
    }

    /// An error reached the connection; `isParserError` when the bytes were not HTTP.
    func errorCaught(isParserError: Bool) -> ErrorAction {
        switch state {
        case .lingering, .discarding: .ignore
        case .open where isParserError: .reject
        case .open, .closing, .streaming, .closed: .close
        }
    }

    /// The channel went inactive: nothing more is answered.
    mutating func closed() {
        state = .closed
        receiving = nil
        waiting.removeAll()
    }
}
