public import CoreMetrics
import Foundation
public import Logging
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// Looks up the upstream values of a data request: every call at once, through the cache, each
/// logged and counted. A call that fails is one lookup's outcome (``DataEndpoint`` degrades only
/// the components bound to it).
public struct DataResolver: Sendable {
    let client: UpstreamClient
    let cache: UpstreamCache
    let logger: Logger
    let metrics: any MetricsFactory
    /// Fresh cache hits found on the event loop, counted without creating a counter each time
    /// (and by the data endpoint, for data kept for its target with its upstream entries fresh).
    let cacheHits: Counter

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
        _ calls: [UpstreamCall], requestHeaders: HTTPHeaders, screen: ScreenVariant, correlation: Correlation
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

    /// One source's value through the cache: made by this request's call, or one it joined, or
    /// found there. What is watched of it (spans, counters, log lines) is its
    /// ``UpstreamCallObservation``'s.
    private func resolve(
        _ call: UpstreamCall, requestHeaders: HTTPHeaders, screen: ScreenVariant, correlation: Correlation
    ) async -> UpstreamCache.Lookup {
        guard let key = cacheKey(of: call, requestHeaders: requestHeaders) else {
            return .failed(.notConfigured(call.definition.upstream))
        }
        let forwarded = call.definition.forwardedValues(from: requestHeaders)
        let policy = UpstreamCache.Policy(
            ttl: call.definition.ttl, staleWhileRevalidate: call.definition.staleWhileRevalidate,
            staleIfError: call.definition.staleIfError
        )
        let client = self.client
        let observation = UpstreamCallObservation(
            call: call, screen: screen.name, correlation: correlation, metrics: metrics, logger: logger)
        let joined = await cache.lookUp(key, policy: policy) { made in
            await observation.call(made) { span in
                await client.fetch(call, headers: forwarded + correlation.headers(for: span), span: span).map { fetched in
                    guard call.definition.pages != nil else { return fetched }
                    var stamped = fetched
                    stamped.fetchedAt = Int(Date().timeIntervalSince1970)
                    return stamped
                }
            }
        }
        observation.looked(up: joined)
        return joined.lookup
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
