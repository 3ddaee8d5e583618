import Foundation
import Logging
import NIOCore
import NIOEmbedded
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// What a client can hold that it should not: connections it never reads from, bodies it never
/// sends, streams it never reads. Over real sockets; each test failed before the fix it guards.
@Suite("Connection bounds")
struct ConnectionBoundsTests {
    @Test("clients that pipeline and never read are disconnected after write_timeout, which frees the connection cap for others")
    func writeTimeout() async throws {
        let limits = ConnectionLimits.with {
            $0.writeTimeout = .milliseconds(200)
            $0.maxConnections = 2
        }
        try await HardeningTests.withServer(limits: limits) { port in
            // Each asks for far more than the socket buffers hold (the OpenAPI document, 1,000
            // times: about 26 MB, where the kernel keeps at most 4 MB unsent) and reads nothing;
            // the idle timeout (60 s) never starts while responses wait.
            let flooders = try (0..<2).map { _ in try RawConnection(port: port, receiveBuffer: 4096) }
            for flooder in flooders {
                flooder.send(String(repeating: "GET /openapi.yaml HTTP/1.1\r\nHost: a\r\n\r\n", count: 1000))
            }
            // Both slots are held; two new clients are answered once the server gives up on both
            // (the first keeps its slot open, so the second needs the other flooder's).
            let fresh = try (0..<2).map { _ in try RawConnection(port: port) }
            for client in fresh {
                client.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
                #expect(await client.receive(1).first?.status == 200)
            }
            for flooder in flooders {
                // What they get is cut short: fewer than the responses asked for, then the end.
                #expect(await flooder.receive(1000).count < 1000)
            }
        }
    }

    @Test("a connection answers max_requests_per_connection requests, the last with Connection: close, then closes")
    func requestsPerConnection() async throws {
        try await HardeningTests.withServer(limits: .with { $0.maxRequestsPerConnection = 3 }) { port in
            let connection = try RawConnection(port: port)
            connection.send(String(repeating: "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", count: 5))
            let responses = await connection.receive(5)
            #expect(responses.map(\.status) == [200, 200, 200], "the requests after the third are not answered here")
            #expect(responses.map { $0.header("Connection") } == [nil, nil, "close"])
            #expect(await connection.isClosedByPeer())
        }
    }

    @Test(
        "a Content-Length no Int holds (2^63 and larger) gets 413 at once instead of a wait for its body",
        arguments: ["18446744073709551615", "9223372036854775808", "99999999999999999999999"]
    )
    func hugeContentLength(length: String) async throws {
        try await HardeningTests.withServer(limits: .with { $0.bodyTimeout = .seconds(600) }) { port in
            let connection = try RawConnection(port: port)
            connection.send("POST /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\r\nx")
            // Far sooner than the body timeout: the answer does not wait for a body.
            let response = try #require(await connection.receive(1).first)
            #expect(response.status == 413)
            #expect(response.json?["error"]?["code"] == "body_too_large")
            #expect(await connection.isClosedByPeer())
        }
    }

    @Test("a preview stream ends after max_stream_duration, so streams nobody reads give their slots back")
    func streamDuration() async throws {
        var configuration = ServerConfiguration.forTests()
        configuration.preview = true
        configuration.limits.maxStreamDuration = .milliseconds(300)
        let application = buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("streams"))
        try await withRunningServer(application) { port in
            let stream = try RawConnection(port: port)
            stream.send("GET /preview/events.stream HTTP/1.1\r\nHost: a\r\n\r\n")
            // Nothing is read until the stream ends by itself: the last chunk, then the close.
            let text = await stream.receiveText(until: "0\r\n\r\n")
            #expect(text.contains("event: screens"))
            #expect(text.hasSuffix("0\r\n\r\n"), "the last chunk")
            #expect(await stream.isClosedByPeer())
            #expect(application.previewEvents?.subscriberCount == 0)
        }
    }
}
