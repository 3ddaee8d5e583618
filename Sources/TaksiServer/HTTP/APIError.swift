import NIOCore
public import NIOHTTP1
public import TaksiSchema
import TaksiScreens

/// An error answered to a client: an HTTP status, a stable machine code and a message that says
/// what to do. The body is `{"error": {"code": ..., "message": ...}}`; internal causes are logged,
/// never echoed.
public struct APIError: Error, Sendable, Equatable {
    public var code: Code
    public var message: String
    /// Extra response headers (e.g. `Allow` on 405).
    public var headers: [(String, String)] = []

    /// The status it is answered with: its code's.
    public var status: HTTPResponseStatus { code.status }

    public init(_ code: Code, message: String, headers: [(String, String)] = []) {
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    /// A stable machine code (clients may branch on it) and the HTTP status it is answered with:
    /// the one place an error's status is decided. A struct, so codes can be added without
    /// breaking a caller's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public let status: HTTPResponseStatus

        init(_ rawValue: String, _ status: HTTPResponseStatus) {
            self.rawValue = rawValue
            self.status = status
        }

        public var description: String { rawValue }

        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        public static let actionNotFound = Code("action_not_found", .notFound)
        public static let bodyTimeout = Code("body_timeout", .requestTimeout)
        public static let bodyTooLarge = Code("body_too_large", .payloadTooLarge)
        public static let expectationFailed = Code("expectation_failed", .expectationFailed)
        public static let headersTooLarge = Code("headers_too_large", .requestHeaderFieldsTooLarge)
        public static let httpVersionNotSupported = Code("http_version_not_supported", .httpVersionNotSupported)
        public static let idempotencyKeyReused = Code("idempotency_key_reused", .unprocessableEntity)
        public static let invalidBody = Code("invalid_body", .badRequest)
        public static let invalidHeader = Code("invalid_header", .badRequest)
        public static let invalidHost = Code("invalid_host", .badRequest)
        public static let invalidIdempotencyKey = Code("invalid_idempotency_key", .badRequest)
        public static let foreignPageToken = Code("foreign_page_token", .badRequest)
        public static let invalidLink = Code("invalid_link", .badRequest)
        public static let invalidPageToken = Code("invalid_page_token", .badRequest)
        public static let invalidParameter = Code("invalid_parameter", .badRequest)
        public static let invalidQuery = Code("invalid_query", .badRequest)
        public static let invalidVersion = Code("invalid_version", .badRequest)
        public static let linkNotFound = Code("link_not_found", .notFound)
        public static let malformedRequest = Code("malformed_request", .badRequest)
        public static let methodNotAllowed = Code("method_not_allowed", .methodNotAllowed)
        public static let methodNotImplemented = Code("method_not_implemented", .notImplemented)
        public static let missingParameter = Code("missing_parameter", .badRequest)
        public static let notFound = Code("not_found", .notFound)
        public static let notServingYet = Code("not_serving_yet", .serviceUnavailable)
        public static let pageTokenExpired = Code("page_token_expired", .badRequest)
        public static let previewStreamsExhausted = Code("preview_streams_exhausted", .serviceUnavailable)
        public static let screenAlternativeNotFound = Code("screen_alternative_not_found", .notFound)
        public static let screenNotFound = Code("screen_not_found", .notFound)
        public static let screenVersionNotFound = Code("screen_version_not_found", .notFound)
        public static let skeletonOutdated = Code("skeleton_outdated", .preconditionFailed)
        public static let storeUnavailable = Code("store_unavailable", .serviceUnavailable)
        public static let submitInProgress = Code("submit_in_progress", .conflict)
        public static let unsupportedMediaType = Code("unsupported_media_type", .unsupportedMediaType)
        public static let upstreamsUnavailable = Code("upstreams_unavailable", .serviceUnavailable)
        public static let transferCodingNotImplemented = Code("transfer_coding_not_implemented", .notImplemented)
        public static let uriTooLong = Code("uri_too_long", .uriTooLong)

        /// The code of a data request the screen refuses (``DataRequestError``).
        static func of(_ error: DataRequestError) -> Code {
            if case .missingParameter = error { .missingParameter } else { .invalidParameter }
        }
    }

    /// The JSON error body.
    public var body: JSONValue {
        ["error": ["code": .string(code.rawValue), "message": .string(message)]]
    }

    static func notFound(path: String) -> APIError {
        APIError(
            .notFound,
            message: "no endpoint at \(path); see GET /screens for the screens and GET /openapi.yaml for the API"
        )
    }

    static func screenNotFound(_ name: String) -> APIError {
        APIError(
            .screenNotFound,
            message: "there is no screen named \"\(name)\"; GET /screens lists the screens"
        )
    }

    /// A replica that serves from the store and has no bundle it can load yet (nothing published,
    /// the current one refused here, the store away): nothing of screens is answered; `/readyz`
    /// says why.
    static let notServingYet = APIError(
        .notServingYet,
        message: "this replica serves no screens yet: it waits for a published bundle it can load; GET /readyz says why",
        headers: [("Retry-After", "1")]
    )

    /// The methods every endpoint but actions answers, for `Allow`.
    static let allowedMethods = "GET, HEAD, OPTIONS"
    /// The methods an action's endpoint answers.
    static let actionMethods = "POST, OPTIONS"

    static func methodNotAllowed(_ method: HTTPMethod, allowed: String = allowedMethods) -> APIError {
        APIError(
            .methodNotAllowed,
            message: "\(method.rawValue) is not allowed here; use \(allowed == actionMethods ? "POST" : "GET or HEAD")",
            headers: [("Allow", allowed)]
        )
    }

    /// A method this server does not know at all (RFC 9110, 15.6.2).
    static func methodNotImplemented(_ method: HTTPMethod?) -> APIError {
        APIError(
            .methodNotImplemented,
            message: "\(method.map { "the method \($0.rawValue)" } ?? "the request's method") is not implemented; use GET or HEAD",
            headers: [("Allow", allowedMethods)]
        )
    }

    /// A body sent in a transfer coding other than `chunked` (RFC 9112, 6.1).
    static let transferCodingNotImplemented = APIError(
        .transferCodingNotImplemented,
        message: "the only transfer coding this server reads is chunked; send the body with Content-Length or chunked"
    )

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(
            .bodyTooLarge,
            message: "the request body is larger than \(limit) bytes; no endpoint takes a body that large"
        )
    }

    /// A screen's source or action calls an upstream, and this server calls none.
    static let upstreamsUnavailable = APIError(.upstreamsUnavailable, message: "this server calls no upstreams")

    static let bodyTimeout = APIError(
        .bodyTimeout,
        message: "the request body did not arrive in time; send it whole, without pauses"
    )

    static let invalidHost = APIError(
        .invalidHost,
        message: "an HTTP/1.1 request needs exactly one Host header (RFC 9112, 3.2); send one"
    )

    static let versionNotSupported = APIError(
        .httpVersionNotSupported,
        message: "this server speaks HTTP/1.1 (and 1.0); for HTTP/2 or 3, terminate them at a proxy or load balancer"
    )

    static let expectationFailed = APIError(
        .expectationFailed,
        message: "the only expectation this server meets is Expect: 100-continue"
    )

    /// A request whose query or path parameters the screen refuses: 400 with the error's code.
    static func badParameters(_ error: DataRequestError) -> APIError {
        APIError(.of(error), message: error.description)
    }

    static func invalidQuery(_ detail: String) -> APIError {
        APIError(.invalidQuery, message: "the query string is malformed: \(detail)")
    }

    static func uriTooLong(limit: Int) -> APIError {
        APIError(
            .uriTooLong,
            message: "the request target is longer than \(limit) bytes; shorten the query"
        )
    }

    static func headersTooLarge(limit: Int) -> APIError {
        APIError(
            .headersTooLarge,
            message: "the request headers are larger than \(limit) bytes; send fewer or smaller headers"
        )
    }

    static let malformedRequest = APIError(
        .malformedRequest, message: "the request is not valid HTTP/1.1"
    )
}
