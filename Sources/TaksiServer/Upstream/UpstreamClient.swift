import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TaksiSchema
public import TaksiScreens
public import Tracing

/// Why an upstream call gave no value. Logged with the source; never sent to the client.
public enum UpstreamFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case timeout(Duration)
    case connection(String)
    case status(UInt)
    case invalidJSON(String)
    case tooLarge(limit: Int)
    case notConfigured(String)
    /// A redirect this client does not follow: to another origin, or more than ``UpstreamClient/maxRedirects``.
    case redirect(String)
    /// The upstream's credential could not be had (an OAuth token endpoint that failed).
    case credential(String)

    /// A short stable name, for metrics.
    public var code: String {
        switch self {
        case .timeout: "timeout"
        case .connection: "connection"
        case .status: "status"
        case .invalidJSON: "invalid_json"
        case .tooLarge: "too_large"
        case .notConfigured: "not_configured"
        case .redirect: "redirect"
        case .credential: "credential"
        }
    }

    public var description: String {
        switch self {
        case .timeout(let limit):
            "no complete response within \(limit.timeInterval) s"
        case .connection(let detail): "connection failed: \(detail)"
        case .status(let code): "answered HTTP \(code)"
        case .invalidJSON(let detail): "the body is not JSON: \(detail)"
        case .tooLarge(let limit): "the body is larger than max_bytes (\(limit))"
        case .notConfigured(let name): "upstream \"\(name)\" is not configured"
        case .redirect(let detail): "redirect not followed: \(detail)"
        case .credential(let detail): "no credential: \(detail)"
        }
    }
}

/// One connection pool for the process, on AsyncHTTPClient's own event loops. A global, so it lives
/// as long as the process and needs no shutdown however many applications (tests) come and go.
/// A refused connection fails at once (no connect retries until the deadline): the caller retries
/// once itself, then degrades the source. Redirects are followed by ``UpstreamClient`` itself,
/// only within the upstream's origin.
let upstreamHTTPClient = makeUpstreamHTTPClient { $0.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32 }

/// The client of submits that may not be repeated (POST, PATCH), and of every retry: a new
/// connection for each. On a pooled connection the peer may have closed while it sat idle, and a
/// request sent on it fails with nothing to tell whether the peer read it (an upstream that closes
/// after every answer failed 18 submits in 290 that way). On a new connection, a failure to
/// connect means nothing was sent, so that, and only that, is retried for a submit; a retry of a
/// GET here cannot meet another connection the peer closed.
private let submitHTTPClient = makeUpstreamHTTPClient { $0.maximumUsesPerConnection = 1 }

/// A client with the settings every upstream call shares, and `change`'s.
private func makeUpstreamHTTPClient(_ change: (inout HTTPClient.Configuration) -> Void) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .disallow
    configuration.timeout = .init(connect: .seconds(2))
    configuration.decompression = .enabled(limit: .ratio(20))
    configuration.connectionPool.retryConnectionEstablishment = false
    change(&configuration)
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}

/// Calls upstream APIs: HTTP(S) through AsyncHTTPClient's process-wide connection pool (on its
/// own event loops, so upstream work never delays the server's), or JSON files for `file:`
/// upstreams (offline fixtures).
public struct UpstreamClient: Sendable {
    private let http: HTTPClient
    private let submitHTTP: HTTPClient
    private let bases: [String: String]
    private let credentials: UpstreamCredentials

    /// Where the upstreams' OAuth token fetches run (a service of the application's group).
    var credentialFetches: BackgroundWork { credentials.fetches }

    /// - Parameter upstreams: base URLs by name (`https://api.citybik.es`, `file:/srv/fixtures/citybikes`).
    public init(upstreams: [String: String]) {
        self.init(upstreams: upstreams, credentials: UpstreamCredentials())
    }

    /// - Parameter credentials: what calls to each upstream carry to prove who calls.
    init(upstreams: [String: String], credentials: UpstreamCredentials) {
        self.bases = upstreams
        self.credentials = credentials
        self.http = upstreamHTTPClient
        self.submitHTTP = submitHTTPClient
    }

    /// The URL of a call, for cache keys and logs.
    public func url(of call: UpstreamCall) -> String? {
        bases[call.definition.upstream].map { $0 + call.target }
    }

    /// Redirects followed at most, per call.
    public static let maxRedirects = 3

    /// GETs the call's URL with the forwarded headers; retries once when the connection fails
    /// before a response. The source's timeout bounds the whole exchange, body included: an
    /// upstream that stalls or drips its body fails with ``UpstreamFailure/timeout(_:)``.
    /// Redirects (301, 302, 303, 307, 308) are followed up to ``maxRedirects`` times within the
    /// upstream's origin (scheme, host and port); a redirect elsewhere fails the call, so neither
    /// forwarded headers nor the answer ever cross to a host the configuration does not name.
    /// - Parameter span: the call's span, when tracing is on: it is told of each retry and redirect.
    public func fetch(
        _ call: UpstreamCall, headers: [(String, String)], span: (any Span)? = nil
    ) async -> Result<UpstreamValue, UpstreamFailure> {
        guard let base = bases[call.definition.upstream] else { return .failure(.notConfigured(call.definition.upstream)) }
        if case .files(let directory) = UpstreamLocation(base) {
            let result = readFile(directory: directory, call: call)
            // A missing file is the offline upstream's 404, which the source may answer.
            if case .failure(.status(let code)) = result, let answer = call.definition.answer(for: Int(code)) {
                return .success(UpstreamValue(value: .null, bytes: 0, answered: Int(code), ttl: answer.ttl))
            }
            return result
        }
        let upstream = call.definition.upstream
        // The source's timeout bounds the call from here: waiting for a token counts.
        let deadline = ContinuousClock.now + call.definition.timeout
        var authorization: [(String, String)]
        switch await credentials.headers(for: upstream, until: deadline, limit: call.definition.timeout) {
        case .success(let found): authorization = found
        case .failure(let failure): return .failure(failure)
        }
        // A 401 to a token that may have been revoked: a new token, and the call once more.
        if credentials.refreshes(upstream) {
            let first = await fetch(
                call, from: base, headers: Self.merged(headers, authorization), until: deadline, span: span, answersUnauthorized: false)
            guard case .failure(.status(401)) = first else { return first }
            switch await credentials.headers(for: upstream, rejected: authorization, until: deadline, limit: call.definition.timeout) {
            case .success(let renewed): authorization = renewed
            case .failure(let failure): return .failure(failure)
            }
            span?.addEvent(SpanEvent(name: "credential renewed"))
        }
        return await fetch(
            call, from: base, headers: Self.merged(headers, authorization), until: deadline, span: span, answersUnauthorized: true)
    }

    /// The forwarded headers with the upstream's credential: a forwarded header of the same name
    /// (the app's own `Authorization`) is replaced by the server's, never sent beside it.
    static func merged(_ forwarded: [(String, String)], _ credential: [(String, String)]) -> [(String, String)] {
        guard !credential.isEmpty else { return forwarded }
        let names = Set(credential.map { $0.0.lowercased() })
        return forwarded.filter { !names.contains($0.0.lowercased()) } + credential
    }

    /// One GET of the call (its redirects followed); a 401 is a failure unless `answersUnauthorized`
    /// lets the source's `answers` take it.
    private func fetch(
        _ call: UpstreamCall, from base: String, headers: [(String, String)], until deadline: ContinuousClock.Instant, span: (any Span)?,
        answersUnauthorized: Bool
    ) async -> Result<UpstreamValue, UpstreamFailure> {
        let maxBytes = call.definition.maxBytes
        return await exchange(
            .GET, url: base + call.target, headers: headers, body: nil, on: http, timeout: call.definition.timeout, until: deadline,
            mayRetry: Self.isConnectionFailure, span: span
        ) { response, url, redirects in
            let status = response.status.code
            if Self.redirectStatuses.contains(status) {
                _ = try? await response.body.collect(upTo: 64 << 10)
                guard let location = response.headers.first(name: "Location") else { return .done(.failure(.status(status))) }
                guard let next = Self.sameOrigin(location, from: url) else {
                    return .done(.failure(.redirect("HTTP \(status) to another origin")))
                }
                guard redirects < Self.maxRedirects else { return .done(.failure(.redirect("more than \(Self.maxRedirects) redirects"))) }
                return .follow(next)
            }
            guard (200..<300).contains(status) else {
                if status != 401 || answersUnauthorized, let answer = call.definition.answer(for: Int(status)) {
                    return .done(
                        try await Self.body(of: response, maxBytes: maxBytes).map { bytes in
                            // Its body is the source's value when it is JSON (an API's own error), else null.
                            let value = try? JSONParser.parse(bytes).value
                            return UpstreamValue(value: value ?? .null, bytes: bytes.count, answered: Int(status), ttl: answer.ttl)
                        })
                }
                _ = try? await response.body.collect(upTo: 64 << 10)
                return .done(.failure(.status(status)))
            }
            let parsed = try await Self.body(of: response, maxBytes: maxBytes).flatMap(Self.parse)
            guard call.definition.pages?.next == .link, case .success(var value) = parsed else { return .done(parsed) }
            value.nextLink = response.headers["Link"].lazy.compactMap { LinkHeader.next(in: $0) }.first.flatMap {
                LinkHeader.target($0, from: url, base: base)
            }
            return .done(.success(value))
        }
    }

    /// An action's request to its upstream (see ``ScreenAction/Call``).
    struct Submit: Sendable {
        var upstream: String
        var method: ScreenAction.Call.Method
        /// Path and query, percent-encoded.
        var target: String
        /// The JSON body, when the call sends one.
        var body: [UInt8]?
        var timeout: Duration
        var maxBytes: Int
    }

    /// What an upstream answered to an action's request: any status, and its body when it is JSON.
    struct Answer: Sendable, Equatable {
        var status: Int
        var body: JSONValue?
    }

    /// Sends an action's request. Unlike a source's GET, any status is an answer (the action
    /// answers per status); a failure is no complete answer in time, a connection that fails, a
    /// 2xx body that is not JSON, a body over `maxBytes`, or a redirect (not followed for actions).
    /// A connection that fails before a response is retried once for GET, PUT and DELETE, which
    /// may be repeated safely; POST and PATCH go on a new connection each (see `submitHTTPClient`)
    /// and are retried only when it could not be opened, so nothing was sent.
    func submit(_ submit: Submit, headers: [(String, String)], span: (any Span)? = nil) async -> Result<Answer, UpstreamFailure> {
        guard let base = bases[submit.upstream] else { return .failure(.notConfigured(submit.upstream)) }
        if case .files(let directory) = UpstreamLocation(base) {
            return FileUpstream(directory: directory).answer(submit)
        }
        // The action's timeout bounds the call from here: waiting for a token counts.
        let deadline = ContinuousClock.now + submit.timeout
        var authorization: [(String, String)]
        switch await credentials.headers(for: submit.upstream, until: deadline, limit: submit.timeout) {
        case .success(let found): authorization = found
        case .failure(let failure): return .failure(failure)
        }
        let first = await send(submit, to: base, headers: Self.merged(headers, authorization), until: deadline, span: span)
        // A 401 to a token that may have been revoked: the upstream did nothing, so the request is
        // sent again, once, with a new token.
        guard credentials.refreshes(submit.upstream), case .success(let answer) = first, answer.status == 401 else { return first }
        switch await credentials.headers(for: submit.upstream, rejected: authorization, until: deadline, limit: submit.timeout) {
        case .success(let renewed): authorization = renewed
        case .failure(let failure): return .failure(failure)
        }
        span?.addEvent(SpanEvent(name: "credential renewed"))
        return await send(submit, to: base, headers: Self.merged(headers, authorization), until: deadline, span: span)
    }

    private func send(
        _ submit: Submit, to base: String, headers: [(String, String)], until deadline: ContinuousClock.Instant, span: (any Span)?
    ) async -> Result<Answer, UpstreamFailure> {
        let repeatable = submit.method.isIdempotent
        return await exchange(
            HTTPMethod(rawValue: submit.method.rawValue), url: base + submit.target, headers: headers, body: submit.body,
            on: repeatable ? http : submitHTTP, timeout: submit.timeout, until: deadline,
            mayRetry: repeatable ? Self.isConnectionFailure : Self.isConnectFailure, span: span
        ) { response, _, _ in
            let status = Int(response.status.code)
            if Self.redirectStatuses.contains(response.status.code) {
                _ = try? await response.body.collect(upTo: 64 << 10)
                return .done(.failure(.redirect("HTTP \(status); actions follow no redirect")))
            }
            return .done(try await Self.body(of: response, maxBytes: submit.maxBytes).flatMap { Self.answer(status: status, bytes: $0) })
        }
    }

    /// An answer from its status and body: a 2xx body must be JSON (or empty); another status's
    /// body is kept when it is JSON and dropped otherwise (an error page).
    static func answer(status: Int, bytes: [UInt8]) -> Result<Answer, UpstreamFailure> {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .success(Answer(status: status, body: nil)) }
        switch parse(bytes) {
        case .success(let value): return .success(Answer(status: status, body: value.value))
        case .failure(let failure): return (200..<300).contains(status) ? .failure(failure) : .success(Answer(status: status, body: nil))
        }
    }

    /// What reading a response decided: the result, or a redirect to follow.
    private enum Step<Value> {
        case done(Result<Value, UpstreamFailure>)
        case follow(String)
    }

    /// One exchange with an upstream, fetches and submits alike: the request (again at each
    /// redirect `read` follows; it is told how many it followed), its response read by `read`,
    /// all by `deadline` (what is left of the call's `timeout`, which a failure names). A connection
    /// that fails is tried once more, on a new connection, when `mayRetry` says so. AsyncHTTPClient's
    /// deadline stops counting once the response head arrives, so the whole exchange is also raced
    /// against a timer of our own; the loser is cancelled (which closes the connection).
    /// Each request sent again (a retry or a redirect) is an event of `span`, which counts them in
    /// `http.request.resend_count` (OpenTelemetry's HTTP client conventions).
    private func exchange<Value: Sendable>(
        _ method: HTTPMethod, url: String, headers: [(String, String)], body: [UInt8]?, on http: HTTPClient, timeout: Duration,
        until end: ContinuousClock.Instant, mayRetry: @escaping @Sendable (any Error) -> Bool, span: (any Span)?,
        read: @escaping @Sendable (HTTPClientResponse, _ url: String, _ redirects: Int) async throws -> Step<Value>
    ) async -> Result<Value, UpstreamFailure> {
        let left = end - ContinuousClock.now
        guard left > .zero else { return .failure(.timeout(timeout)) }
        return await Self.bounded(by: left, reporting: timeout) {
            let deadline = NIODeadline.now() + .nanoseconds(Int64(left / .nanoseconds(1)))
            var url = url
            var attempt = 0
            var redirects = 0
            var resends = 0
            /// Notes on the span that the request is sent again, and why.
            func resend(_ event: SpanEvent) {
                resends += 1
                guard let span, span.isRecording else { return }
                span.addEvent(event)
                span.attributes["http.request.resend_count"] = resends
            }
            while true {
                attempt += 1
                var request = Self.request(url: url, headers: headers)
                request.method = method
                if let body {
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(bytes: body))
                }
                // A retry goes on a new connection: the pool may hold more connections the peer
                // closed meanwhile (after churn, every one of them), and the retry would meet one.
                let client = attempt > 1 ? submitHTTP : http
                do {
                    switch try await read(try await client.execute(request, deadline: deadline), url, redirects) {
                    case .done(let result):
                        return result
                    case .follow(let next):
                        url = next
                        redirects += 1
                        attempt = 0
                        resend(SpanEvent(name: "redirect"))
                    }
                } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                    return .failure(.timeout(timeout))
                } catch {
                    if NIODeadline.now() >= deadline || Task.isCancelled { return .failure(.timeout(timeout)) }
                    if attempt == 1, mayRetry(error) {
                        resend(SpanEvent(name: "retry", attributes: ["exception.message": .string(Self.describe(error))]))
                        continue
                    }
                    return .failure(.connection(Self.describe(error)))
                }
            }
        }
    }

    /// A connection's failure as an operator reads it: a socket error in the system's words
    /// (`Connection refused (errno 111)`, where NIO's own text reads "connection reset (error set):
    /// Connection refused) (errno: 111)"), each address tried for a host, anything else as it says.
    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return "\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))" }
        if let error = error as? NIOConnectionError {
            guard !error.connectionErrors.isEmpty else { return "\(error.host) did not resolve to an address" }
            return error.connectionErrors.map { "\(describe($0.error)) at \($0.target)" }.joined(separator: "; ")
        }
        return String(describing: error)
    }

    /// `operation`'s result, or ``UpstreamFailure/timeout(_:)`` of `timeout` after `limit`.
    private static func bounded<Value: Sendable>(
        by limit: Duration, reporting timeout: Duration, _ operation: @escaping @Sendable () async -> Result<Value, UpstreamFailure>
    ) async -> Result<Value, UpstreamFailure> {
        await withTaskGroup(of: Result<Value, UpstreamFailure>?.self) { group in
            group.addTask { await operation() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return Task.isCancelled ? nil : .failure(.timeout(timeout))
            }
            var result: Result<Value, UpstreamFailure> = .failure(.timeout(timeout))
            while let finished = await group.next() {
                guard let finished else { continue }
                result = finished
                group.cancelAll()
                break
            }
            return result
        }
    }

    private static let redirectStatuses: Set<UInt> = [301, 302, 303, 307, 308]

    /// A request to `url` that asks for JSON, with the forwarded headers.
    private static func request(url: String, headers: [(String, String)]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "taksi-server")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return request
    }

    /// The response's body, or ``UpstreamFailure/tooLarge(limit:)`` past `maxBytes` (at once when
    /// `Content-Length` says so); throws what the connection throws.
    private static func body(of response: HTTPClientResponse, maxBytes: Int) async throws -> Result<[UInt8], UpstreamFailure> {
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBytes {
            return .failure(.tooLarge(limit: maxBytes))
        }
        do {
            return .success(Array(try await response.body.collect(upTo: maxBytes).readableBytesView))
        } catch is NIOTooManyBytesError {
            return .failure(.tooLarge(limit: maxBytes))
        }
    }

    /// The absolute URL a `Location` leads to, when it stays on the origin of `current`.
    static func sameOrigin(_ location: String, from current: String) -> String? {
        guard let base = URL(string: current), let target = URL(string: location, relativeTo: base)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == base.scheme?.lowercased(),
            let host = target.host?.lowercased(), host == base.host?.lowercased()
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        guard (target.port ?? defaultPort) == (base.port ?? defaultPort) else { return nil }
        return target.absoluteString
    }

    /// A connection that could not be opened (refused, timed out, unreachable): nothing was sent.
    @Sendable private static func isConnectFailure(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError: error == .connectTimeout
        case let error as IOError: [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT].contains(error.errnoCode)
        case let error as ChannelError: if case .connectTimeout = error { true } else { false }
        case is NIOConnectionError: true
        default: false
        }
    }

    /// A failure before any response: a failed connect, or a connection reset or closed.
    @Sendable private static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .connectTimeout || error == .remoteConnectionClosed
        }
        return error is IOError || error is ChannelError || error is NIOConnectionError
    }

    /// `DIR/v2/networks.json` for `/v2/networks?x=1`, or `DIR/v2/networks.x=1.json` where that
    /// file exists; with the `Link` of its headers file for a source that pages by them (see
    /// ``FileUpstream``).
    private func readFile(directory: String, call: UpstreamCall) -> Result<UpstreamValue, UpstreamFailure> {
        let upstream = FileUpstream(directory: directory)
        guard let file = upstream.answerFile(for: call.target), let data = FileManager.default.contents(atPath: file)
        else { return .failure(.status(404)) }
        guard data.count <= call.definition.maxBytes else { return .failure(.tooLarge(limit: call.definition.maxBytes)) }
        let parsed = Self.parse(Array(data))
        guard call.definition.pages?.next == .link, case .success(var value) = parsed else { return parsed }
        value.nextLink = upstream.headers(of: file).lazy.filter { $0.name.lowercased() == "link" }.compactMap {
            LinkHeader.next(in: $0.value)
        }.first.flatMap(LinkHeader.fileTarget)
        return .success(value)
    }

    static func parse(_ bytes: [UInt8]) -> Result<UpstreamValue, UpstreamFailure> {
        do {
            return .success(UpstreamValue(value: try JSONParser.parse(bytes).value, bytes: bytes.count))
        } catch {
            return .failure(.invalidJSON(error.message))
        }
    }
}
