import Foundation
import NIOHTTP1
import TaksiSchema
import TaksiServer
import TaksiTestSupport
import Testing

/// The real server on a free port, over a real socket: keep-alive, pipelining, HEAD, close.
@Suite("Live server")
struct LiveServerTests {
    @Test("a skeleton and its data come back over one keep-alive connection")
    func keepAlive() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/home HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let skeleton = await connection.receive(1)
            connection.send("GET /screens/home/data?name=Ada HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let data = await connection.receive(1)
            #expect(skeleton.first?.status == 200)
            #expect(skeleton.first?.json == fixtureScreens["home"]?.skeleton.jsonValue)
            #expect(
                data.first?.json?["interface_data"]?.arrayValue?.first == ["identifier": "greeting", "content": ["value": "Hello, Ada!"]])
        }
    }

    @Test("the test client answers the same in process (.router) and over a socket (.live)")
    func testClientModes() async throws {
        let application = fixtureApplication()
        let requests: [(HTTPMethod, String, [(String, String)])] = [
            (.GET, "/screens/home", []), (.GET, "/screens/home/data?name=Ada", [("Accept-Language", "pt")]),
            (.HEAD, "/screens/landing", [("X-Taksi-Alternative", "compact")]), (.GET, "/screens/nope", []),
            (.GET, "/screens/home", [("Accept-Encoding", "gzip")]), (.DELETE, "/screens/home", []),
        ]
        func answers(_ mode: TestMode) async throws -> [TestResponse] {
            try await application.test(mode) { client in
                var responses: [TestResponse] = []
                for (method, uri, headers) in requests { responses.append(try await client.execute(method, uri: uri, headers: headers)) }
                return responses
            }
        }
        let inProcess = try await answers(.router)
        let overSocket = try await answers(.live)
        for (index, (router, live)) in zip(inProcess, overSocket).enumerated() {
            #expect(router.status == live.status, "\(requests[index].1)")
            #expect(router.body == live.body, "\(requests[index].1)")
            // The connection adds Date and X-Request-Id; everything else is the responder's.
            let added: Set<String> = ["date", "x-request-id"]
            let liveHeaders = live.headers.filter { !added.contains($0.name.lowercased()) }.map { "\($0.name): \($0.value)" }
            #expect(router.headers.map { "\($0.name): \($0.value)" } == liveHeaders, "\(requests[index].1)")
        }
    }

    @Test("pipelined requests are answered in order")
    func pipelining() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /screens/landing HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /screens/nope HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            let responses = await connection.receive(4)
            #expect(responses.map(\.status) == [200, 404, 200, 200])
            #expect(responses[0].json == fixtureScreens["landing"]?.skeleton.jsonValue)
            #expect(responses[1].json?["error"]?["code"] == "screen_not_found")
            #expect(responses[2].json == fixtureScreens["login"]?.skeleton.jsonValue)
            #expect(responses[3].json == ["status": "ok", "version": .string(TaksiServerVersion.current)])
        }
    }

    @Test("a 304 has no body, so the next response on the connection parses cleanly")
    func notModified() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/login HTTP/1.1\r\nHost: a\r\n\r\n")
            let etag = try #require(await connection.receive(1).first?.header("ETag"))
            connection.send(
                "GET /screens/login HTTP/1.1\r\nHost: a\r\nIf-None-Match: \(etag)\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            let responses = await connection.receive(2)
            #expect(responses.map(\.status) == [304, 200])
            #expect(responses.first?.body.isEmpty == true)
            #expect(responses.first?.header("Transfer-Encoding") == nil)
            #expect(responses.last?.json == ["status": "ok", "version": .string(TaksiServerVersion.current)])
        }
    }

    @Test("HEAD sends the headers of GET and no body")
    func head() async throws {
        try await withRunningServer { port in
            let connection = try RawConnection(port: port)
            connection.send("HEAD /screens/landing HTTP/1.1\r\nHost: a\r\n\r\nGET /screens/landing HTTP/1.1\r\nHost: a\r\n\r\n")
            let responses = await connection.receive(2, headRequests: [0])
            #expect(responses.count == 2)
            #expect(responses[0].status == 200)
            #expect(responses[0].body.isEmpty)
            #expect(responses[0].header("Content-Length") == responses[1].header("Content-Length"))
            #expect(responses[1].body.utf8.count == Int(responses[1].header("Content-Length") ?? ""))
        }
    }

    @Test("Connection: close is honoured, and HTTP/1.0 closes by default")
    func close() async throws {
        try await withRunningServer { port in
            let closing = try RawConnection(port: port)
            closing.send("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            #expect(await closing.receive(1).first?.header("Connection") == "close")
            #expect(await closing.isClosedByPeer())

            let old = try RawConnection(port: port)
            old.send("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(await old.receive(1).first?.status == 200)
            #expect(await old.isClosedByPeer())
        }
    }

    @Test("a malformed request gets 400 and the server keeps serving others")
    func malformed() async throws {
        try await withRunningServer { port in
            let bad = try RawConnection(port: port)
            bad.send("THIS IS NOT HTTP\r\n\r\n")
            #expect(await bad.receive(1).first?.status == 400)
            let good = try RawConnection(port: port)
            good.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await good.receive(1).first?.status == 200)
        }
    }
}
