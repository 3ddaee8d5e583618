import NIOConcurrencyHelpers
package import NIOCore
import NIOHTTP1
import NIOPosix

/// A real upstream API for tests, on a free port: each path answers as its test says (JSON, a
/// status, a delay, invalid or huge bodies, a dropped connection), and every request is recorded.
package final class TestUpstream: Sendable {
    /// How a path answers.
    package enum Behavior: Sendable {
        /// 200 with this body, after `delay`.
        case json(String, delay: TimeAmount = .zero)
        /// This status and a small body.
        case status(Int)
        /// Closes the connection without answering, `times` times, then answers with `then`.
        indirect case dropConnection(times: Int, then: Behavior)
        /// 200 with this body once the test calls ``release()``.
        case held(String)
        /// 200 with a `Content-Length` 100 bytes longer than this body, the body, then nothing:
        /// a response head in time and a body that never ends.
        case stalledBody(String)
        /// This status (a redirect) with a `Location` header.
        case redirect(Int, location: String)
        /// This status with this body (not necessarily JSON).
        case answer(Int, String)
        /// 200 with this body to the first request on a connection, which stays open; a later
        /// request on it closes it unanswered: a peer that closed a kept-alive connection as the
        /// request reached it.
        case oncePerConnection(String)
        /// 200 with this body when the request's `Authorization` is `authorization`, else 401.
        case authorized(String, body: String)
        /// `first` to the first `times` requests, then `then`.
        indirect case first(Int, Behavior, then: Behavior)
        /// `429 Too Many Requests` with `Retry-After: seconds`, as an API's rate limit answers.
        case rateLimited(retryAfter: Int)
        /// An OAuth 2.0 token endpoint: each request gets a new token (`token-1`, `token-2`, ...)
        /// that expires in `expiresIn` seconds.
        case issuesTokens(expiresIn: Int)
        /// 200 with this body and these headers (a `Link` naming the next page).
        case jsonWithHeaders(String, headers: [(String, String)])
    }

    /// One request as the upstream saw it.
    package struct Request: Sendable {
        package var uri: String
        package var headers: [(String, String)]
        package var method: String = "GET"
        package var body: String = ""
    }

    private struct State {
        var behaviors: [String: Behavior] = [:]
        var requests: [Request] = []
        var drops: [String: Int] = [:]
        var tokensIssued = 0
        /// Answers of `held` requests, waiting for ``release()``.
        var held: [@Sendable () -> Void] = []
        /// Waiters for a number of requests.
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = NIOLockedValueBox(State())
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    package var port: Int { channel.localAddress?.port ?? 0 }
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    package init() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        let box = state
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// Sets how `path` answers: without a query, whatever the request's query; with one
    /// (`/reviews?after=c2`), a request with exactly that target, which comes first.
    package func on(_ path: String, _ behavior: Behavior) {
        state.withLockedValue { $0.behaviors[path] = behavior }
    }

    /// Every request so far, oldest first.
    package var requests: [Request] { state.withLockedValue { $0.requests } }

    /// Requests to `path` (without the query) so far.
    package func count(_ path: String) -> Int {
        requests.filter { $0.uri.split(separator: "?").first.map(String.init) == path }.count
    }

    /// Sends the answers of every `held` request so far.
    package func release() {
        for answer in state.withLockedValue({ state in
            defer { state.held = [] }
            return state.held
        }) { answer() }
    }

    /// Returns once the upstream has received `count` requests in all.
    package func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state in
                guard state.requests.count < count else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Stops listening and closes every connection: later calls are refused.
    package func stop() async throws {
        try await group.shutdownGracefully()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let state: NIOLockedValueBox<State>
        /// The request being read: its head and body so far.
        private var reading: (head: HTTPRequestHead, body: String)?
        /// Requests answered on this connection.
        private var answered = 0

        init(state: NIOLockedValueBox<State>) {
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): reading = (head, "")
            case .body(let bytes): reading?.body += String(buffer: bytes)
            case .end:
                guard let (head, body) = reading else { return }
                reading = nil
                answer(head, body: body, context: context)
            }
        }

        private func answer(_ head: HTTPRequestHead, body: String, context: ChannelHandlerContext) {
            let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let loop = context.eventLoop
            let (behavior, woken) = state.withLockedValue { state -> (Behavior, [CheckedContinuation<Void, Never>]) in
                state.requests.append(
                    Request(uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, method: head.method.rawValue, body: body)
                )
                let count = state.requests.count
                let woken = state.waiters.filter { $0.count <= count }.map(\.continuation)
                state.waiters.removeAll { $0.count <= count }
                var behavior = Self.behavior(for: state.behaviors[head.uri] == nil ? path : head.uri, in: &state)
                if case .issuesTokens(let expiresIn) = behavior {
                    state.tokensIssued += 1
                    behavior = .json(
                        #"{"access_token": "token-\#(state.tokensIssued)", "token_type": "Bearer", "expires_in": \#(expiresIn)}"#)
                }
                // Held in the same step that counts the request: a test that waits for the count
                // and then releases must find it held (it was counted first, and a release between
                // the two left that one unanswered: a drain test's request waited out its timeout).
                if case .held(let body) = behavior {
                    state.held.append {
                        loop.execute {
                            let (handler, context) = bound.value
                            handler.respond(context, status: .ok, body: body, delay: .zero)
                        }
                    }
                }
                return (behavior, woken)
            }
            for continuation in woken { continuation.resume() }
            defer { answered += 1 }
            switch behavior {
            case .authorized(let authorization, let body):
                if head.headers.first(name: "Authorization") == authorization {
                    respond(context, status: .ok, body: body, delay: .zero)
                } else {
                    respond(context, status: .unauthorized, body: #"{"error":"invalid_token"}"#, delay: .zero)
                }
            case .issuesTokens:
                preconditionFailure("answered as JSON above")
            case .oncePerConnection(let body):
                if answered == 0 {
                    respond(context, status: .ok, body: body, delay: .zero)
                } else {
                    context.close(promise: nil)
                }
            case .dropConnection:
                context.close(promise: nil)
            case .status(let code):
                respond(context, status: HTTPResponseStatus(statusCode: code), body: #"{"error":"test"}"#, delay: .zero)
            case .rateLimited(let seconds):
                respond(
                    context, status: .tooManyRequests, body: #"{"success":false,"errors":[{"code":971,"message":"rate limited"}]}"#,
                    delay: .zero, headers: [("Retry-After", String(seconds))])
            case .first:
                preconditionFailure("resolved by behavior(for:in:)")
            case .json(let body, let delay):
                respond(context, status: .ok, body: body, delay: delay)
            case .jsonWithHeaders(let body, let headers):
                respond(context, status: .ok, body: body, delay: .zero, headers: headers)
            case .answer(let code, let body):
                respond(context, status: HTTPResponseStatus(statusCode: code), body: body, delay: .zero)
            case .stalledBody(let body):
                let headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "\(body.utf8.count + 100)")])
                context.write(
                    NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            case .redirect(let status, let location):
                let headers = HTTPHeaders([("Location", location), ("Content-Length", "0")])
                context.write(
                    NIOAny(
                        HTTPServerResponsePart.head(
                            HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers))),
                    promise: nil
                )
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            case .held:
                break  // answered by release(), held above
            }
        }

        private static func behavior(for path: String, in state: inout State) -> Behavior {
            let behavior = state.behaviors[path] ?? .status(404)
            if case .first(let times, let first, let then) = behavior {
                let used = state.drops[path, default: 0]
                guard used < times else { return then }
                state.drops[path] = used + 1
                return first
            }
            guard case .dropConnection(let times, let then) = behavior else { return behavior }
            let dropped = state.drops[path, default: 0]
            guard dropped < times else { return then }
            state.drops[path] = dropped + 1
            return behavior
        }

        private func respond(
            _ context: ChannelHandlerContext, status: HTTPResponseStatus, body: String, delay: TimeAmount,
            headers extra: [(String, String)] = []
        ) {
            let send = {
                var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "\(body.utf8.count)")] + extra)
                headers.add(name: "Connection", value: "keep-alive")
                context.write(
                    NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil
                )
                context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            }
            if delay == .zero {
                send()
            } else {
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) { send() }
            }
        }
    }
}

/// A clock tests move by hand, so TTLs expire without waiting.
package final class ManualClock: Sendable {
    private let instant = NIOLockedValueBox(ContinuousClock.now)

    package init() {}

    package var now: ContinuousClock.Instant { instant.withLockedValue { $0 } }

    package func advance(by interval: Duration) {
        instant.withLockedValue { $0 += interval }
    }
}
