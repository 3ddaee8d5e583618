import Foundation
import NIOCore
import TaksiSchema
import TaksiServer
import TaksiTestSupport
import Testing

/// Connection handling over real sockets: request ids, limits, backpressure, timeouts and the cap.
@Suite("Connections")
struct ConnectionTests {
    @Test("every response has a Date and an X-Request-Id: the client's when it is safe, else a new one")
    func requestID() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: trace-42\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: two words\r\n\r\n"
            )
            let responses = await connection.receive(4)
            #expect(responses.first?.header("X-Request-Id") == "trace-42")
            let generated = responses.dropFirst().compactMap { $0.header("X-Request-Id") }
            #expect(generated.count == 3)
            #expect(Set(generated).count == 3, "ids are unique")
            #expect(!generated.contains("two words"), "an id with a space is not echoed")
            // IMF-fixdate, like "Sat, 21 Nov 2026 02:37:38 GMT".
            let date = responses.first?.header("Date") ?? ""
            #expect(date.hasSuffix(" GMT"))
            #expect(date.count == 29)
        }
    }

    @Test("a target or a header block over its limit gets 414 or 431 as JSON, then the connection closes")
    func sizeLimits() async throws {
        try await withRunningServer(
            fixtureApplication(
                limits: .with {
                    $0.maxURILength = 100
                    $0.maxHeaderBytes = 200
                })
        ) { port in
            let long = try RawConnection(port: port)
            long.send("GET /screens/home/data?name=\(String(repeating: "a", count: 100)) HTTP/1.1\r\nHost: a\r\n\r\n")
            let uri = try #require(await long.receive(1).first)
            #expect(uri.status == 414)
            #expect(uri.json?["error"]?["code"] == "uri_too_long")
            #expect(uri.header("Connection") == "close")
            #expect(await long.isClosedByPeer())

            let large = try RawConnection(port: port)
            large.send("GET /healthz HTTP/1.1\r\nHost: a\r\nCookie: \(String(repeating: "c", count: 200))\r\n\r\n")
            let headers = try #require(await large.receive(1).first)
            #expect(headers.status == 431)
            #expect(headers.json?["error"]?["code"] == "headers_too_large")
            #expect(await large.isClosedByPeer())
        }
    }

    @Test("bytes that are not HTTP get 400 malformed_request after the requests before them, then a close")
    func malformed() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nHELLO THERE\r\n\r\n")
            let responses = await connection.receive(2)
            #expect(responses.map(\.status) == [200, 400])
            #expect(responses.last?.json == ["error": ["code": "malformed_request", "message": "the request is not valid HTTP/1.1"]])
            #expect(await connection.isClosedByPeer())
        }
    }

    @Test("a client that pipelines without reading gets every response in order, and others are served meanwhile")
    func backpressure() async throws {
        try await withRunningServer(fixtureApplication(limits: .with { $0.maxPipelinedRequests = 4 })) { port in
            let flooder = try RawConnection(port: port, receiveBuffer: 4096)
            let paths = (0..<600).map { ["/screens/login", "/screens/landing", "/healthz"][$0 % 3] }
            flooder.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined())

            // The flooder has not read a byte; a fresh client is answered anyway.
            let fresh = try RawConnection(port: port)
            fresh.send("GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n")
            let freshResponse = try #require(await fresh.receive(1).first)
            #expect(freshResponse.status == 200)

            let responses = await flooder.receive(paths.count)
            #expect(responses.count == paths.count)
            for (path, response) in zip(paths, responses) {
                let expected: JSONValue? =
                    path == "/healthz"
                    ? ["status": "ok", "version": .string(TaksiServerVersion.current)]
                    : fixtureScreens[String(path.dropFirst("/screens/".count))]?.skeleton.jsonValue
                #expect(response.status == 200)
                #expect(response.json == expected, "\(path) answered out of order")
            }
        }
    }

    @Test("an idle connection and a half-sent request head are closed after their timeouts")
    func timeouts() async throws {
        try await withRunningServer(
            fixtureApplication(
                limits: .with {
                    $0.idleTimeout = .milliseconds(50)
                    $0.headerTimeout = .milliseconds(50)
                })
        ) { port in
            // One exchange first, so the connection is idle after an answer. On a busy machine the
            // client may stall past 50 ms between connecting and sending, and the server rightly
            // closes that connection as idle before any request: then it tries again.
            var idle = try RawConnection(port: port)
            var answered = false
            for _ in 0..<20 {
                idle.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
                if await idle.receive(1).first?.status == 200 {
                    answered = true
                    break
                }
                idle = try RawConnection(port: port)
            }
            #expect(answered)
            #expect(await idle.isClosedByPeer(), "closed after being idle")

            let trickle = try RawConnection(port: port)
            trickle.send("GET /healthz HTTP/1.1\r\nHo")
            #expect(await trickle.isClosedByPeer(), "closed before the head was complete")
        }
    }

    @Test("at the connection cap a new client waits in the backlog until a connection closes")
    func connectionCap() async throws {
        try await withRunningServer(fixtureApplication(limits: .with { $0.maxConnections = 2 })) { port in
            let first = try RawConnection(port: port)
            let second = try RawConnection(port: port)
            for connection in [first, second] {
                connection.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
                #expect(await connection.receive(1).first?.status == 200)
            }
            let third = try RawConnection(port: port)
            third.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await !third.isReadable(within: 300), "the third connection is not accepted while two are open")
            first.send("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            #expect(await first.receive(1).first?.status == 200)
            #expect(await first.isClosedByPeer())
            #expect(await third.receive(1).first?.status == 200, "accepted once one closed")
        }
    }
}
