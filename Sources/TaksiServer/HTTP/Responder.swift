public import Logging
public import NIOCore
public import NIOHTTP1
import Foundation
public import Prometheus
import TaksiSchema
import TaksiScreens

/// A request as the responder sees it: the head, and the id echoed as `X-Request-Id`.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    public var uri: String
    public var headers: HTTPHeaders
    /// The body of a POST, whole (bounded by `max_body_bytes`); nil when none was sent.
    public var body: ByteBuffer?

    public init(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }
}

/// The responder's answer: ready now (everything served from memory), or after upstream calls.
public enum Reply: Sendable {
    case ready(HTTPResponse)
    case pending(@Sendable () async -> HTTPResponse)

    /// The response, waiting for it if it is pending.
    public var response: HTTPResponse {
        get async {
            switch self {
            case .ready(let response): response
            case .pending(let work): await work()
            }
        }
    }
}

/// Answers requests from the current screen set. Synchronous and allocation-light: everything it
/// can, it takes precomputed from the snapshot, so it runs on the event loop.
public struct Responder: Sendable {
    let store: ScreenStore
    let logger: Logger
    /// Resolves data of screens with `http` sources; nil when the server calls no upstreams.
    let resolver: DataResolver?
    /// What `/metrics` exposes; nil answers it with 404.
    let metrics: PrometheusCollectorRegistry?
    /// Data responses kept for their inputs; nil renders every one.
    let memo: DataMemo?
    /// The live preview's pages and event stream; nil when it is off (its routes answer 404).
    let preview: Preview?
    /// Answers of action submits kept by `Idempotency-Key`; nil runs every submit.
    let idempotency: IdempotencyStore?
    /// How data requests and submits named their skeleton's revision.
    let revisionCounters: RevisionCounters

    /// - Parameter previewEvents: turns the preview (`/preview`) on, its event stream fed by these.
    public init(
        store: ScreenStore, logger: Logger, resolver: DataResolver? = nil, metrics: PrometheusCollectorRegistry? = nil,
        memo: DataMemo? = nil, previewEvents: PreviewEvents? = nil, idempotency: IdempotencyStore? = nil
    ) {
        self.idempotency = idempotency
        self.revisionCounters = RevisionCounters(factory: store.metrics)
        self.store = store
        self.logger = logger
        self.resolver = resolver
        self.metrics = metrics
        self.memo = memo
        self.preview = previewEvents.map(Preview.init(events:))
    }

    /// The reply to a request; ready at once unless the data needs upstream calls.
    public func respond(to request: HTTPRequest) -> Reply {
        do {
            return try route(request)
        } catch {
            return .ready(HTTPResponse(error: error))
        }
    }

    /// The error a request gets whatever its body, known from its head: asked before a client
    /// that sent `Expect: 100-continue` is told to send the body, so a submit to an action that
    /// does not exist gets its 404 instead of `100 Continue` and then the 404. Nil when the body
    /// may matter (or is read and dropped, as elsewhere than actions).
    public func refusal(beforeBodyOf method: HTTPMethod, uri: String, headers: HTTPHeaders) -> APIError? {
        do throws(APIError) {
            if method == .OPTIONS, uri == "*" { return nil }
            let (target, route) = try self.route(of: method, uri: uri)
            guard case .action(let path, let name) = route, method == .POST else { return nil }
            _ = try lookUpAction(name, at: path, headers: headers, target: target)
            return nil
        } catch {
            return error
        }
    }

    /// The route of a request's target, or the error it gets whatever else it holds: `CONNECT`
    /// (its target is a host, never a path here), an unknown path (the preview's, when it is off,
    /// for every method), a method the route does not take.
    private func route(of method: HTTPMethod, uri: String) throws(APIError) -> (RequestTarget, Route) {
        if method == .CONNECT { throw .methodNotAllowed(method) }
        let target = try RequestTarget(uri)
        let route = Route(path: target.path)
        if route == .notFound || (preview == nil && route.isPreview) { throw .notFound(path: String(target.path)) }
        try Self.checkMethod(method, for: route)
        return (target, route)
    }

    /// The methods each route takes: `POST` (and `OPTIONS`) on actions, `GET`, `HEAD` and `OPTIONS`
    /// elsewhere; 501 for a method HTTP does not define, 405 with `Allow` for the others.
    private static func checkMethod(_ method: HTTPMethod, for route: Route) throws(APIError) {
        let isAction = if case .action = route { true } else { false }
        switch (isAction, method) {
        case (true, .POST), (true, .OPTIONS), (false, .GET), (false, .HEAD), (false, .OPTIONS): return
        default: break
        }
        if case .RAW = method { throw .methodNotImplemented(method) }
        throw isAction ? .methodNotAllowed(method, allowed: APIError.actionMethods) : .methodNotAllowed(method)
    }

    /// The response to a method, target (`/screens/home?x=1`) and headers (tests, embedding).
    public func response(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:]) async -> HTTPResponse {
        await respond(to: HTTPRequest(method: method, uri: uri, headers: headers)).response
    }

    private func route(_ request: HTTPRequest) throws(APIError) -> Reply {
        // OPTIONS * asks about the server.
        if request.method == .OPTIONS, request.uri == "*" { return .ready(Self.options) }
        let (target, route) = try route(of: request.method, uri: request.uri)
        if case .action(let path, let name) = route {
            if request.method == .OPTIONS { return .ready(Self.actionOptions) }
            return try action(name, at: path, request: request, target: target)
        }
        if request.method == .OPTIONS { return .ready(Self.options) }
        let screens = store.snapshot
        switch route {
        case .health:
            return .ready(Self.health)
        case .ready:
            let draining = store.isDraining
            var response = HTTPResponse(
                status: draining ? .serviceUnavailable : .ok,
                json: ByteBuffer(bytes: JSONWriter.bytes(readiness(store.status, draining: draining))),
                headers: [("Cache-Control", "no-store")]
            )
            response.route = "ready"
            return .ready(response)
        case .metrics:
            guard let metrics else { throw .notFound(path: String(target.path)) }
            let body = ByteBuffer(bytes: metrics.emitToBuffer())
            var response = HTTPResponse(body: body, type: "text/plain; version=0.0.4; charset=utf-8", headers: [("Cache-Control", "no-store")])
            response.route = "metrics"
            return .ready(response)
        case .openAPI:
            return .ready(screens.openAPI)
        case .resolveLink:
            return .ready(try resolveLink(target.query["url"], in: screens.screenSet.links))
        case .appleAppSiteAssociation:
            guard let response = screens.appleAssociation else { throw .notFound(path: String(target.path)) }
            return .ready(response)
        case .assetLinks:
            guard let response = screens.androidAssociation else { throw .notFound(path: String(target.path)) }
            return .ready(response)
        case .preview(let route):
            guard let preview else { throw .notFound(path: String(target.path)) }
            return try preview.respond(to: route, target: target, responder: self, store: store)
        case .index:
            return .ready(screens.index)
        case .skeleton(let path):
            // The skeleton is the same for every value of a path parameter, but a value that does
            // not fit is refused here already, not only when the app asks for the data.
            let (screen, _) = try screens.screen(at: path)
            let variant = try select(in: screen, target: target, headers: request.headers)
            variant.counted.skeleton.increment()
            return .ready(variant.skeleton.response(to: request.headers))
        case .data(let path):
            let (screens, variant, pathValues) = try answering(at: path, target: target, headers: request.headers)
            variant.counted.data.increment()
            let only = try target.query["only"].map { text throws(APIError) in
                try Self.only(text, in: variant.compiled, catalog: screens.screenSet.catalog)
            }
            if only == nil, let staticData = variant.staticData { return .ready(staticData.response(to: request.headers)) }
            return try data(
                for: variant, query: target.query, path: pathValues, headers: request.headers, catalog: screens.screenSet.catalog,
                only: only
            )
        case .notFound, .action:
            throw .notFound(path: String(target.path))
        }
    }

    /// The variant for the request, in the locale `Accept-Language` asks for when the screen has
    /// localized text: the same function for skeleton, data and actions, so they always agree.
    func select(
        in screen: ServedScreenSet.Screen, target: RequestTarget, headers: HTTPHeaders
    ) throws(APIError) -> ServedScreenSet.Variant {
        let variant = try selectVariant(in: screen, target: target, headers: headers)
        guard let locales = screen.locales, !variant.translations.isEmpty else { return variant }
        return variant.translations[locales.locale(for: headers.first(name: "Accept-Language"))] ?? variant
    }

    private func selectVariant(
        in screen: ServedScreenSet.Screen, target: RequestTarget, headers: HTTPHeaders
    ) throws(APIError) -> ServedScreenSet.Variant {
        let versionText = headers.first(name: "X-Taksi-Version") ?? target.query["version"]
        let alternative = headers.first(name: "X-Taksi-Alternative")
        // One variant, and nothing in the request that could be refused: no selection to make.
        if versionText == nil, alternative == nil, let only = screen.onlyVariant { return only }
        var request = ScreenVariants.Request()
        // An error here depends on a header even where the screen's answers do not (a screen
        // without alternatives refuses any asked for): its Vary names that header too, so a
        // shared cache never serves it for the plain URL (and errors are `no-store` anyway).
        func vary(_ header: String) -> [(String, String)] {
            let names = (screen.vary.map { $0.components(separatedBy: ", ") } ?? [])
            return [("Vary", (names.contains(header) ? names : names + [header]).joined(separator: ", "))]
        }
        if let text = versionText {
            guard let version = Version(text.trimmingCharacters(in: .whitespaces)) else {
                throw APIError(
                    status: .badRequest, code: "invalid_version",
                    message: "\"\(text)\" is not an app version; send numbers separated by dots, like 2.3.1 or 2.3.1-beta.2",
                    headers: headers.contains(name: "X-Taksi-Version") ? vary("X-Taksi-Version") : screen.vary.map { [("Vary", $0)] } ?? []
                )
            }
            request.version = version
        }
        request.alternative = alternative
        request.user = headers.first(name: "X-Taksi-User")
        switch screen.variants.select(request) {
        case .success(let compiled):
            guard let variant = screen.served[compiled.file] else { throw .screenNotFound(screen.variants.name) }
            logger.debug(
                "variant selected",
                metadata: ["screen": .string(screen.variants.name), "variant": .string(compiled.variantID)]
            )
            return variant
        case .failure(let error):
            switch error {
            case .versionNotFound:
                throw APIError(status: .notFound, code: "screen_version_not_found", message: error.description, headers: vary("X-Taksi-Version"))
            case .alternativeNotFound:
                throw APIError(
                    status: .notFound, code: "screen_alternative_not_found", message: error.description, headers: vary("X-Taksi-Alternative")
                )
            }
        }
    }

    /// The identifiers of `?only=a,b`: each must be a dynamic component of the variant (one the
    /// client asks data for), else 400.
    private static func only(_ text: String, in screen: CompiledScreen, catalog: ComponentCatalog) throws(APIError) -> Set<String> {
        let dynamic = catalog.dynamicIdentifiers(of: screen.skeleton.components)
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        for name in names where !dynamic.contains(name) {
            throw APIError(
                status: .badRequest, code: "invalid_parameter",
                message: name.isEmpty
                    ? "query parameter \"only\" lists component identifiers separated by commas, like ?only=stations; it has an empty one"
                    : "query parameter \"only\" names \"\(name)\", which is not a dynamic component of \(screen.variantID); use some of \(dynamic.joined(separator: ", "))"
                        + NameSuggestion.hint(for: name, among: dynamic)
            )
        }
        return Set(names)
    }

    /// `GET /links/resolve?url=<link>`: the navigation action a deep link opens, in the client's
    /// action shape, so the app decodes it with the client's own action decoder.
    private func resolveLink(_ url: String?, in links: DeepLinks) throws(APIError) -> HTTPResponse {
        guard let url, !url.isEmpty else {
            throw APIError(
                status: .badRequest, code: "missing_parameter",
                message: "query parameter \"url\" (the link to resolve, percent-encoded) is required; add ?url=https%3A%2F%2F..."
            )
        }
        switch links.resolve(url) {
        case .success(let target):
            let action: JSONValue = ["identifier": "navigation", "content": ["interface_identifier": .string(target)]]
            var response = HTTPResponse(json: ByteBuffer(bytes: JSONWriter.bytes(action)), headers: [("Cache-Control", "public, max-age=60")])
            response.route = "links"
            return response
        case .failure(.notALink(let reason)):
            throw APIError(status: .badRequest, code: "invalid_link", message: "\"\(url)\" cannot be resolved: \(reason)")
        case .failure(.noMatch):
            throw APIError(
                status: .notFound, code: "link_not_found",
                message: "no link pattern of links.yaml matches \"\(url)\" with values its screen accepts; open the app's start screen instead"
            )
        }
    }

    /// A valid set is always loaded (start-up refuses an invalid one), so the server is ready
    /// until it starts draining for shutdown; the body says which set it serves and whether a later
    /// edit is waiting on errors.
    private func readiness(_ status: ScreenStore.Status, draining: Bool) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        return [
            "status": draining ? "draining" : "ready",
            "screens_version": .string(status.version),
            "loaded_at": .string(formatter.string(from: status.loadedAt)),
            "last_reload_at": status.lastReloadAt.map { .string(formatter.string(from: $0)) } ?? .null,
            "pending_errors": .array(status.pendingErrors.map { .string($0.description) }),
            // What each variant's data must match (X-Taksi-Skeleton), and how many earlier sets
            // still answer the skeletons cached from them.
            "revisions": .object(revisions(of: store.snapshot)),
            "earlier_sets": .number(Double(store.earlierSets.count)),
        ]
    }

    /// Each variant's revision by its id (`home|>= 2.0|default`), in every locale it is served in.
    private func revisions(of screens: ServedScreenSet) -> [String: JSONValue] {
        var revisions: [String: JSONValue] = [:]
        for screen in screens.screens.values {
            for variant in screen.served.values { revisions[variant.compiled.variantID] = .string(variant.revision.digest) }
        }
        return revisions
    }

    /// Data that depends on the request, answered on the event loop when it can be: kept from an
    /// earlier request with the same inputs (``DataMemo``), or rendered from request values and
    /// fresh cached upstream values. Only a source that must be fetched or revalidated sends the
    /// request off the loop. Parameter errors are answered at once.
    /// - Parameter only: the components asked for (`?only=`); nil for all.
    private func data(
        for variant: ServedScreenSet.Variant, query: [String: String], path: [String: JSONValue], headers: HTTPHeaders,
        catalog: ComponentCatalog, only: Set<String>? = nil
    ) throws(APIError) -> Reply {
        var screen = variant.compiled
        if let only { screen.dataPlan = screen.dataPlan.restricted(to: only) }
        let plan = screen.dataPlan
        var requestValues: [String: JSONValue]
        let calls: [UpstreamCall]
        do {
            requestValues = try plan.requestValues(query: query, path: path)
            calls = try plan.upstreamCalls(query: query, path: path)
        } catch {
            throw .badParameters(error)
        }
        for call in calls { try Self.checkForwarded(call.definition.forwardedHeaders, in: headers) }
        // Part of a screen is kept apart from the whole (no source is named with a `?`).
        if let only { requestValues["?only"] = .array(only.sorted().map(JSONValue.string)) }
        // Built only when something is rendered: a kept response needs none of it.
        var values: [String: JSONValue] { plan.staticValues.merging(requestValues) { _, request in request } }
        guard !calls.isEmpty else {
            return .ready(
                memoized(variant, requestValues: requestValues, upstream: [], headers: headers) {
                    let (data, problems) = plan.build(values: values, catalog: catalog)
                    logger.dataProblems(problems, in: screen)
                    return DataResolver.Rendered(
                        body: JSONWriter.bytes(data.jsonValue),
                        headers: variant.headers + [("Cache-Control", ServedScreenSet.dataCacheControl)], degraded: false,
                        variant: screen.variantID
                    )
                }
            )
        }
        guard let resolver else {
            throw APIError(status: .serviceUnavailable, code: "upstreams_unavailable", message: "this server calls no upstreams")
        }
        func request() -> DataResolver.Request {
            DataResolver.Request(
                screen: screen, catalog: catalog, headers: variant.headers, values: values, calls: calls, requestHeaders: headers
            )
        }
        guard let fresh = resolver.freshValues(of: calls, requestHeaders: headers) else {
            let request = request()
            return .pending { Self.validated(await resolver.respond(request), request: headers) }
        }
        return .ready(
            memoized(variant, requestValues: requestValues, upstream: fresh.map { ($0.key, $0.fresh.generation) }, headers: headers) {
                resolver.render(request(), lookups: fresh.map { ($0.call, .hit($0.fresh.value)) })
            }
        )
    }

    /// The response kept for these inputs (``DataMemo``), or the one `render` makes, kept unless
    /// it is degraded; with no memo, `render`'s as it is.
    private func memoized(
        _ variant: ServedScreenSet.Variant, requestValues: [String: JSONValue], upstream: [(key: String, generation: UInt64)],
        headers: HTTPHeaders, render: () -> DataResolver.Rendered
    ) -> HTTPResponse {
        guard let memo, memo.isEnabled else { return Self.validated(render(), request: headers) }
        let key = variant.memoKey(requestValues: requestValues, upstream: upstream)
        if let kept = memo.entry(for: key) { return kept.response(to: headers) }
        let rendered = render()
        guard !rendered.degraded else { return rendered.response }
        return memo.keep(
            rendered.body, for: key, headers: rendered.headers, variant: rendered.variant, upstreamKeys: upstream.map(\.key),
            request: headers
        )
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
                status: .badRequest, code: "invalid_header",
                message: "header \(name) holds bytes that are not UTF-8; it is forwarded to an upstream, which would get other bytes than these: send it as ASCII or UTF-8"
            )
        }
    }

    /// A data response not kept, with the validators a kept one has (`ETag`, `304` to
    /// `If-None-Match`, the same `Vary`), so the first answer for some inputs has the headers of
    /// the second; a degraded one as it is (`no-store`, nothing to revalidate).
    private static func validated(_ rendered: DataResolver.Rendered, request: HTTPHeaders) -> HTTPResponse {
        guard !rendered.degraded else { return rendered.response }
        return DataMemo.Entry(body: rendered.body, key: "", headers: rendered.headers, variant: rendered.variant, upstreamKeys: [])
            .response(to: request, gzip: false)
    }

    /// `OPTIONS`: what the server allows, with no body.
    private static let options: HTTPResponse = {
        var response = HTTPResponse(
            status: .noContent, headers: [("Allow", APIError.allowedMethods), ("Cache-Control", "no-store")], body: ByteBuffer()
        )
        response.route = "options"
        return response.precomputed()
    }()

    /// `OPTIONS` on an action's path.
    private static let actionOptions: HTTPResponse = {
        var response = HTTPResponse(
            status: .noContent,
            headers: [("Allow", APIError.actionMethods), ("Accept-Post", actionMediaTypes), ("Cache-Control", "no-store")], body: ByteBuffer()
        )
        response.route = "options"
        return response.precomputed()
    }()

    private static let health: HTTPResponse = {
        let body = JSONWriter.bytes(["status": "ok", "version": .string(TaksiServerVersion.current)])
        var response = HTTPResponse(json: ByteBuffer(bytes: body), headers: [("Cache-Control", "no-store")])
        response.route = "health"
        return response.precomputed()
    }()
}

extension Logger {
    /// Logs why values were left out of a data response: a loss as a warning, an explained
    /// missing optional value at debug, each naming screen, component, field and source.
    func dataProblems(_ problems: [DataPlan.Problem], in screen: CompiledScreen) {
        for problem in problems {
            log(
                level: problem.isLoss ? .warning : .debug, "data value left out",
                metadata: [
                    "screen": .string(screen.name), "variant": .string(screen.variantID),
                    "component": .string(problem.identifier), "field": .string(problem.field ?? "-"),
                    "source": .string(problem.source ?? "-"), "problem": .string(problem.message),
                ]
            )
        }
    }
}
