import Foundation
package import NIOCore
package import NIOHTTP1
package import NIOPosix
package import TaksiSchema
package import TaksiServer

/// One way into an application for tests, in the spirit of Hummingbird's `app.test(.router / .live)`:
/// the door, ``Application/test(_:_:)``, runs the application's background services beside the
/// test (as its service group would), and its client's requests are answered in process by the
/// application's ``Responder`` (``RouterClient``: no socket, no event loop), or over a socket by
/// its real server on a free port (``LiveClient``: the connection handler, limits and all). Both
/// give a ``TestResponse``. `application.execute(...)` is the door for one request, and
/// ``withRunningServer(_:_:)`` the live door for a test that opens its own connections.
///
/// ```swift
/// try await application.test(.router) { client in
///     let response = try await client.execute(uri: "/screens/home")
///     #expect(response.status == .ok)
/// }
/// ```
package protocol TestClient: Sendable {
    /// The port the server listens on, for a test that opens its own connections (a
    /// ``RawConnection``, the app library, a CDN in front); nil in process.
    var port: Int? { get }

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

    /// ``execute(_:uri:headers:body:)`` with the headers as NIO holds them (or a dictionary literal).
    package func execute(
        _ method: HTTPMethod = .GET, uri: String, headers: HTTPHeaders, body: String? = nil
    ) async throws -> TestResponse {
        try await execute(method, uri: uri, headers: Array(headers), body: body)
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
/// does not throw. The router door's; made by hand only for a bare ``Responder`` (one over a
/// store, with no application and so no background work): an application's requests go through
/// its door, which runs what they leave in the background.
package struct RouterClient: TestClient {
    package let responder: Responder
    package var port: Int? { nil }

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

/// A client of a server over a socket on `port`: one connection per request. The live door's
/// (with its server), or one for a server process a test started (``startServerProcess(_:environment:directory:)``).
package struct LiveClient: TestClient {
    package let port: Int?
    /// The server the door started, to flush or reopen its access log; nil for a process.
    package let server: HTTPServer?

    package init(port: Int, server: HTTPServer? = nil) {
        self.port = port
        self.server = server
    }

    package func execute(_ method: HTTPMethod, uri: String, headers: [(String, String)], body: String?) async throws -> TestResponse {
        guard let port else { throw TestClientError.noPort }
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
            return try await withBackgroundServices {
                var value: Value?
                // On the configuration's threads, as `serve` runs it.
                try await withServer(threads: configuration.threads, start: { try await self.start(on: $0) }) { server, _ in
                    guard let port = server.port else { throw TestClientError.noPort }
                    value = try await body(LiveClient(port: port, server: server))
                }
                guard let value else { throw TestClientError.noPort }
                return value
            }
        }
    }
}

extension Application {
    /// One request through the router door (``test(_:_:)``): the work it leaves in the background
    /// is done when this returns.
    package func execute(
        _ method: HTTPMethod = .GET, uri: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> TestResponse {
        try await test(.router) { try await $0.execute(method, uri: uri, headers: headers, body: body) }
    }

    /// ``execute(_:uri:headers:body:)`` with the headers as NIO holds them (or a dictionary literal).
    package func execute(
        _ method: HTTPMethod = .GET, uri: String, headers: HTTPHeaders, body: String? = nil
    ) async throws -> TestResponse {
        try await execute(method, uri: uri, headers: Array(headers), body: body)
    }
}

/// Runs `body` against `application`'s real server through the live door (``Application/test(_:_:)``),
/// given the port it listens on (the application must be configured for port 0): for a test that
/// opens its own connections.
package func withRunningServer(_ application: Application = fixtureApplication(), _ body: (Int) async throws -> Void) async throws {
    try await application.test(.live) { client in
        guard let port = client.port else { throw TestClientError.noPort }
        try await body(port)
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
