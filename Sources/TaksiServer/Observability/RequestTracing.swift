import Atomics
public import CoreMetrics
import Instrumentation
import NIOCore
import NIOHTTP1
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

    /// Ends the span with what `response` was, once its `bytes` (head and body) are written.
    func end(_ response: HTTPResponse, bytes: Int) {
        tracing.end(span, label: response.metricsLabel, status: response.status.code, bytes: bytes, variant: response.variant)
    }

    /// The `traceparent` header line the response carries when the trace is recorded
    /// (`\r\ntraceparent: ...`), so an app can name the trace in a report.
    func writeTraceParent(to buffer: inout ByteBuffer) {
        guard span.isRecording, let parent = tracing.headers(of: span).first(where: { $0.0 == "traceparent" }) else { return }
        buffer.writeStaticString("\r\ntraceparent: ")
        buffer.writeString(parent.1)
    }
}

/// Spans of requests and of the calls they make, through swift-distributed-tracing: one
/// server span per request (its W3C `traceparent` continued, or a trace started), one client span
/// per upstream or action call, a child of it, whose context the call carries. Nil everywhere
/// when tracing is off, so a request then does no tracing work at all.
public struct RequestTracing: Sendable {
    let tracer: any Tracer
    /// Which traces are recorded, decided before a span is made; nil leaves every decision to the
    /// tracer's own sampler.
    let sampler: RootSampler?

    /// Counts the trace context headers refused, by header (nil: not counted).
    let refusals: Refusals?

    /// `taksi_trace_context_refused_total{header}`: requests whose `traceparent` or `tracestate`
    /// was malformed and left out (never logged: its value is the client's).
    struct Refusals: Sendable {
        let traceParent: Counter
        let traceState: Counter

        init(metrics: any MetricsFactory) {
            let label = "taksi_trace_context_refused_total"
            traceParent = Counter(label: label, dimensions: [("header", "traceparent")], factory: metrics)
            traceState = Counter(label: label, dimensions: [("header", "tracestate")], factory: metrics)
        }

        func count(_ refusal: TraceContextHeaders.Refusal) {
            switch refusal {
            case .traceParent: traceParent.increment()
            case .traceState: traceState.increment()
            }
        }
    }

    /// - Parameters:
    ///   - tracer: makes and exports the spans.
    ///   - sampling: the share of traces started here that are recorded, 0 to 1, when this
    ///     decides it (the tracer then records every span it is asked for): a request that is not
    ///     recorded makes no span at all, and a request whose `traceparent` says its trace is not
    ///     recorded makes none either. Nil leaves the decision to the tracer, which makes a span
    ///     (and its ids) for every request.
    ///   - metrics: where refused trace context headers are counted; nil counts nothing.
    public init(tracer: any Tracer, sampling: Double? = nil, metrics: (any MetricsFactory)? = nil) {
        self.tracer = tracer
        self.sampler = sampling.map(RootSampler.init(ratio:))
        self.refusals = metrics.map(Refusals.init(metrics:))
    }

    /// Answers `request` inside its span, as a tracing middleware does: the span begins here (see
    /// ``requestSpan(of:)``), the endpoints and the calls they make see it on
    /// the request, and the response carries it to the connection, which ends it once the
    /// response is written. A request that is not recorded is answered as with tracing off.
    func traced(_ request: HTTPRequest, _ answer: (HTTPRequest) -> Reply) -> Reply {
        guard let span = requestSpan(of: request.head) else {
            return answer(request)
        }
        let trace = RequestTrace(span: span, tracing: self)
        var request = request
        request.trace = trace
        switch answer(request) {
        case .ready(var response):
            response.trace = trace
            return .ready(response)
        case .pending(let work):
            return .pending {
                var response = await work()
                response.trace = trace
                return response
            }
        }
    }

    /// The span of a request, continuing the client's trace when its headers carry one; nil
    /// when the request is not recorded (then it is handled as with tracing off: the client's
    /// trace context is passed on as it came).
    func requestSpan(of head: RequestHead) -> (any Span)? {
        // Its fields are made text only when it carries a trace context (most requests do not).
        let client = head.fields.traceParents > 0 ? TraceContextHeaders(head.headers) : TraceContextHeaders()
        if let refused = client.refused { refusals?.count(refused) }
        if let sampler {
            if let parent = client.traceParent {
                // The app's trace decides (a parent-based sampler's rule).
                guard Correlation.isSampled(parent) else { return nil }
            } else if !sampler.records() {
                return nil
            }
        }
        var context = ServiceContext.topLevel
        // Only context checked here reaches the tracer, never the request's headers: swift-otel
        // logs its whole carrier (an app's Authorization and Cookie with it) when it cannot read it.
        if client.traceParent != nil { tracer.extract(client, into: &context, using: ClientContextExtractor()) }
        // Named by its method until its route is known (``end(_:label:status:bytes:variant:)``).
        let span = tracer.startSpan(head.method.rawValue, context: context, ofKind: .server)
        // A span sampled out records nothing: its attributes are not even made.
        guard span.isRecording else { return span }
        span.attributes["http.request.method"] = head.method.rawValue
        span.attributes["url.path"] = String(head.uri.prefix { $0 != "?" })
        return span
    }

    /// Ends a request's span with what the response was (OpenTelemetry's HTTP server
    /// conventions, plus the screen and variant served): a 5xx is an error.
    func end(_ span: any Span, label: MetricsLabel, status: UInt, bytes: Int, variant: String?) {
        guard span.isRecording else { return span.end() }
        span.operationName = "\(span.operationName) \(label)"
        span.attributes["http.route"] = label.rawValue
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

    private struct ClientContextExtractor: Extractor {
        func extract(key: String, from carrier: TraceContextHeaders) -> String? {
            switch key {
            case "traceparent": carrier.traceParent
            case "tracestate": carrier.traceState
            default: nil
            }
        }
    }

    private struct HeadersInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [(String, String)]) { carrier.append((key, value)) }
    }
}

/// Decides which traces started here are recorded, `ratio` of them, before anything is made for
/// a span: a sampled-out request costs an atomic add and a few multiplications, not the ids (three
/// `getrandom` calls) and span a tracer's sampler needs to decide.
final class RootSampler: Sendable {
    let ratio: Double
    /// A request is recorded when its draw is below this.
    private let threshold: UInt64
    private let state: ManagedAtomic<UInt64>

    init(ratio: Double) {
        self.ratio = min(max(ratio, 0), 1)
        self.threshold = self.ratio < 1 ? UInt64(Double(UInt64.max) * self.ratio) : .max
        self.state = ManagedAtomic(UInt64.random(in: .min ... .max))
    }

    /// Whether the next trace is recorded: SplitMix64 over a shared counter, so every event loop
    /// draws from one sequence without a lock.
    func records() -> Bool {
        if ratio >= 1 { return true }
        if ratio <= 0 { return false }
        var z = state.wrappingIncrementThenLoad(by: 0x9E37_79B9_7F4A_7C15, ordering: .relaxed)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return (z ^ (z >> 31)) < threshold
    }
}
