public import Logging
public import NIOHTTP1
public import Tracing

/// What ties a request to the work it causes elsewhere: its `X-Request-Id` and its W3C trace
/// context. Every upstream and action call carries both (never as part of a cache key or of
/// `Vary`), and every log line written for the request names them. With tracing on, each call is
/// a client span, a child of the request's span, and carries that span's `traceparent`; with it
/// off, the client's own `traceparent` and `tracestate` are passed on as they came.
/// Read only when something is called or logged: a request answered from memory never builds it.
/// A source cannot list these headers to forward (``HTTPSource/alwaysSentHeaders``).
public struct Correlation: Sendable {
    /// The request's id, as the response's `X-Request-Id` says it.
    public var requestID: String
    /// The client's `traceparent`, when it is a valid one (version 00, non-zero ids).
    public var traceParent: String?
    /// The client's `tracestate`, passed on only with a valid `traceparent` and when valid itself
    /// (repeated headers joined, at most 512 bytes; ``TraceContextHeaders``).
    public var traceState: String?
    /// The request's span and the tracer, when tracing is on.
    var span: (any Span)?
    var tracing: RequestTracing?

    public init(requestID: String, headers: HTTPHeaders) {
        self.requestID = requestID
        let context = TraceContextHeaders(headers)
        traceParent = context.traceParent
        traceState = context.traceState
    }

    init(requestID: String, headers: HTTPHeaders, span: (any Span)?, tracing: RequestTracing?) {
        self.init(requestID: requestID, headers: headers)
        self.span = span
        self.tracing = tracing
    }

    /// The 32 hex digits of the trace's id, for log lines: the request span's trace, or the
    /// client's when tracing is off.
    public var traceID: String? {
        let parent = span.flatMap { span in tracing?.headers(of: span).first { $0.0 == "traceparent" }?.1 } ?? traceParent
        return parent.map { String($0.dropFirst(3).prefix(32)) }
    }

    /// Whether the request's span is recorded (tracing is on, and the trace sampled).
    var isRecording: Bool { span?.isRecording ?? false }

    /// A client span for one call, a child of the request's; nil when tracing is off.
    /// - Parameter started: when the call began, if not now.
    func callSpan(_ name: String, at started: DefaultTracerClock.Instant? = nil) -> (any Span)? {
        guard let span, let tracing else { return nil }
        return tracing.callSpan(name, parent: span, at: started ?? DefaultTracerClock.now)
    }

    /// The headers a call carries: the request's id, and the call span's trace context (or, with
    /// tracing off, the client's).
    public func headers(for call: (any Span)?) -> [(String, String)] {
        var headers = [("X-Request-Id", requestID)]
        if let call, let tracing { return headers + tracing.headers(of: call) }
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

    /// Whether a valid `traceparent`'s flags say its trace is recorded (the sampled bit).
    static func isSampled(_ parent: String) -> Bool {
        // The flags' low bit is the low bit of their last hex digit's value: `1`, `3`, ... `b`, `d`, `f`.
        guard let last = parent.utf8.last else { return false }
        return last <= UInt8(ascii: "9") ? last & 1 == 1 : last & 1 == 0
    }
}
