public import NIOHTTP1
import NIOCore
public import TaksiSchema
import TaksiScreens

/// An error answered to a client: an HTTP status, a stable machine code and a message that says
/// what to do. The body is `{"error": {"code": ..., "message": ...}}`; internal causes are logged,
/// never echoed.
public struct APIError: Error, Sendable, Equatable {
    public var status: HTTPResponseStatus
    /// Stable across releases; clients may branch on it.
    public var code: String
    public var message: String
    /// Extra response headers (e.g. `Allow` on 405).
    public var headers: [(String, String)] = []

    public init(status: HTTPResponseStatus, code: String, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.status == rhs.status && lhs.code == rhs.code && lhs.message == rhs.message
    }

    /// The JSON error body.
    public var body: JSONValue {
        ["error": ["code": .string(code), "message": .string(message)]]
    }

    static func notFound(path: String) -> APIError {
        APIError(
            status: .notFound, code: "not_found",
            message: "no endpoint at \(path); see GET /screens for the screens and the README for the API"
        )
    }

    static func screenNotFound(_ name: String) -> APIError {
        APIError(
            status: .notFound, code: "screen_not_found",
            message: "there is no screen named \"\(name)\"; GET /screens lists the screens"
        )
    }

    /// The methods every endpoint but actions answers, for `Allow`.
    static let allowedMethods = "GET, HEAD, OPTIONS"
    /// The methods an action's endpoint answers.
    static let actionMethods = "POST, OPTIONS"

    static func methodNotAllowed(_ method: HTTPMethod, allowed: String = allowedMethods) -> APIError {
        APIError(
            status: .methodNotAllowed, code: "method_not_allowed",
            message: "\(method.rawValue) is not allowed here; use \(allowed == actionMethods ? "POST" : "GET or HEAD")", headers: [("Allow", allowed)]
        )
    }

    /// A method this server does not know at all (RFC 9110, 15.6.2).
    static func methodNotImplemented(_ method: HTTPMethod?) -> APIError {
        APIError(
            status: .notImplemented, code: "method_not_implemented",
            message: "\(method.map { "the method \($0.rawValue)" } ?? "the request's method") is not implemented; use GET or HEAD",
            headers: [("Allow", allowedMethods)]
        )
    }

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(
            status: .payloadTooLarge, code: "body_too_large",
            message: "the request body is larger than \(limit) bytes; no endpoint takes a body that large"
        )
    }

    /// A screen's source or action calls an upstream, and this server calls none.
    static let upstreamsUnavailable = APIError(status: .serviceUnavailable, code: "upstreams_unavailable", message: "this server calls no upstreams")

    static let bodyTimeout = APIError(
        status: .requestTimeout, code: "body_timeout",
        message: "the request body did not arrive in time; send it whole, without pauses"
    )

    static let invalidHost = APIError(
        status: .badRequest, code: "invalid_host",
        message: "an HTTP/1.1 request needs exactly one Host header (RFC 9112, 3.2); send one"
    )

    static let versionNotSupported = APIError(
        status: .httpVersionNotSupported, code: "http_version_not_supported",
        message: "this server speaks HTTP/1.1 (and 1.0); for HTTP/2 or 3, terminate them at a proxy or load balancer"
    )

    static let expectationFailed = APIError(
        status: .expectationFailed, code: "expectation_failed",
        message: "the only expectation this server meets is Expect: 100-continue"
    )

    /// A request whose query or path parameters the screen refuses: 400 with the error's code.
    static func badParameters(_ error: DataRequestError) -> APIError {
        APIError(status: .badRequest, code: error.code, message: error.description)
    }

    static func invalidQuery(_ detail: String) -> APIError {
        APIError(status: .badRequest, code: "invalid_query", message: "the query string is malformed: \(detail)")
    }

    static func uriTooLong(limit: Int) -> APIError {
        APIError(
            status: .uriTooLong, code: "uri_too_long",
            message: "the request target is longer than \(limit) bytes; shorten the query"
        )
    }

    static func headersTooLarge(limit: Int) -> APIError {
        APIError(
            status: .requestHeaderFieldsTooLarge, code: "headers_too_large",
            message: "the request headers are larger than \(limit) bytes; send fewer or smaller headers"
        )
    }

    static let malformedRequest = APIError(
        status: .badRequest, code: "malformed_request", message: "the request is not valid HTTP/1.1"
    )
}
