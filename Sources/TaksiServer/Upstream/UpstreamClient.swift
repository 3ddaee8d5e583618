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
private let upstreamHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .disallow
    configuration.timeout = .init(connect: .seconds(2))
    configuration.decompression = .enabled(limit: .ratio(20))
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()

/// Calls upstream APIs: HTTP(S) through AsyncHTTPClient's process-wide connection pool (on its
/// own event loops, so upstream work never delays the server's), or JSON files for `file:`
/// upstreams (offline fixtures).
public struct UpstreamClient: Sendable {
    private let http: HTTPClient
    private let bases: [String: String]

    /// - Parameter upstreams: base URLs by name (`https://api.citybik.es`, `file:/srv/fixtures/citybikes`).
    public init(upstreams: [String: String]) {
        self.bases = upstreams
        self.http = upstreamHTTPClient
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
        let timeout = call.definition.timeout
        // AsyncHTTPClient's deadline stops counting once the response head arrives, so the body is
        // raced against a timer of our own; the loser is cancelled (which closes the connection).
        return await withTaskGroup(of: Result<UpstreamValue, UpstreamFailure>?.self) { group in
            group.addTask { await exchange(url: base + call.target, call: call, headers: headers) }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(Int64(timeout * 1e9)))
                return Task.isCancelled ? nil : .failure(.timeout(seconds: timeout))
            }
            var result: Result<UpstreamValue, UpstreamFailure> = .failure(.timeout(seconds: timeout))
            while let finished = await group.next() {
                guard let finished else { continue }
                result = finished
                group.cancelAll()
                break
            }
            return result
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
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "taksi-server")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
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
                let maxBytes = call.definition.maxBytes
                if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBytes {
                    return .failure(.tooLarge(limit: maxBytes))
                }
                let body: ByteBuffer
                do {
                    body = try await response.body.collect(upTo: maxBytes)
                } catch is NIOTooManyBytesError {
                    return .failure(.tooLarge(limit: maxBytes))
                }
                return Self.parse(Array(body.readableBytesView))
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
    private static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .connectTimeout || error == .remoteConnectionClosed
        }
        return error is IOError || error is ChannelError || String(describing: type(of: error)).contains("Connect")
    }

    /// `DIR/v2/networks.json` for `/v2/networks?x=1`: the query is ignored; `.`, `..`, empty
    /// segments and control characters are refused so a parameter can never leave the directory.
    private func readFile(directory: String, call: UpstreamCall) -> Result<UpstreamValue, UpstreamFailure> {
        let path = call.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let segments = path.split(separator: "/").map { (try? PercentEncoding.decode($0)) ?? String($0) }
        // The rule data requests are held to (no empty, `.` or `..` segment, no control character,
        // NUL above all, which would cut the path short in open(2)), checked again at the file
        // system; a decoded `/` would add a segment.
        let unsafe = { (segment: String) in segment.contains("/") || HTTPSource.pathSegmentProblem(segment) != nil }
        guard !segments.isEmpty, !segments.contains(where: unsafe) else {
            return .failure(.status(404))
        }
        let file = ([directory] + segments).joined(separator: "/") + ".json"
        guard let data = FileManager.default.contents(atPath: file) else { return .failure(.status(404)) }
        guard data.count <= call.definition.maxBytes else { return .failure(.tooLarge(limit: call.definition.maxBytes)) }
        return Self.parse(Array(data))
    }

    private static func parse(_ bytes: [UInt8]) -> Result<UpstreamValue, UpstreamFailure> {
        do {
            return .success(UpstreamValue(value: try JSONParser.parse(bytes).value, bytes: bytes.count))
        } catch {
            return .failure(.invalidJSON(error.message))
        }
    }
}
