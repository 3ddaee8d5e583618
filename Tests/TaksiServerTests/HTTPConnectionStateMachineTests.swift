import NIOCore
import NIOHTTP1
import Testing

@testable import TaksiServer

/// The connection's rules, driven as a value: no channel, no socket, no responder.
@Suite("Connection state machine")
struct HTTPConnectionStateMachineTests {
    /// A request as the handler makes it from a head.
    func request(
        _ method: HTTPMethod = .GET, _ uri: String = "/screens/home", version: HTTPVersion = .http1_1, headers: HTTPHeaders = ["Host": "a"]
    ) -> ConnectionRequest {
        var ids = RequestIDs()
        let head = HTTPRequestHead(version: version, method: method, uri: uri, headers: headers)
        return ConnectionRequest.read(head, limits: ConnectionLimits(), ids: &ids).request
    }

    /// Bytes that made no request, as the handler answers them.
    func placeholder() -> ConnectionRequest {
        var ids = RequestIDs()
        return .placeholder(ids: &ids)
    }

    /// Receives a whole request without a body.
    func receive(_ machine: inout HTTPConnectionStateMachine, _ uri: String = "/screens/home", version: HTTPVersion = .http1_1) {
        machine.receivedHead(request(.GET, uri, version: version))
        _ = machine.receivedEnd()
    }

    @Test("pipelined requests are answered in order, one at a time, and the connection is idle after the last")
    func pipelining() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        #expect(machine.isIdle)
        for uri in ["/a", "/b", "/c"] { receive(&machine, uri) }
        #expect(!machine.isIdle)

        let first = machine.nextToAnswer(isWritable: true)
        #expect(first?.head.uri == "/a")
        let next = machine.nextToAnswer(isWritable: true)
        #expect(next == nil, "one answer at a time")
        let framing = machine.writing()
        #expect(framing == .keepAlive)
        let next2 = machine.nextToAnswer(isWritable: true)
        #expect(next2?.head.uri == "/b")
        let framing2 = machine.writing()
        #expect(framing2 == .keepAlive)
        let next3 = machine.nextToAnswer(isWritable: true)
        #expect(next3?.head.uri == "/c")
        #expect(machine.replyArrived(), "an answer made off the loop is written on an open connection")
        let framing3 = machine.writing()
        #expect(framing3 == .keepAlive)
        let next4 = machine.nextToAnswer(isWritable: true)
        #expect(next4 == nil)
        #expect(machine.isIdle)
        #expect(machine.state == .open)
    }

    @Test("nothing is answered or read while the client does not take its responses; the held read is owed after")
    func notWritable() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&machine)
        let next = machine.nextToAnswer(isWritable: false)
        #expect(next == nil)
        let reads = machine.readRequested(isWritable: false)
        #expect(!reads)
        let owed = machine.owedRead(isWritable: false)
        #expect(!owed)
        let next2 = machine.nextToAnswer(isWritable: true)
        #expect(next2 != nil)
        _ = machine.writing()
        let owed2 = machine.owedRead(isWritable: true)
        #expect(owed2)
        let owed3 = machine.owedRead(isWritable: true)
        #expect(!owed3, "a held read is owed once")
    }

    @Test("reading stops at maxPipelinedRequests waiting requests and goes on when one is answered")
    func pipelineLimit() {
        var machine = HTTPConnectionStateMachine(limits: .with { $0.maxPipelinedRequests = 3 })
        for _ in 0..<2 { receive(&machine) }
        let reads = machine.readRequested(isWritable: true)
        #expect(reads)
        receive(&machine)
        let reads2 = machine.readRequested(isWritable: true)
        #expect(!reads2, "three wait")
        _ = machine.nextToAnswer(isWritable: true)
        let owed = machine.owedRead(isWritable: true)
        #expect(!owed, "the one being answered still counts")
        _ = machine.writing()
        let owed2 = machine.owedRead(isWritable: true)
        #expect(owed2)
    }

    @Test("nothing more is read while a waiting request holds a body; a request being received is read to its end")
    func waitingBody() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        machine.receivedHead(request(.POST, "/screens/login/actions/submit", headers: ["Host": "a", "Content-Length": "4"]))
        let accepted = machine.receivedBody(ByteBuffer(string: "ab"))
        #expect(accepted)
        let reads = machine.readRequested(isWritable: true)
        #expect(reads, "its body is still arriving")
        let acceptedRest = machine.receivedBody(ByteBuffer(string: "cd"))
        #expect(acceptedRest)
        let submit = machine.receivedEnd()
        #expect(submit?.body == ByteBuffer(string: "abcd"), "a POST's body is kept whole")
        let reads2 = machine.readRequested(isWritable: true)
        #expect(!reads2)
        _ = machine.nextToAnswer(isWritable: true)
        let owed = machine.owedRead(isWritable: true)
        #expect(!owed, "nor while its answer is being made")
        _ = machine.writing()
        let owed2 = machine.owedRead(isWritable: true)
        #expect(owed2)
    }

    @Test("a head read with the end of the second body does not let reading go on; its body has no clock until it does")
    func thirdBody() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        func post() -> ConnectionRequest {
            request(.POST, "/screens/login/actions/submit", headers: ["Host": "a", "Content-Length": "2"])
        }
        machine.receivedHead(post())
        _ = machine.receivedBody(ByteBuffer(string: "ab"))
        _ = machine.receivedEnd()
        _ = machine.nextToAnswer(isWritable: true)
        machine.receivedHead(post())
        let readsSecond = machine.readRequested(isWritable: true)
        #expect(readsSecond, "the second body is read to its end")
        #expect(!machine.holdsBody(isWritable: true))
        _ = machine.receivedBody(ByteBuffer(string: "cd"))
        _ = machine.receivedEnd()
        // The same read brought the third head.
        machine.receivedHead(post())
        let readsThird = machine.readRequested(isWritable: true)
        #expect(!readsThird, "two bodies are kept: nothing more is read")
        #expect(machine.holdsBody(isWritable: true))
        _ = machine.writing()
        let owed = machine.owedRead(isWritable: true)
        #expect(owed, "the first answered: the third body is read")
        #expect(!machine.holdsBody(isWritable: true))
    }

    @Test("a GET's body is counted, not kept; one past maxBodyBytes is refused")
    func bodyLimit() {
        var machine = HTTPConnectionStateMachine(limits: .with { $0.maxBodyBytes = 5 })
        machine.receivedHead(request(.GET, headers: ["Host": "a", "Transfer-Encoding": "chunked"]))
        let accepted = machine.receivedBody(ByteBuffer(string: "12345"))
        #expect(accepted)
        let acceptedMore = machine.receivedBody(ByteBuffer(string: "6"))
        #expect(!acceptedMore)
        machine.reject(.bodyTooLarge(limit: 5), placeholder: placeholder)
        let refused = machine.nextToAnswer(isWritable: true)
        #expect(refused?.body == nil)
        #expect(refused?.rejection?.status == .payloadTooLarge)
    }

    @Test("a rejection is the connection's last request: answered after the ones before it, then the connection lingers")
    func rejection() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&machine, "/first")
        machine.reject(.malformedRequest, placeholder: placeholder)
        #expect(machine.state == .discarding)
        #expect(!machine.readsRequests)
        let reads = machine.readRequested(isWritable: true)
        #expect(!reads)
        #expect(machine.errorCaught(isParserError: true) == .ignore, "one answer for one broken stream of bytes")

        let next = machine.nextToAnswer(isWritable: true)
        #expect(next?.head.uri == "/first")
        let framing = machine.writing()
        #expect(framing == .keepAlive)
        let owed = machine.owedRead(isWritable: true)
        #expect(!owed, "nothing more is read")
        let refused = machine.nextToAnswer(isWritable: true)
        #expect(refused?.head.uri == "-", "bytes that made no request are answered as a placeholder")
        let framing2 = machine.writing()
        #expect(framing2 == .closeAndLinger)
        #expect(machine.state == .closing)
        machine.lingering()
        let reads2 = machine.readRequested(isWritable: true)
        #expect(reads2, "a lingering connection reads, to drop what arrives")
        #expect(!machine.readsRequests)
        let action = machine.quiesce()
        #expect(action == .close, "shutdown does not wait for the linger time")
    }

    @Test("HTTP/1.0 without keep-alive and the last of maxRequestsPerConnection close the connection")
    func closingResponses() {
        var old = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&old, version: .http1_0)
        _ = old.nextToAnswer(isWritable: true)
        let framing = old.writing()
        #expect(framing == .close)
        #expect(old.state == .closing)
        let next = old.nextToAnswer(isWritable: true)
        #expect(next == nil)

        var bounded = HTTPConnectionStateMachine(limits: .with { $0.maxRequestsPerConnection = 2 })
        for _ in 0..<3 { receive(&bounded) }
        _ = bounded.nextToAnswer(isWritable: true)
        let framing2 = bounded.writing()
        #expect(framing2 == .keepAlive)
        _ = bounded.nextToAnswer(isWritable: true)
        let framing3 = bounded.writing()
        #expect(framing3 == .close)
        let next2 = bounded.nextToAnswer(isWritable: true)
        #expect(next2 == nil, "the third is never answered")
    }

    @Test("quiescing closes an idle connection now, a busy one after its next response, and ends a stream")
    func quiescing() {
        var idle = HTTPConnectionStateMachine(limits: ConnectionLimits())
        let action = idle.quiesce()
        #expect(action == .close)
        #expect(idle.state == .closing)

        var busy = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&busy)
        receive(&busy)
        let action2 = busy.quiesce()
        #expect(action2 == .none)
        _ = busy.nextToAnswer(isWritable: true)
        let framing = busy.writing()
        #expect(framing == .close, "the next response says Connection: close")
        let next = busy.nextToAnswer(isWritable: true)
        #expect(next == nil)

        var streaming = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&streaming)
        _ = streaming.nextToAnswer(isWritable: true)
        streaming.streaming()
        let action3 = streaming.quiesce()
        #expect(action3 == .endStream)
        streaming.streamEnded()
        #expect(streaming.state == .closing)
    }

    @Test("a stream carries the connection: requests behind it are dropped, what arrives is read and dropped")
    func streams() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&machine, "/preview/events.stream")
        receive(&machine, "/behind")
        _ = machine.nextToAnswer(isWritable: true)
        machine.streaming()
        #expect(machine.state == .streaming)
        #expect(!machine.readsRequests)
        let reads = machine.readRequested(isWritable: false)
        #expect(reads, "reads go on, to see the client go away")
        let next = machine.nextToAnswer(isWritable: true)
        #expect(next == nil)
        #expect(machine.errorCaught(isParserError: true) == .close)
    }

    @Test("a body that does not arrive in time is refused only while it is awaited")
    func bodyTimeout() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        #expect(!machine.bodyTimedOut())
        machine.receivedHead(request(.POST, headers: ["Host": "a", "Content-Length": "10"]))
        #expect(machine.bodyTimedOut())
    }

    @Test("an error on an open connection: bytes that are not HTTP are answered, anything else closes")
    func errors() {
        let machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        #expect(machine.errorCaught(isParserError: true) == .reject)
        #expect(machine.errorCaught(isParserError: false) == .close)
    }

    @Test("a connection that went away answers nothing, even a reply that arrives later")
    func closed() {
        var machine = HTTPConnectionStateMachine(limits: ConnectionLimits())
        receive(&machine)
        receive(&machine)
        _ = machine.nextToAnswer(isWritable: true)
        machine.closed()
        #expect(!machine.replyArrived())
        let next = machine.nextToAnswer(isWritable: true)
        #expect(next == nil)
        let reads = machine.readRequested(isWritable: true)
        #expect(!reads)
        let action = machine.quiesce()
        #expect(action == .none)
    }

    @Test("what the head decides: limits, Host, lengths and expectations")
    func verdicts() {
        func verdict(uri: String = "/", version: HTTPVersion = .http1_1, _ headers: HTTPHeaders) -> ConnectionRequest.Verdict {
            var ids = RequestIDs()
            let head = HTTPRequestHead(version: version, method: .POST, uri: uri, headers: headers)
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
        let huge = verdict(["Host": "a", "Content-Length": "18446744073709551615"])
        #expect(huge.rejection?.status == .payloadTooLarge, "a length no Int holds")
        #expect(verdict(["Host": "a", "Content-Length": "1e3"]).rejection?.status == .badRequest)
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
