import CoreMetrics
import Logging
import NIOCore
import TaksiScreens
import Tracing

/// What is watched of one source's lookup through the upstream cache, beside the data path (as
/// async-http-client's `RequestBag+Tracing` is beside its request): the call's span, counters and
/// duration, the span of a request that waited for another's call, the cache's verdict, and the
/// log line of a failure. ``DataResolver`` reads only the data path.
struct UpstreamCallObservation: Sendable {
    let call: UpstreamCall
    /// The screen whose data asked for it, for log lines.
    let screen: String
    let correlation: Correlation
    let metrics: any MetricsFactory
    let logger: Logger
    /// When a traced request began waiting: a request that joins another's call gets a span for
    /// its wait, from then.
    private let started: DefaultTracerClock.Instant?
    /// The labels of its counter and timer.
    private let dimensions: [(String, String)]

    init(call: UpstreamCall, screen: String, correlation: Correlation, metrics: any MetricsFactory, logger: Logger) {
        self.call = call
        self.screen = screen
        self.correlation = correlation
        self.metrics = metrics
        self.logger = logger
        self.started = correlation.isRecording ? DefaultTracerClock.now : nil
        self.dimensions = [("upstream", call.definition.upstream), ("source", call.source)]
    }

    /// Makes the cache's call `made` with `fetch`, in a span of its own (which `fetch` is given,
    /// for the trace context it sends), counted by outcome and timed.
    func call(
        _ made: UpstreamCache.Call, _ fetch: ((any Span)?) async -> Result<UpstreamValue, UpstreamFailure>
    ) async -> Result<UpstreamValue, UpstreamFailure> {
        let start = NIODeadline.now()
        let span = correlation.callSpan("GET \(call.definition.upstream)")
        if let span, span.isRecording {
            made.context = span.context
            span.attributes["taksi.cache"] = made.isRefresh ? "refresh" : "miss"
        }
        span?.describe(call)
        let result = await fetch(span)
        let outcome = Outcome(result.map(\.answered))
        if let span, made.joiners > 0, span.isRecording { span.attributes["taksi.upstream.joiners"] = made.joiners }
        span?.end(with: outcome)
        Counter(label: "taksi_upstream_requests_total", dimensions: dimensions + [("result", outcome.label)], factory: metrics)
            .increment()
        Timer(label: "taksi_upstream_duration_seconds", dimensions: dimensions, factory: metrics)
            .recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        return result
    }

    /// Records how the lookup ended: a span for a wait on another's call, the cache's verdict
    /// (counted, and on the request's span), and a line for a failure or a declared status.
    func looked(up joined: UpstreamCache.Joined) {
        let lookup = joined.lookup
        if let made = joined.call, let started, let span = correlation.callSpan("GET \(call.definition.upstream)", at: started) {
            // It made no call of its own: its span is its wait, linked to the call it waited for.
            span.attributes["taksi.cache"] = "joined"
            if let context = made.context { span.addLink(SpanLink(context: context, attributes: [:])) }
            span.describe(call)
            span.end(with: Outcome(lookup))
        }
        let cacheResult: String =
            switch lookup {
            case .hit: "hit"
            case .fetched: joined.call == nil ? "miss" : "joined"
            case .stale: "stale"
            case .staleOnError: "stale_on_error"
            case .failed: "failed"
            }
        Counter(label: "taksi_upstream_cache_total", dimensions: [("result", cacheResult)], factory: metrics).increment()
        if correlation.isRecording { correlation.span?.attributes["taksi.cache.\(call.source)"] = cacheResult }
        // The URL's query may hold a user's input, the headers their credentials: neither is logged.
        let where_: Logger.Metadata = correlation.logMetadata.merging([
            "screen": .string(screen), "source": .string(call.source), "upstream": .string(call.definition.upstream),
        ]) { $1 }
        switch lookup {
        case .fetched(let found) where found.answered != nil:
            // A status the source declares an answer for is the upstream's word, not a failure.
            logger.debug(
                "upstream answered a status the source answers", metadata: where_.merging(["status": "\(found.answered ?? 0)"]) { $1 })
        case .failed(let failure):
            logger.error(
                "upstream failed; its components are degraded", metadata: where_.merging(["cause": .string(failure.description)]) { $1 })
        case .staleOnError(_, let failure):
            logger.warning(
                "upstream failed; serving a stale copy", metadata: where_.merging(["cause": .string(failure.description)]) { $1 })
        default:
            break
        }
    }
}

/// How an upstream call ended: a 2xx, a status its source answers, or a failure.
struct Outcome {
    var result: Result<Int?, UpstreamFailure>

    init(_ result: Result<Int?, UpstreamFailure>) { self.result = result }

    /// The outcome of the call a lookup waited for.
    init(_ lookup: UpstreamCache.Lookup) {
        switch lookup {
        case .failed(let failure), .staleOnError(_, let failure): result = .failure(failure)
        case .hit(let found), .fetched(let found), .stale(let found): result = .success(found.answered)
        }
    }

    /// Its `result` label in `taksi_upstream_requests_total`: `ok`, `answered` or the failure's code.
    var label: String {
        switch result {
        case .success(let answered): answered == nil ? "ok" : "answered"
        case .failure(let failure): failure.code
        }
    }
}

extension Span {
    /// The attributes of an upstream call's span: the upstream, the source, the path as written.
    fileprivate func describe(_ call: UpstreamCall) {
        guard isRecording else { return }
        attributes["taksi.upstream"] = call.definition.upstream
        attributes["taksi.source"] = call.source
        attributes["url.template"] = call.definition.pathTemplate
    }

    /// Ends an upstream call's span with its outcome: a status the source answers, or the
    /// failure, recorded as the span's error.
    fileprivate func end(with outcome: Outcome) {
        guard isRecording else { return end() }
        attributes["taksi.upstream.result"] = outcome.label
        switch outcome.result {
        case .success(let answered):
            if let answered { attributes["http.response.status_code"] = answered }
        case .failure(let failure):
            if case .status(let status) = failure { attributes["http.response.status_code"] = Int(status) }
            recordError(failure)
            setStatus(SpanStatus(code: .error, message: failure.description))
        }
        end()
    }
}
