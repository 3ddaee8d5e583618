import Foundation
package import NIOCore
package import NIOHTTP1
package import NIOPosix
package import TaksiSchema
package import TaksiServer

/// One way for tests to send requests, in the spirit of Hummingbird's `app.test(.router / .live)`:
/// the same request is answered in process by the application's ``Responder`` (``RouterClient``:
/// no socket, no event loop), or over a socket by its real server on a free port (``LiveClient``:
/// the connection handler, limits and all). Both give a ``TestResponse``.
///
/// ```swift
/// try await application.test(.router) { client in
///     let response = try await client.execute(uri: "/screens/home")
///     #expect(response.status == .ok)
/// }
/// ```
package protocol TestClient: Sendable {
    /// Sends one request and waits for its whole response.
    func execute(_ method: HTTPMethod, uri: String, headers: [(String, String)], body: String?) async throws -> TestResponse
}

extension TestClient {
    /// Sends one request (a `GET` with no headers and no body unless given).
    package func execute(
        _ method: HTTPMethod = .GET, uri: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> TestResponse {
        try await execute(method, uri: uri, headers: headers, body: body)
    }
}

/// Which ``TestClient`` ``Application/test(_:_:)`` gives.
package enum TestMode: Sendable {
    /// Answered by the responder, in process (``RouterClient``).
    case router
    /// Answered by the real server, over a socket (``LiveClient``).
    case live
}

/// A client of a responder, in process: its answer always arrives, so ``respond(_:uri:headers:body:)``
/// does not throw.
package struct RouterClient: TestClient {
    package let responder: Responder

    package init(_ responder: Responder) { self.responder = responder }

    package func execute(_ method: HTTPMethod, uri: String, headers: [(String, String)], body: String?) async throws -> TestResponse {
        await respond(method, uri: uri, headers: headers, body: body)
    }

    /// The in-process answer.
    package func respond(
        _ method: HTTPMethod = .GET, uri: String, headers: [(String, String)] = [], body: String? = nil
    ) async -> TestResponse {
        let request = HTTPRequest(method: method, uri: uri, headers: HTTPHeaders(headers), body: body.map { ByteBuffer(string: $0) })
        let response = await responder.respond(to: request).response
        return TestResponse(status: response.status, headers: response.headers, body: method == .HEAD ? ByteBuffer() : response.body)
    }

    /// ``respond(_:uri:headers:body:)`` with the headers as NIO holds them.
    package func respond(
        _ method: HTTPMethod = .GET, uri: String, headers: HTTPHeaders, body: String? = nil
    ) async -> TestResponse {
        await respond(method, uri: uri, headers: Array(headers), body: body)
    }
}

/// A client of the server listening on `port`, for a server the test started itself
/// (``withRunningServer(_:_:)``): one connection per request.
package struct LiveClient: TestClient {
    package let port: Int

    package init(port: Int) { self.port = port }

    package func execute(_ method: HTTPMethod, uri: String, headers: [(String, String)], body: String?) async throws -> TestResponse {
        let connection = try RawConnection(port: port)
        guard let raw = await connection.request(uri, method: method.rawValue, headers: headers, body: body) else {
            throw TestClientError.noResponse(uri)
        }
        return TestResponse(
            status: HTTPResponseStatus(statusCode: raw.status), headers: HTTPHeaders(raw.headers), body: ByteBuffer(bytes: raw.bytes))
    }
}

/// A response as a test sees it, from either mode of ``TestClient``.
package struct TestResponse: Sendable {
    package var status: HTTPResponseStatus
    package var headers: HTTPHeaders
    package var body: ByteBuffer

    /// The body as UTF-8 text.
    package var text: String { String(buffer: body) }

    /// The body as JSON, when it is.
    package var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)) }

    /// The first value of a header.
    package func header(_ name: String) -> String? { headers.first(name: name) }
}

package enum TestClientError: Error {
    /// The server closed the connection (or said nothing in time) without answering.
    case noResponse(String)
    /// The server did not report the port it listens on.
    case noPort
}

extension Application {
    /// Runs `body` with a client of `mode` (see ``TestClient``), the application's background
    /// services running beside it as its service group runs them; a `.live` server is drained
    /// after, and then what the requests left running in the background.
    package func test<Value: Sendable>(_ mode: TestMode, _ body: (any TestClient) async throws -> Value) async throws -> Value {
        switch mode {
        case .router:
            return try await withBackgroundServices { try await body(RouterClient(responder)) }
        case .live:
            var value: Value?
            try await withRunningServer(self) { port, _ in value = try await body(LiveClient(port: port)) }
            guard let value else { throw TestClientError.noPort }
            return value
        }
    }
}

/// Runs `body` against `application`'s real server (it must be configured for port 0), given its
/// port and the server itself (to flush or reopen its access log), with the application's
/// background services beside it; then drains the server, and then the background work.
package func withRunningServer(_ application: Application, _ body: (Int, HTTPServer) async throws -> Void) async throws {
    try await application.withBackgroundServices {
        try await withServer(start: { try await application.start(on: $0) }) { server, _ in
            guard let port = server.port else { throw TestClientError.noPort }
            try await body(port, server)
        }
    }
}

/// Starts a server on event loops of its own (`threads` of them), runs `body` with it and its
/// loops, drains it, and stops the loops. The server is released before its event loops stop:
/// NIO's quiescing helper completes a promise on them when it goes, and NIO reports (and will one
/// day trap on) work scheduled on a loop that has shut down.
package func withServer(
    threads: Int = 1, start: (MultiThreadedEventLoopGroup) async throws -> HTTPServer,
    _ body: (HTTPServer, MultiThreadedEventLoopGroup) async throws -> Void
) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    func run() async throws {
        let server = try await start(group)
        do {
            try await body(server, group)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
    do {
        try await run()
    } catch {
        try await group.shutdownGracefully()
        throw error
    }
    try await group.shutdownGracefully()
}
