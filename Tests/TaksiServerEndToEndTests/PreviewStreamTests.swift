import Foundation
import NIOPosix
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The preview's event stream over a real socket, which follows reloads (the in-process suite
/// `Preview` covers the page, catalog and exchange).
@Suite("Preview stream")
struct PreviewStreamTests {
    @Test("events.stream over a real socket: the current set first, then one event per reload, failed ones with file:line:col")
    func events() async throws {
        let (application, directory) = try fixtureCopyApplication(preview: true, label: "preview")
        let first = application.store.status.version
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /preview/events.stream HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n")
            let opened = await connection.receiveText(until: "\n\n", count: 2)
            #expect(opened.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(opened.contains("Content-Type: text/event-stream; charset=utf-8\r\n"))
            #expect(opened.contains("Transfer-Encoding: chunked\r\n"))
            #expect(opened.contains("Cache-Control: no-store\r\n"))
            #expect(opened.contains("retry: 1000\n\n"))
            #expect(opened.contains("id: \(first)\nevent: screens\ndata: {\"pending_errors\":[],\"screens_version\":\"\(first)\"}\n\n"))

            let login = directory.appendingPathComponent("login.json")
            let original = try String(contentsOf: login, encoding: .utf8)
            try Data(original.replacingOccurrences(of: #""value": "Log in""#, with: #""value": "Sign in""#).utf8).write(to: login)
            #expect(application.watcher?.reload() == true)
            let second = application.store.status.version
            #expect(second != first)
            let reloaded = await connection.receiveText(until: "event: screens")
            #expect(reloaded.contains("id: \(second)\nevent: screens\ndata: {\"pending_errors\":[],\"screens_version\":\"\(second)\"}\n\n"))

            try Data(original.replacingOccurrences(of: #""kind": "title""#, with: #""kind": "titel""#).utf8).write(to: login)
            #expect(application.watcher?.reload() == false)
            let failed = await connection.receiveText(until: "\n\n")
            let event = try #require(failed.components(separatedBy: "event: screens\ndata: ").last?.components(separatedBy: "\n").first)
            let status = try JSONDecoder().decode(JSONValue.self, from: Data(event.utf8))
            #expect(status["screens_version"] == .string(second), "the last good set is still served")
            #expect(
                status["pending_errors"]?.arrayValue?.first?["text"]?.stringValue?.contains(
                    "login.json:8:46: error: components[0].content.kind") == true)
            #expect(application.previewEvents?.subscriberCount == 1)
        }
    }

    @Test("shutdown ends an open stream with its last chunk and does not wait for it")
    func shutdownEndsStreams() async throws {
        let (application, _) = try fixtureCopyApplication(preview: true, label: "preview")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // Not `withServer`: the test shuts the server down itself, midway. The server is let go
        // before its loops stop, as there.
        func run() async throws {
            let server = try await application.start(on: group)
            let connection = try RawConnection(port: try #require(server.port))
            connection.send("GET /preview/events.stream HTTP/1.1\r\nHost: test\r\n\r\n")
            _ = await connection.receiveText(until: "event: screens")
            #expect(application.previewEvents?.subscriberCount == 1)
            // Far longer than the test may take: returning at all means the stream did not hold the drain.
            await server.shutdown(drainTimeout: .seconds(600))
            let ended = await connection.receiveText(until: "0\r\n\r\n")
            #expect(ended.hasSuffix("0\r\n\r\n"), "the last chunk")
            #expect(await connection.isClosedByPeer())
            #expect(application.previewEvents?.subscriberCount == 0)
        }
        try await run()
        try await group.shutdownGracefully()
    }

    @Test("an HTTP/1.0 stream ends with its connection")
    func streamLimits() async throws {
        let (application, _) = try fixtureCopyApplication(preview: true, label: "preview")
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /preview/events.stream HTTP/1.0\r\n\r\n")
            let opened = await connection.receiveText(until: "event: screens")
            #expect(opened.contains("Connection: close\r\n"), "HTTP/1.0 has no chunks: the body ends with the connection")
            #expect(!opened.contains("Transfer-Encoding"))
            #expect(opened.hasSuffix("\n\n"), "events as they are, unframed")
        }
    }
}
