public import NIOHTTP1
import NIOCore
public import TaksiSchema

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

    static func methodNotAllowed(_ method: HTTPMethod) -> APIError {
        APIError(
            status: .methodNotAllowed, code: "method_not_allowed",
            message: "\(method.rawValue) is not allowed here; use GET or HEAD", headers: [("Allow", "GET, HEAD")]
        )
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
