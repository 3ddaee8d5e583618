public import Logging
public import NIOHTTP1

/// What ties a request to the work it causes elsewhere: its `X-Request-Id` and the W3C trace
/// context the client sent (`traceparent`, `tracestate`). Sent on every upstream and action call
/// (never part of a cache key or of `Vary`), and named by every log line written for the request.
/// Read only when something is called or logged: a request answered from memory never builds it.
/// A source cannot list these headers to forward (``HTTPSource/alwaysSentHeaders``).
public struct Correlation: Sendable {
    /// The request's id, as the response's `X-Request-Id` says it.
    public var requestID: String
    /// The client's `traceparent`, when it is a valid one (version 00, non-zero ids).
    public var traceParent: String?
    /// The client's `tracestate`, sent on only with a valid `traceparent`.
    public var traceState: String?

    public init(requestID: String, headers: HTTPHeaders) {
        self.requestID = requestID
        if let parent = headers.first(name: "traceparent"), Self.isTraceParent(parent) {
            traceParent = parent
            traceState = headers.first(name: "tracestate").flatMap { $0.utf8.count <= 512 ? $0 : nil }
        }
    }

    /// The 32 hex digits of the trace's id, for log lines.
    public var traceID: String? {
        traceParent.map { String($0.dropFirst(3).prefix(32)) }
    }

    /// The headers an upstream call carries.
    public var headers: [(String, String)] {
        var headers = [("X-Request-Id", requestID)]
        if let traceParent { headers.append(("traceparent", traceParent)) }
        if let traceState { headers.append(("tracestate", traceState)) }
        return headers
    }

    /// Log metadata naming the request and its trace.
    public var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["request_id": .string(requestID)]
        if let traceID { metadata["trace_id"] = .string(traceID) }
        return metadata
    }

    /// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, ids not all zero
    /// (W3C Trace Context, level 1).
    static func isTraceParent(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
            bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "0")
        else { return false }
        let hex = { (range: Range<Int>) in bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        let zero = { (range: Range<Int>) in bytes[range].allSatisfy { $0 == UInt8(ascii: "0") } }
        return hex(3..<35) && hex(36..<52) && hex(53..<55) && !zero(3..<35) && !zero(36..<52)
    }
}
