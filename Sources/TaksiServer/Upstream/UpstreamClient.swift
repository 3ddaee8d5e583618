import AsyncHTTPClient
import Foundation
import Logging
public import NIOCore
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

    /// A short stable name, for metrics.
    public var code: String {
        switch self {
        case .timeout: "timeout"
        case .connection: "connection"
        case .status: "status"
        case .invalidJSON: "invalid_json"
        case .tooLarge: "too_large"
        case .notConfigured: "not_configured"
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
        }
    }
}

/// One connection pool for the process, on AsyncHTTPClient's own event loops. A global, so it lives
/// as long as the process and needs no shutdown however many applications (tests) come and go.
/// A refused connection fails at once (no connect retries until the deadline): the caller retries
/// once itself, then degrades the source.
private let upstreamHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
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

    /// GETs the call's URL with the forwarded headers; retries once when the connection fails
    /// before a response, within the same deadline.
    public func fetch(_ call: UpstreamCall, headers: [(String, String)]) async -> Result<UpstreamValue, UpstreamFailure> {
        guard let base = bases[call.definition.upstream] else { return .failure(.notConfigured(call.definition.upstream)) }
        if base.hasPrefix("file:") {
            return readFile(directory: String(base.dropFirst("file:".count)), call: call)
        }
        let deadline = NIODeadline.now() + .nanoseconds(Int64(call.definition.timeout * 1e9))
        var request = HTTPClientRequest(url: base + call.target)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "taksi-server")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                let response = try await http.execute(request, deadline: deadline)
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
                if NIODeadline.now() >= deadline { return .failure(.timeout(seconds: call.definition.timeout)) }
                if attempt == 1, Self.isConnectionFailure(error) { continue }
                return .failure(.connection(String(describing: error)))
            }
        }
    }

    /// Failures before any response: refused, reset, closed or timed-out connects.
    private static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .connectTimeout || error == .remoteConnectionClosed
        }
        return error is IOError || error is ChannelError || String(describing: type(of: error)).contains("Connect")
    }

    /// `DIR/v2/networks.json` for `/v2/networks?x=1`: the query is ignored; `.` and `..`
    /// segments are refused so a parameter can never leave the directory.
    private func readFile(directory: String, call: UpstreamCall) -> Result<UpstreamValue, UpstreamFailure> {
        let path = call.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let segments = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        guard !segments.isEmpty, !segments.contains(where: { $0 == "." || $0 == ".." || $0.contains("/") || $0.isEmpty }) else {
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
