import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The connection handler over an `EmbeddedChannel`: the pipeline a server connection has (the
/// handler alone, which reads the requests itself), bytes in, bytes out, no socket and no clock but
/// the embedded loop's.
@Suite("Connection handler")
struct HTTPConnectionHandlerTests {
    /// A connection's pipeline on an embedded channel, and what it wrote.
    final class Connection {
        let channel = EmbeddedChannel()
        let reads = ReadCounter()
        /// Its deadlines' sweeper, swept by hand with a `now` of the test's choosing.
        let sweeper = ConnectionSweeper()

        init(limits: ConnectionLimits = ConnectionLimits(), application: Application = fixtureApplication()) throws {
            try channel.pipeline.syncOperations.addHandler(reads)
            try channel.pipeline.syncOperations.addHandlers(
                HTTPConnectionHandler.handlers(
                    responder: application.responder, limits: limits, sweeper: sweeper, accessLog: nil, observer: nil)
            )
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
            channel.embeddedEventLoop.run()
        }

        /// Everything written since the last call, as text.
        func written() throws -> String {
            var text = ""
            while let part = try channel.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let buffer) = part else { continue }
                text += String(buffer: buffer)
            }
            return text
        }

        /// The status codes of the responses written since the last call, in order.
        func statuses() throws -> [Int] {
            try written().components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        }
    }

    static let get = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"

    @Test("pipelined requests in one read are answered in order")
    func pipelining() throws {
        let connection = try Connection()
        try connection.send(Self.get + "GET /screens/nothing HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /screens/home HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try connection.statuses() == [200, 404, 200])
        #expect(connection.channel.isActive)
    }

    @Test("while the client takes no responses nothing is answered or read; both resume when it does")
    func backpressure() throws {
        let connection = try Connection()
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        try connection.send(Self.get + Self.get)
        #expect(try connection.written().isEmpty)
        let reads = connection.reads.count
        connection.channel.pipeline.read()
        #expect(connection.reads.count == reads, "the read is held")

        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try connection.statuses() == [200, 200])
        #expect(connection.reads.count == reads + 1, "the held read is owed and made")
    }

    @Test("a body over the limit is refused before it is read, and the connection closes")
    func bodyLimit() throws {
        let connection = try Connection(limits: .with { $0.maxBodyBytes = 10 })
        try connection.send("POST /screens/login/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n")
        let text = try connection.written()
        #expect(text.hasPrefix("HTTP/1.1 413 "))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains(#""code":"body_too_large""#))
        #expect(!connection.channel.isActive)
    }

    @Test("a chunked body that grows past the limit is refused where it passes it")
    func chunkedBodyLimit() throws {
        let connection = try Connection(limits: .with { $0.maxBodyBytes = 10 })
        try connection.send("POST /screens/login/actions/submit HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n")
        #expect(try connection.written().isEmpty)
        try connection.send("6\r\n123456\r\n")
        #expect(try connection.statuses() == [413])
    }

    @Test("a body that does not arrive in time gets 408")
    func bodyTimeout() throws {
        let connection = try Connection()
        try connection.send("POST /screens/login/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12")
        connection.sweeper.sweep(now: .now() + ConnectionLimits().bodyTimeout)
        #expect(try connection.statuses() == [408])
        #expect(!connection.channel.isActive)
    }

    @Test("the sweeper closes an idle connection and one whose head does not come whole at their deadlines")
    func deadlines() throws {
        let limits = ConnectionLimits()
        let idle = try Connection()
        try idle.send(Self.get)
        #expect(try idle.statuses() == [200])
        idle.sweeper.sweep(now: .now() + limits.idleTimeout)
        #expect(!idle.channel.isActive)

        let slow = try Connection()
        try slow.send("GET /healthz HTTP/1.1\r\nHo")
        slow.sweeper.sweep(now: .now() + limits.headerTimeout)
        #expect(try slow.written().isEmpty, "a client that trickles its head gets no answer, nor a 400 for what it sent")
        #expect(!slow.channel.isActive)
    }

    @Test("an upgrade offer is answered as a plain request, and the requests after it in the same bytes are read")
    func upgradeOffer() throws {
        let connection = try Connection()
        try connection.send(
            "GET /healthz HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + Self.get
        )
        #expect(try connection.statuses() == [200, 200])
    }

    @Test("a chunked body arriving a byte a read is the body a Content-Length one is: the same answer, and the connection goes on")
    func chunkedBodyInPieces() async throws {
        let fixture = try await ActionTests.Fixture()
        // A body the action refuses with a message that quotes it (a key cut across the chunks):
        // the same answer only when the same bytes arrived.
        let body = #"{"inputs": {}, "a_key_cut_across_the_chunks": 1}"#
        func answer(_ request: String, byteAtATime: Bool) throws -> String {
            let connection = try Connection(application: fixture.application)
            if byteAtATime {
                for byte in request.utf8 { try connection.send(String(decoding: [byte], as: UTF8.self)) }
            } else {
                try connection.send(request)
            }
            try connection.send(Self.get)
            let text = try connection.written()
            #expect(connection.channel.isActive)
            // Without the lines that differ between connections.
            return text.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") && !$0.hasPrefix("X-Request-Id: ") }
                .joined(separator: "\n")
        }
        let head = "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        let chunks = body.utf8.count > 20 ? [String(body.prefix(20)), String(body.dropFirst(20))] : [body]
        let chunked =
            head + "Transfer-Encoding: chunked\r\n\r\n"
            + chunks.map { String($0.utf8.count, radix: 16) + ";part=\"x\"\r\n" + $0 + "\r\n" }.joined() + "0\r\nX-Trailer: t\r\n\r\n"
        let expected = try answer(head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body, byteAtATime: false)
        #expect(expected.contains("HTTP/1.1 400") && expected.contains("a_key_cut_across_the_chunks"), "\(expected)")
        #expect(try answer(chunked, byteAtATime: false) == expected)
        #expect(try answer(chunked, byteAtATime: true) == expected)
        try await fixture.upstream.stop()
    }

    @Test("bytes that are not HTTP: the requests before them are answered, then a 400, then the connection closes")
    func malformed() throws {
        let connection = try Connection()
        try connection.send(Self.get + "NOT HTTP\r\n\r\n")
        let text = try connection.written()
        #expect(text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) } == ["200", "400"])
        #expect(text.hasSuffix(#"{"error":{"code":"malformed_request","message":"the request is not valid HTTP/1.1"}}"#))
        #expect(!connection.channel.isActive, "the output closes (an embedded channel closes whole)")
    }

    @Test("Expect: 100-continue gets the interim answer only when nothing waits ahead; a refusal skips the body")
    func expectContinue() async throws {
        let fixture = try await ActionTests.Fixture()
        let connection = try Connection(application: fixture.application)
        try connection.send(
            "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(try connection.written() == "HTTP/1.1 100 Continue\r\n\r\n")
        try await fixture.upstream.stop()

        let refused = try Connection()
        try refused.send("POST /screens/nothing/actions/go HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(try refused.statuses() == [404])
    }

    @Test("quiescing closes an idle connection at once and a busy one after its next answer")
    func quiesce() throws {
        let idle = try Connection()
        idle.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!idle.channel.isActive)

        let busy = try Connection()
        // A channel says when it stops taking writes, as a socket channel does.
        busy.channel.isWritable = false
        busy.channel.pipeline.fireChannelWritabilityChanged()
        try busy.send(Self.get)
        busy.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(busy.channel.isActive)
        busy.channel.isWritable = true
        busy.channel.pipeline.fireChannelWritabilityChanged()
        busy.channel.embeddedEventLoop.run()
        #expect(try busy.written().contains("\r\nConnection: close\r\n"))
        #expect(!busy.channel.isActive)
    }

    @Test("a streamed body: chunked parts as they come, a heartbeat, and the last chunk when its time is up")
    func streamedBody() throws {
        var configuration = ServerConfiguration()
        configuration.accessLog = false
        configuration.preview = true
        let application = buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("streams"))
        let connection = try Connection(limits: .with { $0.maxStreamDuration = .seconds(20) }, application: application)
        try connection.send("GET /preview/events.stream HTTP/1.1\r\nHost: a\r\n\r\n" + Self.get)
        let head = try connection.written()
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("\r\nTransfer-Encoding: chunked\r\n\r\n"))
        #expect(head.contains("event: screens"))
        #expect(!head.contains("healthz"), "a request behind a stream is not answered")
        #expect(application.previewEvents?.subscriberCount == 1)

        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(15))
        #expect(try connection.written() == "e\r\n: keep-alive\n\n\r\n")
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(try connection.written() == "0\r\n\r\n")
        #expect(!connection.channel.isActive)
        #expect(application.previewEvents?.subscriberCount == 0)
    }

    /// A connection's pipeline on an async testing channel (its answers made off the loop, as
    /// actions' are), over the action fixtures with `signup/pro`'s upstream held; and its reads.
    static func heldSubmits() async throws -> (ActionTests.Fixture, NIOAsyncTestingChannel, ReadCounter) {
        let fixture = try await ActionTests.Fixture()
        fixture.upstream.on("/signups/pro", .held(#"{"id": "u1"}"#))
        let limits = ConnectionLimits()
        let channel = NIOAsyncTestingChannel()
        let reads = ReadCounter()
        let responder = fixture.application.responder
        try await channel.testingEventLoop.executeInContext {
            try channel.pipeline.syncOperations.addHandler(reads)
            try channel.pipeline.syncOperations.addHandlers(
                HTTPConnectionHandler.handlers(
                    responder: responder, limits: limits, sweeper: ConnectionSweeper(), accessLog: nil, observer: nil)
            )
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1))
        return (fixture, channel, reads)
    }

    @Test("nothing more is read while a request with a body waits for its answer, so pipelined submits cannot pile up bodies")
    func queuedBodies() async throws {
        let (fixture, channel, reads) = try await Self.heldSubmits()

        // A submit that waits on its upstream, and a second one behind it with a large body.
        let form = "Content-Type: application/x-www-form-urlencoded\r\n"
        let large = "email=" + String(repeating: "a", count: 60_000)
        try await channel.writeInbound(
            ByteBuffer(
                string: "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\n\(form)Content-Length: 13\r\n\r\nemail=a%40b.c"
                    + "POST /screens/signup/pro/actions/ping HTTP/1.1\r\nHost: a\r\n\(form)Content-Length: \(large.utf8.count)\r\n\r\n\(large)"
            )
        )
        await fixture.upstream.waitForRequests(1)
        let before = reads.count
        channel.pipeline.read()
        try await channel.testingEventLoop.executeInContext {}
        #expect(reads.count == before, "read on while a submit waited for its answer")

        // Answered: both responses go out, and reading goes on.
        fixture.upstream.release()
        _ = try await channel.waitForOutboundWrite(as: IOData.self)
        _ = try await channel.waitForOutboundWrite(as: IOData.self)
        try await channel.testingEventLoop.executeInContext {}
        channel.pipeline.read()
        try await channel.testingEventLoop.executeInContext {}
        #expect(reads.count > before)
        _ = try await channel.finish(acceptAlreadyClosed: true)
        try await fixture.upstream.stop()
    }

    @Test("pipelined submits read as a socket delivers them, a read at a time, stop at the second body")
    func pipelinedBodiesBounded() async throws {
        let (fixture, channel, reads) = try await Self.heldSubmits()

        // A submit whose upstream is held, then 14 more with 60 KB bodies, pipelined.
        let form = "Content-Type: application/x-www-form-urlencoded\r\n"
        let first = "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\n\(form)Content-Length: 13\r\n\r\nemail=a%40b.c"
        let large = "email=" + String(repeating: "a", count: 60_000)
        let next = "POST /screens/signup/pro/actions/ping HTTP/1.1\r\nHost: a\r\n\(form)Content-Length: \(large.utf8.count)\r\n\r\n\(large)"
        let bytes = Array((first + String(repeating: next, count: 14)).utf8)
        // As the server's sockets read: 4 KiB at a time, each read only when the handler asks for one.
        var consumed = 0
        while consumed < bytes.count {
            let chunk = bytes[consumed..<min(consumed + 4096, bytes.count)]
            try await channel.writeInbound(ByteBuffer(bytes: chunk))
            consumed += chunk.count
            let before = reads.count
            channel.pipeline.read()
            try await channel.testingEventLoop.executeInContext {}
            if reads.count == before { break }
        }
        #expect(consumed < bytes.count, "read everything the client pipelined")
        #expect(
            consumed <= first.utf8.count + next.utf8.count + 4096,
            "read \(consumed) bytes: more than two bodies and one read (\(first.utf8.count + next.utf8.count + 4096))")
        fixture.upstream.release()
        _ = try await channel.finish(acceptAlreadyClosed: true)
        try await fixture.upstream.stop()
    }
}
