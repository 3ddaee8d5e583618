public import CoreMetrics
public import Logging
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import Tracing

/// Looks up the upstream values of a data request: every call at once, through the cache, each
/// logged and counted. A call that fails is one lookup's outcome (``DataEndpoint`` degrades only
/// the components bound to it).
public struct DataResolver: Sendable {
    let client: UpstreamClient
    let cache: UpstreamCache
    let logger: Logger
    let metrics: any MetricsFactory
    /// Fresh cache hits found on the event loop, counted without creating a counter each time.
    private let cacheHits: Counter

    public init(client: UpstreamClient, cache: UpstreamCache, logger: Logger, metrics: any MetricsFactory = MetricsSystem.factory) {
        self.client = client
        self.cache = cache
        self.logger = logger
        self.metrics = metrics
        self.cacheHits = Counter(label: "taksi_upstream_cache_total", dimensions: [("result", "hit")], factory: metrics)
    }

    /// Every call's value through the cache, looked up concurrently; a failure is one lookup's
    /// outcome, never the others'.
    /// - Parameter correlation: the request's id and trace context, sent with each call (but never
    ///   part of its cache key) and named by each log line.
    func lookUp(
        _ calls: [UpstreamCall], requestHeaders: HTTPHeaders, screen: CompiledScreen, correlation: Correlation
    ) async -> [(UpstreamCall, UpstreamCache.Lookup)] {
        await withTaskGroup(of: (UpstreamCall, UpstreamCache.Lookup).self) { group in
            for call in calls {
                group.addTask { (call, await resolve(call, requestHeaders: requestHeaders, screen: screen, correlation: correlation)) }
            }
            var lookups: [(UpstreamCall, UpstreamCache.Lookup)] = []
            for await lookup in group { lookups.append(lookup) }
            return lookups
        }
    }

    /// Every call's value when all are fresh in the cache, with the cache keys and generations
    /// they are kept under; nil as soon as one is not (it must be fetched or revalidated).
    /// Synchronous, for the event loop: a request answered from it never leaves the loop.
    /// - Parameter counting: whether the hits count in `taksi_upstream_cache_total` (not when
    ///   asked again for values just looked up, which were counted then).
    func freshValues(
        of calls: [UpstreamCall], requestHeaders: HTTPHeaders, counting: Bool = true
    ) -> [(call: UpstreamCall, key: String, fresh: UpstreamCache.Fresh)]? {
        var found: [(call: UpstreamCall, key: String, fresh: UpstreamCache.Fresh)] = []
        found.reserveCapacity(calls.count)
        for call in calls {
            guard let key = cacheKey(of: call, requestHeaders: requestHeaders),
                let fresh = cache.freshValue(for: key, ttl: call.definition.ttl)
            else { return nil }
            found.append((call, key, fresh))
        }
        if counting { cacheHits.increment(by: found.count) }
        return found
    }

    /// The cache key of a call: its URL and the values it forwards, so one caller's response never
    /// reaches another. Nil when its upstream is not configured.
    private func cacheKey(of call: UpstreamCall, requestHeaders: HTTPHeaders) -> String? {
        guard let url = client.url(of: call) else { return nil }
        let forwarded = call.definition.forwardedValues(from: requestHeaders)
        if forwarded.isEmpty { return url }
        return ([url] + forwarded.map { "\($0.0.lowercased()): \($0.1)" }).joined(separator: "\n")
    }

    /// One source's value through the cache, with its call logged and counted.
    private func resolve(
        _ call: UpstreamCall, requestHeaders: HTTPHeaders, screen: CompiledScreen, correlation: Correlation
    ) async -> UpstreamCache.Lookup {
        guard let key = cacheKey(of: call, requestHeaders: requestHeaders) else {
            return .failed(.notConfigured(call.definition.upstream))
        }
        let forwarded = call.definition.forwardedValues(from: requestHeaders)
        let policy = UpstreamCache.Policy(
            ttl: call.definition.ttl, staleWhileRevalidate: call.definition.staleWhileRevalidate,
            staleIfError: call.definition.staleIfError
        )
        let dimensions = [("upstream", call.definition.upstream), ("source", call.source)]
        let client = self.client
        let metrics = self.metrics
        // When the request is traced, when it began waiting: a request that joins another's call
        // gets a span for its wait, from then.
        let started = correlation.isRecording ? DefaultTracerClock.now : nil
        let joined = await cache.lookUp(key, policy: policy) { made in
            let start = NIODeadline.now()
            let span = correlation.callSpan("GET \(call.definition.upstream)")
            if let span, span.isRecording {
                made.context = span.context
                span.attributes["taksi.cache"] = made.isRefresh ? "refresh" : "miss"
            }
            span?.describe(call)
            let result = await client.fetch(call, headers: forwarded + correlation.headers(for: span), span: span)
            let outcome = Outcome(result.map(\.answered))
            if let span, made.joiners > 0, span.isRecording { span.attributes["taksi.upstream.joiners"] = made.joiners }
            span?.end(with: outcome)
            Counter(label: "taksi_upstream_requests_total", dimensions: dimensions + [("result", outcome.label)], factory: metrics)
                .increment()
            Timer(label: "taksi_upstream_duration_seconds", dimensions: dimensions, factory: metrics)
                .recordNanoseconds((NIODeadline.now() - start).nanoseconds)
            return result
        }
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
            "screen": .string(screen.name), "source": .string(call.source), "upstream": .string(call.definition.upstream),
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
        return lookup
    }
}

/// How an upstream call ended: a 2xx, a status its source answers, or a failure.
private struct Outcome {
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

extension HTTPSource {
    /// The values this source (or an action's call) forwards from the request's headers: those
    /// its allow-list names, each under the name as written.
    /// (The request's id and trace context are never among them, ``HTTPSource/alwaysSentHeaders``:
    /// every call carries those, outside the cache key.)
    func forwardedValues(from requestHeaders: HTTPHeaders) -> [(String, String)] {
        forwardedHeaders.flatMap { name in requestHeaders[canonicalForm: name].map { (name, String($0)) } }
    }
}
