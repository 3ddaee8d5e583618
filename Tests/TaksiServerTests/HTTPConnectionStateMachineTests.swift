import NIOCore
import NIOHTTP1
import Testing

@testable import TaksiServer

/// The connection's rules, driven as a value: no channel, no socket, no responder, and no clock but
/// the `now` each event is given.
@Suite("Connection state machine")
struct HTTPConnectionStateMachineTests {
    typealias Machine = HTTPConnectionStateMachine
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    let limits = ConnectionLimits()

    func head(
        _ method: HTTPMethod = .GET, _ uri: String = "/screens/home", version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = ["Host": "a"]
    ) -> RequestHead {
        RequestHead(method: method, uri: uri, headers: headers, version: version)
    }

    /// An action as a line: what the handler would do.
    func line(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .decode: "decode"
        case .drop: "drop"
        case .read: "read"
        case .sendContinue: "continue"
        case .answer(let request): "answer \(request.head.uri)" + (request.rejection.map { " \($0.status.code)" } ?? "")
        case .write(let framing): "write \(framing)"
        case .stream(let endsAtOnce): "stream" + (endsAtOnce ? " and end" : "")
        case .closeOutputAndDrain: "close output and drain"
        case .endStream: "end stream"
        case .close: "close"
        }
    }

    /// Receives a head; returns what the machine says.
    func receiveHead(
        _ machine: inout Machine, _ head: RequestHead, isWritable: Bool = true, at now: NIODeadline = start,
        refusal: APIError? = nil
    ) -> String {
        line(machine.receivedHead(head, isWritable: isWritable, now: now) { _ in refusal })
    }

    /// Receives a whole request without a body; returns what the machine says after its end.
    @discardableResult
    func receive(
        _ machine: inout Machine, _ uri: String = "/screens/home", version: HTTPVersion = .http1_1, isWritable: Bool = true,
        at now: NIODeadline = start
    ) -> String {
        _ = receiveHead(&machine, head(.GET, uri, version: version), isWritable: isWritable, at: now)
        return line(machine.receivedEnd(isWritable: isWritable, now: now))
    }

    /// Writes the answer being made (kept alive) and returns what comes next.
    func answer(_ machine: inout Machine, isWritable: Bool = true, at now: NIODeadline = start) -> String {
        let write = line(machine.answerReady(streams: false))
        guard write == "write keepAlive" else { return write }
        return line(machine.responseWritten(isWritable: isWritable, now: now))
    }

    @Test("pipelined requests are answered in order, one at a time, and the connection is idle after the last")
    func pipelining() {
        var machine = Machine(limits: limits, now: Self.start)
        #expect(receive(&machine, "/a") == "answer /a")
        #expect(receive(&machine, "/b") == "none", "one answer at a time")
        #expect(receive(&machine, "/c") == "none")
        #expect(answer(&machine) == "answer /b")
        #expect(answer(&machine) == "answer /c")
        #expect(answer(&machine) == "none")
        #expect(machine.deadline?.clock == .idle)
        #expect(machine.state == .open)
    }

    @Test("nothing is answered or read while the client does not take its responses; the held read is owed after")
    func notWritable() {
        var machine = Machine(limits: limits, now: Self.start)
        #expect(receive(&machine, isWritable: false) == "none")
        #expect(line(machine.readRequested(isWritable: false)) == "none")
        #expect(line(machine.writabilityChanged(isWritable: false, now: Self.start)) == "none")
        #expect(line(machine.writabilityChanged(isWritable: true, now: Self.start)) == "answer /screens/home")
        #expect(answer(&machine) == "read", "the held read is owed")
        #expect(line(machine.writabilityChanged(isWritable: true, now: Self.start)) == "none", "a held read is owed once")
    }

    @Test("reading stops at maxPipelinedRequests waiting requests and goes on when one is answered")
    func pipelineLimit() {
        var machine = Machine(limits: .with { $0.maxPipelinedRequests = 3 }, now: Self.start)
        for _ in 0..<2 { receive(&machine) }
        #expect(line(machine.readRequested(isWritable: true)) == "read")
        receive(&machine)
        #expect(line(machine.readRequested(isWritable: true)) == "none", "three wait (the one being answered counts)")
        #expect(answer(&machine) == "answer /screens/home", "the second")
        #expect(answer(&machine) == "answer /screens/home", "the third")
        #expect(answer(&machine) == "read", "the held read is owed once the answers are out")
    }

    @Test("nothing more is read while a waiting request holds a body; a request being received is read to its end")
    func waitingBody() {
        var machine = Machine(limits: limits, now: Self.start)
        let submit = head(.POST, "/screens/login/actions/submit", headers: ["Host": "a", "Content-Length": "4"])
        #expect(receiveHead(&machine, submit) == "none")
        #expect(line(machine.receivedBody(ByteBuffer(string: "ab"), isWritable: true, now: Self.start)) == "none")
        #expect(line(machine.readRequested(isWritable: true)) == "read", "its body is still arriving")
        _ = machine.receivedBody(ByteBuffer(string: "cd"), isWritable: true, now: Self.start)
        guard case .answer(let request) = machine.receivedEnd(isWritable: true, now: Self.start) else {
            Issue.record("the submit is answered")
            return
        }
        #expect(request.body == ByteBuffer(string: "abcd"), "a POST's body is kept whole")
        #expect(line(machine.readRequested(isWritable: true)) == "none", "nor while its answer is being made")
        #expect(answer(&machine) == "read")
    }

    @Test("a head read with the end of the second body does not let reading go on; its body has no clock until it does")
    func thirdBody() {
        var machine = Machine(limits: limits, now: Self.start)
        let post = head(.POST, "/screens/login/actions/submit", headers: ["Host": "a", "Content-Length": "2"])
        _ = receiveHead(&machine, post)
        _ = machine.receivedBody(ByteBuffer(string: "ab"), isWritable: true, now: Self.start)
        #expect(line(machine.receivedEnd(isWritable: true, now: Self.start)) == "answer /screens/login/actions/submit")
        _ = receiveHead(&machine, post)
        #expect(line(machine.readRequested(isWritable: true)) == "read", "the second body is read to its end")
        #expect(machine.deadline?.clock == .body)
        _ = machine.receivedBody(ByteBuffer(string: "cd"), isWritable: true, now: Self.start)
        _ = machine.receivedEnd(isWritable: true, now: Self.start)
        // The same read brought the third head.
        _ = receiveHead(&machine, post, at: Self.start + .seconds(1))
        #expect(line(machine.readRequested(isWritable: true)) == "none", "two bodies are kept: nothing more is read")
        #expect(machine.deadline == nil, "the third body's wait is the server's")
        #expect(line(machine.answerReady(streams: false)) == "write keepAlive")
        #expect(line(machine.responseWritten(isWritable: true, now: Self.start + .seconds(2))) == "answer /screens/login/actions/submit")
        #expect(answer(&machine, at: Self.start + .seconds(3)) == "read", "the first two answered: the third body is read")
        #expect(machine.deadline?.clock == .body)
        #expect(machine.deadline?.at == Self.start + .seconds(3) + limits.bodyTimeout, "its clock starts when it is read")
    }

    @Test("a GET's body is counted, not kept; one past maxBodyBytes is refused")
    func bodyLimit() {
        var machine = Machine(limits: .with { $0.maxBodyBytes = 5 }, now: Self.start)
        _ = receiveHead(&machine, head(.GET, headers: ["Host": "a", "Transfer-Encoding": "chunked"]))
        #expect(line(machine.receivedBody(ByteBuffer(string: "12345"), isWritable: true, now: Self.start)) == "none")
        guard case .answer(let refused) = machine.receivedBody(ByteBuffer(string: "6"), isWritable: true, now: Self.start) else {
            Issue.record("the request is refused")
            return
        }
        #expect(refused.body == nil)
        #expect(refused.rejection?.status == .payloadTooLarge)
    }

    @Test("a rejection is the connection's last request: answered after the ones before it, then the connection lingers")
    func rejection() {
        var machine = Machine(limits: limits, now: Self.start)
        #expect(receive(&machine, "/first") == "answer /first")
        _ = machine.bytesArrived(now: Self.start)
        #expect(line(machine.unreadable(.malformed, isWritable: true, now: Self.start)) == "none", "after /first")
        #expect(machine.state == .discarding)
        #expect(line(machine.readRequested(isWritable: true)) == "none")
        #expect(
            line(machine.unreadable(.malformed, isWritable: true, now: Self.start)) == "none",
            "one answer for one broken stream of bytes")
        #expect(line(machine.errorCaught()) == "none", "its last answer is on its way")
        #expect(line(machine.bytesArrived(now: Self.start)) == "drop")
        #expect(answer(&machine) == "answer - 400", "bytes that made no request are answered as a placeholder")
        #expect(line(machine.answerReady(streams: false)) == "write closeAndLinger")
        #expect(machine.state == .closing)
        #expect(line(machine.lastResponseSent(lingers: true, now: Self.start)) == "close output and drain")
        #expect(machine.deadline?.at == Self.start + limits.lingerTimeout)
        #expect(line(machine.readRequested(isWritable: true)) == "read", "a lingering connection reads, to drop what arrives")
        var lingered = machine
        #expect(line(lingered.timedOut(now: Self.start + limits.lingerTimeout, isWritable: true)) == "close")
        #expect(line(lingered.unreadable(.malformed, isWritable: true, now: Self.start)) == "none", "nothing is answered any more")
        #expect(line(lingered.errorCaught()) == "close")
        #expect(line(machine.quiesce()) == "close", "shutdown does not wait for the linger time")
    }

    @Test("HTTP/1.0 without keep-alive and the last of maxRequestsPerConnection close the connection")
    func closingResponses() {
        var old = Machine(limits: limits, now: Self.start)
        #expect(receive(&old, version: .http1_0) == "answer /screens/home")
        #expect(line(old.answerReady(streams: false)) == "write close")
        #expect(old.state == .closing)
        #expect(line(old.lastResponseSent(lingers: false, now: Self.start)) == "close")

        var bounded = Machine(limits: .with { $0.maxRequestsPerConnection = 2 }, now: Self.start)
        for _ in 0..<3 { receive(&bounded) }
        #expect(answer(&bounded) == "answer /screens/home")
        #expect(line(bounded.answerReady(streams: false)) == "write close")
        #expect(line(bounded.responseWritten(isWritable: true, now: Self.start)) == "none", "the third is never answered")
    }

    @Test("quiescing closes an idle connection now, a busy one after its next response, and ends a stream")
    func quiescing() {
        var idle = Machine(limits: limits, now: Self.start)
        #expect(line(idle.quiesce()) == "close")
        #expect(idle.state == .closing)

        var busy = Machine(limits: limits, now: Self.start)
        receive(&busy)
        receive(&busy)
        #expect(line(busy.quiesce()) == "none")
        #expect(line(busy.answerReady(streams: false)) == "write close", "the next response says Connection: close")

        var receiving = Machine(limits: limits, now: Self.start)
        _ = receiveHead(&receiving, head(.POST, headers: ["Host": "a", "Content-Length": "3"]))
        #expect(line(receiving.quiesce()) == "none", "a request being read is answered")

        var streaming = Machine(limits: limits, now: Self.start)
        receive(&streaming)
        #expect(line(streaming.answerReady(streams: true)) == "stream")
        #expect(line(streaming.quiesce()) == "end stream")
        streaming.streamEnded()
        #expect(streaming.state == .closing)

        var late = Machine(limits: limits, now: Self.start)
        receive(&late)
        _ = late.quiesce()
        #expect(line(late.answerReady(streams: true)) == "stream and end", "a stream asked for while the server drains ends at once")
    }

    @Test("a stream carries the connection: requests behind it are dropped, what arrives is read and dropped")
    func streams() {
        var machine = Machine(limits: limits, now: Self.start)
        receive(&machine, "/preview/events.stream")
        receive(&machine, "/behind")
        #expect(line(machine.answerReady(streams: true)) == "stream")
        #expect(machine.state == .streaming)
        #expect(machine.deadline == nil, "a stream has its own end")
        #expect(line(machine.bytesArrived(now: Self.start)) == "drop")
        #expect(line(machine.readRequested(isWritable: false)) == "read", "reads go on, to see the client go away")
        #expect(line(machine.errorCaught()) == "close")
    }

    @Test("every deadline is the machine's: idle, head, body, write and linger, each from its own event")
    func deadlines() {
        let t = Self.start
        var machine = Machine(limits: limits, now: t)
        #expect(machine.deadline?.clock == .idle)
        #expect(machine.nextDeadline == t + limits.idleTimeout)
        #expect(line(machine.timedOut(now: t + limits.idleTimeout - .nanoseconds(1), isWritable: true)) == "none")

        // A head's clock starts with its first byte, not before.
        #expect(line(machine.bytesArrived(now: t + .seconds(5))) == "decode")
        #expect(machine.deadline?.clock == .head)
        #expect(machine.nextDeadline == t + .seconds(5) + limits.headerTimeout)
        _ = machine.bytesArrived(now: t + .seconds(6))
        #expect(machine.nextDeadline == t + .seconds(5) + limits.headerTimeout, "more bytes of the same head do not move it")

        // Its body's clock starts with the head.
        let post = head(.POST, "/screens/login/actions/submit", headers: ["Host": "a", "Content-Length": "4"])
        _ = receiveHead(&machine, post, at: t + .seconds(7))
        #expect(machine.deadline?.clock == .body)
        #expect(machine.nextDeadline == t + .seconds(7) + limits.bodyTimeout)
        let refused = line(machine.timedOut(now: t + .seconds(7) + limits.bodyTimeout, isWritable: true))
        #expect(refused == "answer /screens/login/actions/submit 408")
        #expect(machine.deadline == nil, "no clock while the answer is made")

        // A client that takes none of its responses.
        var slow = Machine(limits: limits, now: t)
        receive(&slow, isWritable: false, at: t)
        _ = slow.writabilityChanged(isWritable: false, now: t + .seconds(1))
        _ = slow.writabilityChanged(isWritable: false, now: t + .seconds(2))
        #expect(slow.writeDeadline == t + .seconds(1) + limits.writeTimeout, "the clock goes on while it still waits")
        #expect(line(slow.timedOut(now: t + .seconds(1) + limits.writeTimeout, isWritable: false)) == "close")
        _ = slow.writabilityChanged(isWritable: true, now: t + .seconds(3))
        #expect(slow.writeDeadline == nil)

        // An answered request leaves the idle clock; a head that arrived in part while it was
        // answered gets its own.
        var keepAlive = Machine(limits: limits, now: t)
        receive(&keepAlive, at: t)
        #expect(keepAlive.deadline == nil, "the wait for an answer is the server's")
        #expect(answer(&keepAlive, at: t + .seconds(30)) == "none")
        #expect(keepAlive.nextDeadline == t + .seconds(30) + limits.idleTimeout)
        #expect(line(keepAlive.timedOut(now: t + .seconds(30) + limits.idleTimeout, isWritable: true)) == "close")

        var partial = Machine(limits: limits, now: t)
        receive(&partial, at: t)
        _ = partial.bytesArrived(now: t + .seconds(1))
        #expect(partial.deadline == nil)
        _ = answer(&partial, at: t + .seconds(2))
        #expect(partial.deadline?.clock == .head)
        #expect(partial.nextDeadline == t + .seconds(2) + limits.headerTimeout)
    }

    @Test("bytes that are not a request are answered as the reader's failure says, after the requests before them")
    func refusedBytes() {
        func refusal(_ failure: HTTPRequestParser.Failure, limits: ConnectionLimits = ConnectionLimits()) -> String {
            var machine = Machine(limits: limits, now: Self.start)
            _ = machine.bytesArrived(now: Self.start)
            return line(machine.unreadable(failure, isWritable: true, now: Self.start))
        }
        #expect(refusal(.targetTooLong) == "answer - 414")
        #expect(refusal(.fieldsTooLarge) == "answer - 431")
        #expect(refusal(.unknownMethod) == "answer - 501")
        #expect(refusal(.unsupportedTransferCoding) == "answer - 501")
        #expect(refusal(.unsupportedVersion) == "answer - 505")
        #expect(refusal(.lengthTooLarge) == "answer - 413")
        #expect(refusal(.malformed) == "answer - 400")
    }

    @Test("an error on an open connection that is not the reader's closes it")
    func errors() {
        var machine = Machine(limits: limits, now: Self.start)
        #expect(line(machine.errorCaught()) == "close")
    }

    @Test("an upgrade offer is an ordinary request: answered, and the connection reads on")
    func upgrade() {
        var machine = Machine(limits: limits, now: Self.start)
        _ = receiveHead(&machine, head(headers: ["Host": "a", "Upgrade": "websocket", "Connection": "Upgrade"]))
        #expect(line(machine.receivedEnd(isWritable: true, now: Self.start)) == "answer /screens/home")
    }

    @Test("a client waiting with Expect: 100-continue is told to send, or refused before it does")
    func expectations() {
        let continues = head(
            .POST, "/screens/login/actions/submit", headers: ["Host": "a", "Expect": "100-continue", "Content-Length": "5"])
        var machine = Machine(limits: limits, now: Self.start)
        #expect(receiveHead(&machine, continues) == "continue")
        var refused = Machine(limits: limits, now: Self.start)
        #expect(receiveHead(&refused, continues, refusal: .methodNotAllowed(.POST)) == "answer /screens/login/actions/submit 405")
        var behind = Machine(limits: limits, now: Self.start)
        receive(&behind, "/first")
        #expect(receiveHead(&behind, continues) == "none", "behind another answer, no interim response")
    }

    @Test("a connection that went away answers nothing, even a reply that arrives later")
    func closed() {
        var machine = Machine(limits: limits, now: Self.start)
        receive(&machine)
        receive(&machine)
        machine.closed()
        #expect(line(machine.answerReady(streams: false)) == "none")
        #expect(line(machine.readRequested(isWritable: true)) == "none")
        #expect(line(machine.quiesce()) == "none")
        #expect(machine.nextDeadline == nil)
    }

    @Test("what the head decides: limits, Host, lengths and expectations")
    func verdicts() {
        func verdict(uri: String = "/", version: HTTPVersion = .http1_1, _ headers: HTTPHeaders) -> ConnectionRequest.Verdict {
            var ids = RequestIDs()
            let head = RequestHead(method: .POST, uri: uri, headers: headers, version: version)
            let limits = ConnectionLimits.with {
                $0.maxURILength = 20
                $0.maxBodyBytes = 100
            }
            return ConnectionRequest.read(head, limits: limits, ids: &ids).verdict
        }
        #expect(verdict(uri: String(repeating: "a", count: 21), ["Host": "a"]).rejection?.status == .uriTooLong)
        #expect(verdict(["Host": "a", "host": "b"]).rejection?.status == .badRequest)
        #expect(verdict([:]).rejection?.status == .badRequest, "HTTP/1.1 needs a Host")
        #expect(verdict(version: .http1_0, [:]).rejection == nil)
        let large = verdict(["Host": "a", "Content-Length": "101"])
        #expect(large.rejection?.status == .payloadTooLarge)
        #expect(large.answersBeforeBody)
        let tea = verdict(["Host": "a", "Expect": "tea"])
        #expect(tea.rejection?.status == .expectationFailed)
        #expect(tea.answersBeforeBody)
        let continues = verdict(["Host": "a", "Expect": "100-Continue", "Content-Length": "5"])
        #expect(continues.rejection == nil)
        #expect(continues.expectsContinue)
        #expect(continues.hasBody)
        #expect(!verdict(["Host": "a", "Expect": "100-continue"]).expectsContinue, "no body, nothing to wait for")
    }

    @Test("request ids: the client's when it is safe to echo, else this connection's prefix and a counter")
    func requestIDs() {
        var ids = RequestIDs()
        func text(_ id: RequestID) -> String {
            var buffer = ByteBuffer()
            ids.write(id, to: &buffer)
            return String(buffer: buffer)
        }
        let given = ids.id(given: "trace-42")
        #expect(text(given) == "trace-42")
        let unsafe = ids.id(given: "two words")
        let first = text(unsafe)
        let none = ids.id(given: nil)
        let second = text(none)
        #expect(first.hasSuffix("-1"))
        #expect(second.hasSuffix("-2"))
        #expect(first.dropLast(2) == second.dropLast(2))
        let long = ids.id(given: String(repeating: "a", count: 129))
        #expect(text(long).hasSuffix("-3"))
    }
}
