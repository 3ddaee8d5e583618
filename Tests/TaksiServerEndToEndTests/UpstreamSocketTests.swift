import NIOPosix
import TaksiSchema
import TaksiServer
import TaksiTestSupport
import Testing

/// http sources over a real socket (the in-process suite `Upstream sources` covers the rest).
@Suite("Upstream sources over a socket")
struct UpstreamSocketTests {
    @Test("over a socket, a data reply that waits on an upstream keeps its place among pipelined requests")
    func pipelinedPendingReply() async throws {
        let upstream = try await TestUpstream()
        let application = try upstreamApplication(files: SharedScreens.upstreams, upstream: upstream).application
        upstream.on("/feed/Oslo", .json(SharedScreens.feedBody, delay: .milliseconds(100)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await application.start(on: group)
        let connection = try RawConnection(port: try #require(server.port))
        connection.send(
            "GET /screens/feed/data?city=Oslo HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
                + "GET /screens/feed/data?city=Oslo HTTP/1.1\r\nHost: a\r\n\r\n"
        )
        let responses = await connection.receiveOffPool(3)
        #expect(responses.map(\.status) == [200, 200, 200])
        #expect(responses[0].json?["interface_data"]?.arrayValue?.first == ["identifier": "title", "content": ["value": "Cafés"]])
        #expect(responses[1].json == ["status": "ok", "version": .string(TaksiServerVersion.current)])
        #expect(responses[2].body == responses[0].body)
        await server.shutdown()
        try await group.shutdownGracefully()
        try await upstream.stop()
    }
}
