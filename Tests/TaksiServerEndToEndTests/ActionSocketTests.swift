import Foundation
import TaksiSchema
import TaksiServer
import TaksiTestSupport
import Testing

/// Actions over a real socket (the in-process suite `Actions` covers the rest): header bytes as
/// they arrive, a form body pipelined with a GET, a body over the limit.
@Suite("Actions over a socket")
struct ActionSocketTests {
    struct Fixture {
        let upstream: TestUpstream
        let application: Application
    }

    /// An application over ``SharedScreens/actions``, its upstream `api` a test server.
    static func fixture() async throws -> Fixture {
        let upstream = try await TestUpstream()
        return Fixture(
            upstream: upstream, application: try upstreamApplication(files: SharedScreens.actions, upstream: upstream).application)
    }

    @Test("a forwarded header that is not UTF-8 is refused, not rewritten; UTF-8 reaches the upstream as sent")
    func forwardedHeaderBytes() async throws {
        let fixture = try await Self.fixture()
        fixture.upstream.on("/signups/pro", .answer(201, #"{"id": "1"}"#))
        try await withRunningServer(fixture.application) { port in
            func submit(authorization: [UInt8]) async -> RawResponse? {
                let connection = try? RawConnection(port: port)
                let head =
                    "POST /screens/signup/pro/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: 13\r\nConnection: close\r\nAuthorization: "
                connection?.send(bytes: Array(head.utf8) + authorization + Array("\r\n\r\nemail=a%40b.c".utf8))
                // Off the cooperative pool: the answer comes from a task waiting on the upstream.
                return await connection?.receive(1).first
            }
            // "Bearer café" in Latin-1: a byte that is not UTF-8.
            let latin1 = try #require(await submit(authorization: Array("Bearer caf".utf8) + [0xE9]))
            #expect(latin1.status == 400)
            #expect(latin1.json?["error"]?["code"] == "invalid_header")
            #expect(fixture.upstream.count("/signups/pro") == 0, "nothing changed was sent")

            let utf8 = try #require(await submit(authorization: Array("Bearer café".utf8)))
            #expect(utf8.status == 200)
            #expect(fixture.upstream.requests.last?.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer café" } == true)
        }
    }

    @Test("over a real socket: a form body is read whole, pipelined with a GET; an oversized body is 413")
    func socket() async throws {
        let fixture = try await Self.fixture()
        fixture.upstream.on("/signups/free", .answer(201, #"{"id": "3"}"#))
        try await withRunningServer(fixture.application) { port in
            let connection = try RawConnection(port: port)
            let body = "email=a%40b&age=7"
            connection.send(
                "POST /screens/signup/free/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    + "GET /screens/feed HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            let responses = await connection.receive(2)
            #expect(responses.map(\.status) == [200, 200])
            #expect(responses.first?.json?["then"] == ["identifier": "navigation", "content": ["interface_identifier": "welcome/3"]])
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data((fixture.upstream.requests.last?.body ?? "").utf8))["age"] == 7)

            let big = try RawConnection(port: port)
            big.send(
                "POST /screens/signup/free/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n"
            )
            #expect(await big.receive(1).first?.status == 413)
        }
    }
}
