import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// `GET /screens/<path>/data`: the data patch for the skeleton the app holds. One path for every
/// kind of source: the request's values are read, the upstream values looked up, the patch
/// rendered with its headers (``render(_:for:lookups:)``) and kept for the same inputs (``ResponseMemo``).
///
/// Answered on the event loop when it can be: kept from an earlier request with the same inputs,
/// or rendered from request values and fresh cached upstream values. Only a source that must be
/// fetched or revalidated sends the request off the loop. Parameter errors are answered at once.
struct DataEndpoint: Sendable {
    let selector: VariantSelector
    let logger: Logger
    /// Resolves upstream values; nil when the server calls no upstreams.
    let resolver: DataResolver?
    let counters: EndpointCounters
    /// Data responses kept for their inputs; nil renders every one.
    let memo: ResponseMemo?
    /// Signs and reads the tokens of the lists that continue (``PagedList``).
    let pageTokens: PageTokens
    /// `taksi_list_pages_total`: requests for a list's next page, by outcome.
    let pageCounters: ListPageCounters

    /// What one data request asks for, read on the event loop before anything is awaited.
    struct Request: Sendable {
        /// The variant answering, held by reference: a copy of its compiled screen would retain
        /// each of its parts, on every request rendered.
        var variant: ServedScreenSet.Variant
        /// The part of the variant's plan `?only=` asks for; nil renders the whole plan.
        var restricted: DataPlan?
        /// The served set the variant is of, and the epoch of the app version's catalog in it
        /// (``ScreenSet/epoch(for:)``).
        var screens: ServedScreenSet
        var epoch: Int
        /// The request's values, in the plan's slots (the fixtures' are the plan's own).
        var values: RequestValues
        var calls: [UpstreamCall]
        /// What the tokens of the lists that continue are made from; nil when the plan has none.
        var paging: Paging? = nil

        var screen: ScreenVariant { variant.compiled }
        /// Whether the data depends on the moment (a relative time): never kept, and short-lived in caches.
        var dependsOnTime: Bool { variant.dataDependsOnTime }

        /// `body`'s answer for the plan rendered (``DataEndpoint/withPlan(of:restricted:_:)``) and
        /// the app version's catalog, both handed over where they lie.
        func withPlan<T>(_ body: (DataPlan, ComponentCatalog) -> T) -> T {
            screens.screenSet.withCatalog(epoch: epoch) { catalog in
                DataEndpoint.withPlan(of: variant, restricted: restricted) { plan in body(plan, catalog) }
            }
        }
    }

    /// `body`'s answer for the plan a data request renders: the part `?only=` asked for
    /// (`restricted`), or the variant's whole plan, handed over where it lies. A copy of it would
    /// retain each of its parts, which every event loop shares, on every request.
    static func withPlan<T, E: Error>(
        of variant: ServedScreenSet.Variant, restricted: DataPlan?, _ body: (DataPlan) throws(E) -> T
    ) throws(E) -> T {
        if let restricted { return try body(restricted) }
        return try body(variant.compiled.dataPlan)
    }

    /// What a data response's page tokens are made from (``PageToken``).
    struct Paging: Sendable {
        /// The screen's path as routed, which a token is for.
        var screen: String
        /// The data request's path as sent (`/screens/repositories/data`) and its query without
        /// `only` and `page`: the start of each list's request for more.
        var dataPath: String
        var query: String
        /// The page of the lists this response holds: 1 for the first.
        var page: Int
    }

    /// A data response rendered: its body, its headers, and whether a source was degraded (then
    /// it is `no-store` and never kept).
    struct Rendered {
        var body: [UInt8]
        /// The variant's data headers, or those made for this response from its upstream answers.
        var heads: ResponseHeads
        var degraded: Bool
        var variant: String

        var response: HTTPResponse {
            var response = HTTPResponse(json: ByteBuffer(bytes: body), headers: heads.headers)
            response.metricsLabel = .data
            response.variant = variant
            return response
        }
    }

    func respond(at path: String, target: RequestTarget, request http: HTTPRequest) throws(APIError) -> Reply {
        let head = http.head
        var selection = try selector.answering(at: path, target: target, exposing: http)
        var token: PageToken?
        if selection.variant.hasPagedLists, let text = target.value(of: PagedList.tokenParameter) {
            (selection, token) = try page(text, at: path, target: target, head: head, selected: selection)
        }
        let variant = selection.variant
        variant.counted.data.increment()
        // Fixtures' data, precomputed with the set, unless `?only=` asks for a part of it.
        let onlyText = token?.list ?? target.value(of: "only")
        if onlyText == nil, let staticData = variant.staticData { return .ready(staticData.response(to: head)) }
        // The catalog of the requesting app's version: an upstream's value it cannot decode (an enum
        // value newer than it) is left out like any other value that does not fit. (With one
        // catalog for every version, the version is not even read.)
        let screens = selection.screens
        let byVersion = screens.screenSet.epochs.count > 1
        let epoch = byVersion ? screens.screenSet.epoch(for: VariantSelector.appVersion(target: target, head: head)) : 0
        // Where one catalog serves every version, the target and the variant are all a response
        // depends on besides the upstream entries and forwarded values the memo checks: one kept
        // for this very target is answered without reading the rest of its query.
        // (Never for a page: its token is checked first, each time.)
        let remembering = !byVersion && memo?.isEnabled == true && token == nil
        if remembering, let kept = memo?.answer(for: head, of: variant.memoID) {
            memo?.countHit()
            if kept.freshUpstreamEntries > 0 { resolver?.cacheHits.increment(by: kept.freshUpstreamEntries) }
            http.note("taksi.memo", "hit")
            return .ready(kept.entry.response(to: head))
        }
        let only = try onlyText.map { text throws(APIError) in
            try screens.screenSet.withCatalog(epoch: epoch) { catalog throws(APIError) in
                try Self.only(text, in: variant.compiled, catalog: catalog)
            }
        }
        let restricted = only.map { variant.compiled.dataPlan.restricted(to: $0) }
        let requestValues: RequestValues
        var calls: [UpstreamCall]
        let hasPagedLists: Bool
        // Each parameter the plan reads is read from the query as sent into its slot: no table of
        // them all, nor of the sources.
        let query = { (name: String) in target.value(of: name) }
        do {
            (requestValues, calls, hasPagedLists) = try Self.withPlan(of: variant, restricted: restricted) {
                plan throws(DataRequestError) in
                (
                    try plan.readRequest(parameter: query, path: selection.pathValues),
                    try plan.upstreamCalls(parameter: query, path: selection.pathValues), !plan.pagedLists.isEmpty
                )
            }
        } catch {
            throw .badParameters(error)
        }
        // The page's request is the token's, made by this server from the upstream's last answer.
        if let token, let index = calls.firstIndex(where: { $0.source == token.source }) {
            calls[index].target = token.target
        }
        let paging =
            !hasPagedLists
            ? nil
            : Paging(
                screen: path, dataPath: String(target.path),
                query: target.rawQuery(removing: ["only", PagedList.tokenParameter]), page: token?.page ?? 1)
        // A response with page tokens is kept per screen path and page too: its tokens name them
        // (two paths of one pattern may read the same values). After the slots, so it is in the
        // same place in every key of the plan.
        var keyValues = requestValues.values
        if let paging { keyValues.append([.string(paging.screen), .number(Double(paging.page))]) }
        let key = ResponseMemo.Key(variant: variant.memoID, requestValues: keyValues, only: only, epoch: epoch)
        // Built only when something is rendered: a kept response needs none of it.
        func request() -> Request {
            Request(
                variant: variant, restricted: restricted, screens: screens, epoch: epoch, values: requestValues, calls: calls,
                paging: paging)
        }
        return try answer(key, calls: calls, for: http, keep: !variant.dataDependsOnTime, remembering: remembering, request: request)
    }

    /// The response for these inputs, kept or rendered: on the event loop when no upstream is
    /// called or every value called is fresh in the cache, else off it once the calls answer.
    /// - Parameter request: what is rendered, made only when something is.
    private func answer(
        _ key: ResponseMemo.Key, calls: [UpstreamCall], for http: HTTPRequest, keep: Bool, remembering: Bool, request: () -> Request
    ) throws(APIError) -> Reply {
        guard !calls.isEmpty else {
            return .ready(memoized(key, for: http, keep: keep, remembering: remembering) { render(request(), for: http, lookups: []) })
        }
        let head = http.head
        // The calls forward headers and carry the request's trace context: its fields made text once.
        var http = http
        http.head = head.keepingHeaders()
        let headers = http.headers
        for call in calls { try Self.checkForwarded(call.definition.forwardedHeaders, in: headers) }
        guard let resolver else { throw .upstreamsUnavailable }
        if let fresh = resolver.freshValues(of: calls, requestHeaders: headers) {
            for found in fresh { http.note("taksi.cache.\(found.call.source)", "hit") }
            return .ready(memoized(key, fresh: fresh, for: http, keep: keep, remembering: remembering, request: request))
        }
        let request = request()
        let calling = http
        return .pending {
            let lookups = await resolver.lookUp(
                request.calls, requestHeaders: headers, screen: request.screen, correlation: calling.correlation)
            // Every value fetched and kept fresh: rendered from the cache entries, by generation,
            // so the answer is kept for the next request with the same inputs, as on the loop.
            if let fresh = resolver.freshValues(of: calls, requestHeaders: headers, counting: false) {
                return memoized(key, fresh: fresh, for: calling, keep: keep) { request }
            }
            return Self.validated(render(request, for: calling, lookups: lookups), request: calling.head)
        }
    }

    /// The response rendered from fresh upstream values, kept under their cache entries' generations.
    private func memoized(
        _ key: ResponseMemo.Key, fresh: [(call: UpstreamCall, key: String, fresh: UpstreamCache.Fresh)], for http: HTTPRequest, keep: Bool,
        remembering: Bool = false, request: () -> Request
    ) -> HTTPResponse {
        memoized(
            key.with(upstream: fresh.map { ResponseMemo.Key.UpstreamUse(key: $0.key, generation: $0.fresh.generation) }),
            for: http, keep: keep, remembering: remembering,
            inputs: {
                ResponseMemo.TargetInputs(
                    upstream: fresh.map {
                        ResponseMemo.UpstreamCheck(
                            key: $0.key, ttl: $0.call.definition.ttl, generation: $0.fresh.generation, expires: $0.fresh.expires)
                    },
                    forwarded: ResponseMemo.ForwardedValues(names: fresh.flatMap(\.call.definition.forwardedHeaders), headers: http.headers)
                )
            }
        ) {
            // Made only when something is rendered: a kept response needs none of it.
            render(request(), for: http, lookups: fresh.map { ($0.call, .hit($0.fresh.found)) })
        }
    }

    /// Maps the values and the upstream lookups into entries, with the response's headers: a
    /// source that failed falls back or leaves its components out, and is named in
    /// `X-Taksi-Degraded`; one that answered a status it declares gives way to that answer's
    /// patch. Synchronous, so it runs on the event loop when no value is awaited.
    /// - Parameter http: the request, whose id and span the log lines name.
    func render(_ request: Request, for http: HTTPRequest, lookups: [(UpstreamCall, UpstreamCache.Lookup)]) -> Rendered {
        var upstream: [String: JSONValue] = [:]
        var degraded: [String] = []
        var unavailable: Set<String> = []
        var answered: [String: Int] = [:]
        for (call, lookup) in lookups {
            if let found = lookup.found {
                upstream[call.source] = found.value
                if let status = found.answered { answered[call.source] = status }
                continue
            }
            degraded.append(call.source)
            if let fallback = call.definition.fallback {
                upstream[call.source] = fallback
            } else {
                unavailable.insert(call.source)
            }
        }
        var (body, problems, pagedLists) = request.withPlan { whole, catalog in
            func render(_ plan: DataPlan) -> ([UInt8], [DataPlan.Problem], [PagedList]) {
                let (body, problems) = plan.render(request: request.values, upstream: upstream, catalog: catalog, unavailable: unavailable)
                return (body, problems, request.paging == nil ? [] : plan.pagedLists)
            }
            // Not `answered.isEmpty ? whole : ...`: that would copy the plan (and retain its parts).
            return answered.isEmpty ? render(whole) : render(whole.answering(answered))
        }
        if !problems.isEmpty { logger.dataProblems(problems, in: request.screen, correlation: http.correlation) }
        // An upstream that answered, but not in the shape the screen binds, degrades too: what it
        // should have filled was left out.
        let called = problems.contains(where: \.isLoss) ? Set(request.calls.map(\.source)) : []
        for problem in problems where problem.isLoss {
            for source in problem.sources ?? []
            where called.contains(source) && !degraded.contains(source) {
                degraded.append(source)
            }
        }
        if !degraded.isEmpty {
            degraded.sort()
            counters.degraded(degraded, of: request.variant.compiled.name)
        }
        let variant = request.variant
        if let paging = request.paging {
            appendPages(
                to: &body, lists: pagedLists, paging: paging, lookups: lookups, degraded: degraded, revision: variant.revision.digest)
        }
        guard !request.calls.isEmpty else {
            return Rendered(body: body, heads: variant.dataHeads, degraded: false, variant: variant.id)
        }
        var headers = variant.headers
        // Forwarded headers change the answer, so caches must key on them too.
        let forwarded = Set(request.calls.flatMap(\.definition.forwardedHeaders)).sorted()
        if !forwarded.isEmpty { HTTPResponse.addVary(forwarded.joined(separator: ", "), to: &headers) }
        if degraded.isEmpty {
            // An answered status is kept for its answer's ttl, which is usually shorter; "3 minutes
            // ago" is true for a minute at most.
            let ttl =
                (lookups.map { $0.1.found?.ttl ?? $0.0.definition.ttl } + (request.dependsOnTime ? [.seconds(60)] : [])).min() ?? .zero
            headers.append(("Cache-Control", "private, max-age=\(ttl.components.seconds)"))
        } else {
            headers.append(("Cache-Control", "private, no-store"))
            headers.append(("X-Taksi-Degraded", degraded.joined(separator: ", ")))
        }
        return Rendered(body: body, heads: ResponseHeads(headers), degraded: !degraded.isEmpty, variant: variant.id)
    }

    /// Adds `"pages"` to a data body: for each list that continues after this page, a token for
    /// the next page, the data request that fetches it (`?only=<list>&page=<token>`) and the
    /// field of the list's content that holds its items (`values`). A list
    /// whose source failed, answered a status of its own, or whose upstream says this page is the
    /// last (or that reached ``PageTokens/maxPages``) gets none. The client decodes only
    /// `interface_data`; the app library reads `pages`.
    private func appendPages(
        to body: inout [UInt8], lists: [PagedList], paging: Paging, lookups: [(UpstreamCall, UpstreamCache.Lookup)], degraded: [String],
        revision: String
    ) {
        guard paging.page < pageTokens.maxPages else { return }
        let now = Int(Date().timeIntervalSince1970)
        var pages: [String: JSONValue] = [:]
        for list in lists where !degraded.contains(list.source) {
            guard let (call, lookup) = lookups.first(where: { $0.0.source == list.source }), let found = lookup.found,
                found.answered == nil,
                let next = call.definition.pages?.nextTarget(after: call.target, answer: found.value, link: found.nextLink)
            else { continue }
            // Good for as long as data made from this answer may be served (fresh, then stale while
            // it is refreshed or its upstream fails), and the lifetime after that; counted from the
            // answer, so every response made from it holds the same token.
            let source = call.definition
            let kept = (found.ttl ?? source.ttl) + source.staleWhileRevalidate + source.staleIfError + pageTokens.lifetime
            let token = pageTokens.make(
                PageToken(
                    screen: paging.screen, list: list.identifier, source: list.source, target: next, revision: revision,
                    page: paging.page + 1, expires: (found.fetchedAt ?? now) + Int(kept.components.seconds)))
            let query = (paging.query.isEmpty ? "" : paging.query + "&") + "only=\(PercentEncoding.encode(list.identifier))&page=\(token)"
            pages[list.identifier] = [
                "token": .string(token), "next": .string(paging.dataPath + "?" + query), "field": .string(list.field),
            ]
        }
        guard !pages.isEmpty, body.last == UInt8(ascii: "}") else { return }
        body.removeLast()
        body.append(contentsOf: #","pages":"#.utf8)
        JSONWriter.write(.object(pages), into: &body)
        body.append(UInt8(ascii: "}"))
    }

    /// A request for a list's next page: its token (``pageToken(_:at:only:)``), and the selection
    /// of the skeleton revision the token names (the list was shown in it), which answers; a token
    /// for a list that revision does not continue is foreign.
    private func page(
        _ text: String, at path: String, target: RequestTarget, head: RequestHead, selected: VariantSelector.Selection
    ) throws(APIError) -> (VariantSelector.Selection, PageToken) {
        let token = try pageToken(text, at: path, only: target.value(of: "only"))
        let selection =
            token.revision == selected.variant.revision.digest
            ? selected : try selector.answering(at: path, target: target, head: head, revision: token.revision)
        guard selection.variant.compiled.dataPlan.pagedLists.contains(where: { $0.identifier == token.list && $0.source == token.source })
        else {
            pageCounters.foreign.increment()
            throw APIError(
                .foreignPageToken,
                message:
                    "this page token is for list \"\(token.list)\", which \(selection.variant.compiled.variantID) does not continue; use the token its own data gave"
            )
        }
        pageCounters.served.increment()
        return (selection, token)
    }

    /// The token of a request for a list's next page, signed by this server, not expired and made
    /// for this screen path (and for the list `?only=` names, when it names one); else 400, and
    /// nothing is called.
    private func pageToken(_ text: String, at path: String, only: String?) throws(APIError) -> PageToken {
        switch pageTokens.read(text, now: Int(Date().timeIntervalSince1970)) {
        case .success(let token):
            guard token.screen == path else {
                pageCounters.foreign.increment()
                throw APIError(
                    .foreignPageToken,
                    message: "this page token is for screen \(token.screen), not \(path); use the token this screen's data gave")
            }
            if let only, only != token.list {
                pageCounters.foreign.increment()
                throw APIError(
                    .foreignPageToken,
                    message:
                        "this page token is for list \"\(token.list)\", and ?only= names another; send ?only=\(token.list) or leave only out"
                )
            }
            return token
        case .failure(.expired):
            pageCounters.expired.increment()
            throw APIError(
                .pageTokenExpired,
                message: "this page token has expired; load the screen's data again, which gives the list's first page and a new token")
        case .failure(.unknownKey(let id)):
            pageCounters.invalid.increment()
            throw APIError(
                .invalidPageToken,
                message:
                    "this page token was signed with key \"\(id)\", which this server does not have (another deployment's, or a retired key); load the screen's data again for a new one"
            )
        case .failure(.invalid(let why)):
            pageCounters.invalid.increment()
            throw APIError(
                .invalidPageToken,
                message:
                    "query parameter \"page\" is not a page token this server made: \(why); send the token a data response's \"pages\" gave, as it is"
            )
        }
    }

    /// The response kept for these inputs (``ResponseMemo``), or the one `render` makes, kept unless
    /// it is degraded; with no memo, `render`'s as it is.
    /// - Parameters:
    ///   - keep: false for data that depends on the moment, which is rendered every time.
    ///   - remembering: whether a kept response's target is remembered, for the next request
    ///     for it to be answered without reading its query (``ResponseMemo/remember(target:of:for:inputs:)``):
    ///     only where one catalog serves every app version.
    ///   - inputs: what else than its target the response is remembered with (upstream entries
    ///     and forwarded values; none for data of request values), made only when it is.
    private func memoized(
        _ key: ResponseMemo.Key, for http: HTTPRequest, keep: Bool, remembering: Bool = false,
        inputs: () -> ResponseMemo.TargetInputs = { ResponseMemo.TargetInputs() }, render: () -> Rendered
    ) -> HTTPResponse {
        let head = http.head
        guard keep, let memo, memo.isEnabled else { return Self.validated(render(), request: head) }
        if let kept = memo.entry(for: key) {
            http.note("taksi.memo", "hit")
            if remembering { memo.remember(target: head, of: kept, for: key, inputs: inputs) }
            return kept.response(to: head)
        }
        http.note("taksi.memo", "miss")
        let rendered = render()
        guard !rendered.degraded else { return rendered.response }
        return memo.keep(
            rendered.body, for: key, heads: rendered.heads, variant: rendered.variant,
            request: head
        )
    }

    /// A data response not kept, with the validators a kept one has (`ETag`, `304` to
    /// `If-None-Match`, the same `Vary`), so the first answer for some inputs has the headers of
    /// the second; a degraded one as it is (`no-store`, nothing to revalidate).
    private static func validated(_ rendered: Rendered, request: RequestHead) -> HTTPResponse {
        guard !rendered.degraded else { return rendered.response }
        return ResponseMemo.response(notKept: rendered.body, heads: rendered.heads, variant: rendered.variant, to: request)
    }

    /// The identifiers of `?only=a,b`: each must be a dynamic component of the variant (one the
    /// client asks data for), else 400.
    private static func only(_ text: String, in screen: ScreenVariant, catalog: ComponentCatalog) throws(APIError) -> Set<String> {
        let dynamic = catalog.dynamicIdentifiers(of: screen.skeleton.components)
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        for name in names where !dynamic.contains(name) {
            throw APIError(
                .invalidParameter,
                message: name.isEmpty
                    ? "query parameter \"only\" lists component identifiers separated by commas, like ?only=stations; it has an empty one"
                    : "query parameter \"only\" names \"\(name)\", which is not a dynamic component of \(screen.variantID); use some of \(dynamic.joined(separator: ", "))"
                        + NameSuggestion.hint(for: name, among: dynamic)
            )
        }
        return Set(names)
    }

    /// Refuses a request whose headers to forward to an upstream hold bytes that are not UTF-8.
    /// They arrive as text with U+FFFD where those bytes were, so forwarding them would send the
    /// upstream other bytes than the client's (a credential or a locale silently changed).
    static func checkForwarded(_ names: [String], in headers: HTTPHeaders) throws(APIError) {
        guard !names.isEmpty else { return }
        // One pass over the headers, with a byte test first (U+FFFD is EF BF BD): no allocation
        // on the data path unless a value holds one.
        for (name, value) in headers where value.utf8.contains(0xEF) && value.unicodeScalars.contains("\u{FFFD}") {
            guard names.contains(where: { $0.lowercased() == name.lowercased() }) else { continue }
            throw APIError(
                .invalidHeader,
                message:
                    "header \(name) holds bytes that are not UTF-8; it is forwarded to an upstream, which would get other bytes than these: send it as ASCII or UTF-8"
            )
        }
    }
}

extension Logger {
    /// Logs why values were left out of a data response: a loss as a warning, an explained
    /// missing optional value at debug, each naming screen, component, field and source.
    func dataProblems(_ problems: [DataPlan.Problem], in screen: ScreenVariant, correlation: Correlation) {
        for problem in problems {
            log(
                level: problem.isLoss ? .warning : .debug, "data value left out",
                metadata: correlation.logMetadata.merging([
                    "screen": .string(screen.name), "variant": .string(screen.variantID),
                    "component": .string(problem.identifier), "field": .string(problem.field ?? "-"),
                    "source": .string(problem.sources?.joined(separator: ",") ?? "-"), "problem": .string(problem.message),
                ]) { $1 }
            )
        }
    }
}

/// `taksi_list_pages_total`: requests for a list's next page, by `result`: `served`, or refused
/// (`invalid`: not signed by this server or altered; `expired`; `foreign`: made for another screen
/// or list).
final class ListPageCounters: Sendable {
    let served: Counter
    let invalid: Counter
    let expired: Counter
    let foreign: Counter

    init(factory: any MetricsFactory) {
        func counter(_ result: String) -> Counter {
            Counter(label: "taksi_list_pages_total", dimensions: [("result", result)], factory: factory)
        }
        served = counter("served")
        invalid = counter("invalid")
        expired = counter("expired")
        foreign = counter("foreign")
    }
}
