import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import TaksiSchema
public import TaksiScreens

/// Why an upstream call gave no value. Logged with the source; never sent to the client.
public enum UpstreamFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case timeout(seconds: Double)
    case connection(String)
    case status(UInt)
    case invalidJSON(String)
    case tooLarge(limit: Int)
    case notConfigured(String)
    /// A redirect this client does not follow: to another origin, or more than ``UpstreamClient/maxRedirects``.
    case redirect(String)

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
        }
    }

    public var description: String {
        switch self {
        case .timeout(let seconds): "no complete response within \(seconds) s"
        case .connection(let detail): "connection failed: \(detail)"
        case .status(let code): "answered HTTP \(code)"
        case .invalidJSON(let detail): "the body is not JSON: \(detail)"
        case .tooLarge(let limit): "the body is larger than max_bytes (\(limit))"
        case .notConfigured(let name): "upstream \"\(name)\" is not configured"
        case .redirect(let detail): "redirect not followed: \(detail)"
        }
    }
}

/// One connection pool for the process, on AsyncHTTPClient's own event loops. A global, so it lives
/// as long as the process and needs no shutdown however many applications (tests) come and go.
/// A refused connection fails at once (no connect retries until the deadline): the caller retries
/// once itself, then degrades the source. Redirects are followed by ``UpstreamClient`` itself,
/// only within the upstream's origin.
private let upstreamHTTPClient = makeUpstreamHTTPClient { $0.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32 }

/// The client of submits that may not be repeated (POST, PATCH): a new connection for each. On a
/// pooled connection the peer may have closed while it sat idle, and a request sent on it fails
/// with nothing to tell whether the peer read it (an upstream that closes after every answer
/// failed 18 submits in 290 that way). On a new connection, a failure to connect means nothing was
/// sent, so that, and only that, is retried.
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

    /// - Parameter upstreams: base URLs by name (`https://api.citybik.es`, `file:/srv/fixtures/citybikes`).
    public init(upstreams: [String: String]) {
        self.bases = upstreams
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
    /// upstream that stalls or drips its body fails with ``UpstreamFailure/timeout(seconds:)``.
    /// Redirects (301, 302, 303, 307, 308) are followed up to ``maxRedirects`` times within the
    /// upstream's origin (scheme, host and port); a redirect elsewhere fails the call, so neither
    /// forwarded headers nor the answer ever cross to a host the configuration does not name.
    public func fetch(_ call: UpstreamCall, headers: [(String, String)]) async -> Result<UpstreamValue, UpstreamFailure> {
        guard let base = bases[call.definition.upstream] else { return .failure(.notConfigured(call.definition.upstream)) }
        if base.hasPrefix("file:") {
            return readFile(directory: String(base.dropFirst("file:".count)), call: call)
        }
        return await Self.bounded(by: call.definition.timeout) { await exchange(url: base + call.target, call: call, headers: headers) }
    }

    /// `operation`'s result, or a timeout after `seconds`. AsyncHTTPClient's deadline stops
    /// counting once the response head arrives, so the body is raced against a timer of our own;
    /// the loser is cancelled (which closes the connection).
    private static func bounded<Value: Sendable>(
        by seconds: Double, _ operation: @escaping @Sendable () async -> Result<Value, UpstreamFailure>
    ) async -> Result<Value, UpstreamFailure> {
        await withTaskGroup(of: Result<Value, UpstreamFailure>?.self) { group in
            group.addTask { await operation() }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
                return Task.isCancelled ? nil : .failure(.timeout(seconds: seconds))
            }
            var result: Result<Value, UpstreamFailure> = .failure(.timeout(seconds: seconds))
            while let finished = await group.next() {
                guard let finished else { continue }
                result = finished
                group.cancelAll()
                break
            }
            return result
        }
    }

    /// An action's request to its upstream (see ``ScreenAction/Call``).
    struct Submit: Sendable {
        var upstream: String
        var method: String
        /// Path and query, percent-encoded.
        var target: String
        /// The JSON body, when the call sends one.
        var body: [UInt8]?
        var timeout: Double
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
    func submit(_ submit: Submit, headers: [(String, String)]) async -> Result<Answer, UpstreamFailure> {
        guard let base = bases[submit.upstream] else { return .failure(.notConfigured(submit.upstream)) }
        if base.hasPrefix("file:") {
            return FileUpstream(directory: String(base.dropFirst("file:".count))).answer(submit)
        }
        let repeatable = ["GET", "PUT", "DELETE"].contains(submit.method)
        let http = repeatable ? self.http : self.submitHTTP
        return await Self.bounded(by: submit.timeout) {
            let deadline = NIODeadline.now() + .nanoseconds(Int64(submit.timeout * 1e9))
            var request = Self.request(url: base + submit.target, headers: headers)
            request.method = HTTPMethod(rawValue: submit.method)
            if let body = submit.body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            var attempt = 0
            while true {
                attempt += 1
                do {
                    let response = try await http.execute(request, deadline: deadline)
                    let status = Int(response.status.code)
                    if Self.redirectStatuses.contains(response.status.code) {
                        _ = try? await response.body.collect(upTo: 64 << 10)
                        return .failure(.redirect("HTTP \(status); actions follow no redirect"))
                    }
                    return try await Self.body(of: response, maxBytes: submit.maxBytes).flatMap { Self.answer(status: status, bytes: $0) }
                } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                    return .failure(.timeout(seconds: submit.timeout))
                } catch {
                    if NIODeadline.now() >= deadline || Task.isCancelled { return .failure(.timeout(seconds: submit.timeout)) }
                    if attempt == 1, repeatable ? Self.isConnectionFailure(error) : Self.isConnectFailure(error) { continue }
                    return .failure(.connection(String(describing: error)))
                }
            }
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

    /// One call: request, same-origin redirects, status, size and JSON checks.
    private func exchange(url: String, call: UpstreamCall, headers: [(String, String)]) async -> Result<UpstreamValue, UpstreamFailure> {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(call.definition.timeout * 1e9))
        var url = url
        var redirects = 0
        var attempt = 0
        while true {
            attempt += 1
            let request = Self.request(url: url, headers: headers)
            do {
                let response = try await http.execute(request, deadline: deadline)
                if Self.redirectStatuses.contains(response.status.code) {
                    _ = try? await response.body.collect(upTo: 64 << 10)
                    guard let location = response.headers.first(name: "Location") else {
                        return .failure(.status(response.status.code))
                    }
                    guard let next = Self.sameOrigin(location, from: url) else {
                        return .failure(.redirect("HTTP \(response.status.code) to another origin"))
                    }
                    guard redirects < Self.maxRedirects else {
                        return .failure(.redirect("more than \(Self.maxRedirects) redirects"))
                    }
                    redirects += 1
                    url = next
                    attempt = 0
                    continue
                }
                guard (200..<300).contains(response.status.code) else {
                    _ = try? await response.body.collect(upTo: 64 << 10)
                    return .failure(.status(response.status.code))
                }
                return try await Self.body(of: response, maxBytes: call.definition.maxBytes).flatMap(Self.parse)
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                return .failure(.timeout(seconds: call.definition.timeout))
            } catch {
                if NIODeadline.now() >= deadline || Task.isCancelled { return .failure(.timeout(seconds: call.definition.timeout)) }
                if attempt == 1, Self.isConnectionFailure(error) { continue }
                return .failure(.connection(String(describing: error)))
            }
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

    /// Failures before any response: refused, reset, closed or timed-out connects.
    /// A connection that could not be opened (refused, timed out, unreachable): nothing was sent.
    private static func isConnectFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .connectTimeout }
        if let error = error as? IOError { return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT].contains(error.errnoCode) }
        return String(describing: type(of: error)).contains("Connect")
    }

    private static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .connectTimeout || error == .remoteConnectionClosed
        }
        return error is IOError || error is ChannelError || String(describing: type(of: error)).contains("Connect")
    }

    /// `DIR/v2/networks.json` for `/v2/networks?x=1` (see ``FileUpstream``).
    private func readFile(directory: String, call: UpstreamCall) -> Result<UpstreamValue, UpstreamFailure> {
        guard let file = FileUpstream(directory: directory).file(for: call.target, suffix: ".json"),
            let data = FileManager.default.contents(atPath: file)
        else { return .failure(.status(404)) }
        guard data.count <= call.definition.maxBytes else { return .failure(.tooLarge(limit: call.definition.maxBytes)) }
        return Self.parse(Array(data))
    }

    static func parse(_ bytes: [UInt8]) -> Result<UpstreamValue, UpstreamFailure> {
        do {
            return .success(UpstreamValue(value: try JSONParser.parse(bytes).value, bytes: bytes.count))
        } catch {
            return .failure(.invalidJSON(error.message))
        }
    }
}
