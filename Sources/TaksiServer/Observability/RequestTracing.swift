public import Instrumentation
public import NIOHTTP1
public import Tracing

/// A traced request's span and the tracer it came from: one reference, so a request carries a
/// word more with tracing off, not two existential boxes.
final class RequestTrace: Sendable {
    let span: any Span
    let tracing: RequestTracing

    init(span: any Span, tracing: RequestTracing) {
        self.span = span
        self.tracing = tracing
    }
}

/// Spans of requests and of the calls they make, through swift-distributed-tracing: one
/// server span per request (its W3C `traceparent` continued, or a trace started), one client span
/// per upstream or action call, a child of it, whose context the call carries. Nil everywhere
/// when tracing is off, so a request then does no tracing work at all.
public struct RequestTracing: Sendable {
    let tracer: any Tracer

    public init(tracer: any Tracer) {
        self.tracer = tracer
    }

    /// The span of a request, continuing the client's trace when its headers carry one.
    func requestSpan(method: HTTPMethod, target: String, headers: HTTPHeaders) -> any Span {
        var context = ServiceContext.topLevel
        tracer.extract(headers, into: &context, using: HeadersExtractor())
        // Named by its method until its route is known (``end(_:route:status:bytes:variant:)``).
        let span = tracer.startSpan(method.rawValue, context: context, ofKind: .server)
        // A span sampled out records nothing: its attributes are not even made.
        guard span.isRecording else { return span }
        span.attributes["http.request.method"] = method.rawValue
        span.attributes["url.path"] = String(target.prefix { $0 != "?" })
        return span
    }

    /// Ends a request's span with what the response was (OpenTelemetry's HTTP server
    /// conventions, plus the screen and variant served): a 5xx is an error.
    func end(_ span: any Span, route: String, status: UInt, bytes: Int, variant: String?) {
        guard span.isRecording else { return span.end() }
        span.operationName = "\(span.operationName) \(route)"
        span.attributes["http.route"] = route
        span.attributes["http.response.status_code"] = Int(status)
        span.attributes["http.response.size"] = bytes  // head and body, as written
        if let variant {
            span.attributes["taksi.screen"] = String(variant.prefix { $0 != "|" })
            span.attributes["taksi.variant"] = variant
        }
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
    }

    /// A client span for a call the request makes, its child, begun at `started`.
    func callSpan(_ name: String, parent: any Span, at started: DefaultTracerClock.Instant) -> any Span {
        tracer.startSpan(name, context: parent.context, ofKind: .client, at: started)
    }

    /// The W3C headers a call made under `span` carries (`traceparent`, `tracestate`).
    func headers(of span: any Span) -> [(String, String)] {
        var headers: [(String, String)] = []
        tracer.inject(span.context, into: &headers, using: HeadersInjector())
        return headers
    }

    private struct HeadersExtractor: Extractor {
        func extract(key: String, from carrier: HTTPHeaders) -> String? { carrier.first(name: key) }
    }

    private struct HeadersInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [(String, String)]) { carrier.append((key, value)) }
    }
}
