import CoreMetrics
import Foundation
public import Logging
public import NIOCore
public import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// A request as the responder sees it: the head, and the id echoed as `X-Request-Id`.
public struct HTTPRequest: Sendable {
    /// Its head, as it was read (``RequestHead``).
    public var head: RequestHead
    public var method: HTTPMethod { head.method }
    /// Its target, as text, made when asked for.
    public var uri: String { head.uri }
    /// Its fields, as text, made when asked for.
    public var headers: HTTPHeaders { head.headers }
    /// The body of a POST, whole (bounded by `max_body_bytes`); nil when none was sent.
    public var body: ByteBuffer?
    /// Its id, as the response's `X-Request-Id` says it.
    public var id = RequestIDReference.inProcess
    /// Its span, when tracing is on, and the tracer its calls' spans come from.
    var trace: RequestTrace?
    /// Made by the preview for what it shows: answered as an app's, but its user is not recorded
    /// as exposed to an experiment.
    var isPreview = false

    /// A prefetch (`Sec-Purpose: prefetch`, or the older `Purpose: prefetch`): an app fetching a
    /// skeleton it may show, so its user is not recorded as exposed to an experiment. Read only
    /// where an exposure would be recorded.
    var isPrefetch: Bool {
        let headers = head.headers
        return (headers["Sec-Purpose"] + headers["Purpose"]).contains { $0.lowercased().contains("prefetch") }
    }
    /// An answer the connection decided while reading it (a limit was exceeded, the head was
    /// malformed): answered as it is, without routing.
    var rejection: APIError?

    /// Its id and trace context, for the calls it makes and the lines it logs.
    var correlation: Correlation { Correlation(requestID: id.text, headers: headers, span: trace?.span, tracing: trace?.tracing) }

    /// Notes an attribute of its span (`taksi.memo`: `hit`), when the span is recorded.
    /// - Parameter attribute: made only when it is noted (``String`` interpolation is lazy here).
    func note(_ attribute: @autoclosure () -> String, _ value: String) {
        guard let span = trace?.span, span.isRecording else { return }
        span.attributes[attribute()] = value
    }

    public init(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) {
        self.init(head: RequestHead(method: method, uri: uri, headers: headers), body: body)
    }

    public init(head: RequestHead, body: ByteBuffer? = nil) {
        self.head = head
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

/// Answers requests from the current screen set: finds the route of a request's target (the
/// byte router, ``Route``), checks the method the route takes, and hands the request to the
/// endpoint of its family. Synchronous and allocation-light: everything it can, it takes
/// precomputed from the snapshot, so it runs on the event loop.
///
/// | route | endpoint |
/// |---|---|
/// | `GET /screens/<path>` | ``SkeletonEndpoint`` |
/// | `GET /screens/<path>/data` | ``DataEndpoint`` |
/// | `POST /screens/<path>/actions/<name>` | ``ActionEndpoint`` |
/// | `/healthz`, `/readyz`, `/metrics`, `/openapi.*`, `GET /screens`, `OPTIONS` | ``OperationsEndpoint`` |
/// | `/links/resolve`, `/.well-known/...` | ``LinksEndpoint`` |
/// | `/preview/...` | ``Preview`` |
public struct Responder: Sendable {
    let store: ScreenStore
    let skeletons: SkeletonEndpoint
    let data: DataEndpoint
    let actions: ActionEndpoint
    let operations: OperationsEndpoint
    let links: LinksEndpoint
    /// The live preview's pages and event stream; nil when it is off (its routes answer 404).
    let preview: Preview?
    /// Spans of requests and their calls; nil when tracing is off.
    let tracing: RequestTracing?
    /// Published bundles loaded for earlier revisions; nil without published screens.
    let kept: KeptBundles?
    /// What the endpoints answer from: the screens and logger, and each collaborator a
    /// configuration turns on (nil or empty leaves its part off). One value, made once by the
    /// application (``Application/responder``); a test sets the parts it needs.
    public struct Dependencies: Sendable {
        public var store: ScreenStore
        public var logger: Logger
        /// Looks up upstream values and calls actions' upstreams; nil when the server calls no upstreams.
        public var resolver: DataResolver? = nil
        /// What `/metrics` exposes; nil answers it with 404.
        public var metrics: MetricsExposition? = nil
        /// Data responses kept for their inputs; nil renders every one.
        public var memo: ResponseMemo? = nil
        /// Turns the preview (`/preview`) on, its event stream fed by these.
        public var previewEvents: PreviewEvents? = nil
        /// Keyed submits answered once per `Idempotency-Key`, through the fleet's store or this
        /// process's memory; nil runs every submit.
        public var submits: FleetSubmits? = nil
        /// Published bundles loaded on demand to answer data and submits for earlier revisions
        /// (screens from the store); nil answers those `412`.
        public var kept: KeptBundles? = nil
        /// What this replica serves of the published screens, for `/readyz`.
        public var published: PublishedScreens.State? = nil
        /// Set when shutdown begins, so `/readyz` answers 503.
        public var draining = Draining()
        /// Makes a span of each request and of each call it makes; nil for none.
        public var tracing: RequestTracing? = nil
        /// The CDN purges, whose failing targets `/readyz` names.
        public var purger: CDNPurger? = nil
        /// Where the endpoints count degraded data (``DegradedData``, written by `/metrics`) and
        /// action outcomes (its factory); nil: action outcomes in the process's `MetricsSystem`,
        /// degraded data nowhere.
        public var counting: ServerMetrics? = nil
        /// Where users shown an experiment's alternative are recorded; nil records nobody.
        public var exposures: ExposureRecorder? = nil
        /// Signs and reads the tokens of lists that continue; by default with a key made for
        /// this process (a fleet's replicas share ``ServerConfiguration/pageTokenKeys``).
        public var pageTokens: PageTokens = .processLocal()

        public init(store: ScreenStore, logger: Logger) {
            self.store = store
            self.logger = logger
        }
    }

    public init(_ dependencies: Dependencies) {
        let store = dependencies.store
        let logger = dependencies.logger
        self.tracing = dependencies.tracing
        self.kept = dependencies.kept
        let selector = VariantSelector(store: store, logger: logger, kept: dependencies.kept, exposures: dependencies.exposures)
        self.store = store
        self.skeletons = SkeletonEndpoint(selector: selector, memo: dependencies.memo)
        let counters = EndpointCounters(
            factory: dependencies.counting?.factory ?? MetricsSystem.factory, degradedData: dependencies.counting?.degraded)
        self.data = DataEndpoint(
            selector: selector, logger: logger, resolver: dependencies.resolver, counters: counters, memo: dependencies.memo,
            pageTokens: dependencies.pageTokens,
            pageCounters: ListPageCounters(factory: dependencies.counting?.factory ?? MetricsSystem.factory))
        self.actions = ActionEndpoint(
            selector: selector, logger: logger, resolver: dependencies.resolver, counters: counters,
            submits: dependencies.submits)
        self.operations = OperationsEndpoint(
            store: store, metrics: dependencies.metrics, draining: dependencies.draining, published: dependencies.published,
            purger: dependencies.purger)
        self.links = LinksEndpoint(store: store)
        self.preview = dependencies.previewEvents.map(Preview.init(events:))
    }

    /// Answers from `store` alone: no upstreams, memo, metrics nor preview.
    public init(store: ScreenStore, logger: Logger) {
        self.init(Dependencies(store: store, logger: logger))
    }

    /// The reply to a request; ready at once unless the data needs upstream calls. With tracing
    /// on, the request is answered inside its span (``RequestTracing/traced(_:_:)``).
    public func respond(to request: HTTPRequest) -> Reply {
        guard let tracing else { return answer(request) }
        return tracing.traced(request, answer)
    }

    /// The reply to a request, untraced: what ``respond(to:)`` runs inside the request's span,
    /// and what the preview asks for the exchanges it shows.
    func answer(_ request: HTTPRequest) -> Reply {
        if let rejection = request.rejection { return .ready(HTTPResponse(error: rejection)) }
        do {
            return try route(request)
        } catch {
            // A revision this replica does not hold: a published bundle may (the fleet's store
            // says which); loaded, the request is routed again and finds it.
            if error.code == .skeletonOutdated, let kept, let revision = request.head.text(request.head.fields.revision) {
                return .pending {
                    guard await kept.load(holding: revision) else { return HTTPResponse(error: error) }
                    let reply: Reply
                    do throws(APIError) {
                        reply = try route(request)
                    } catch {
                        return HTTPResponse(error: error)
                    }
                    return await reply.response
                }
            }
            return .ready(HTTPResponse(error: Self.waiting(error, store: store)))
        }
    }

    /// `error`, or `503 not_serving_yet` when it says a screen, link or action is not found
    /// because no set is loaded yet (``ScreenSet/none``): asked only on the way to a 404, so a
    /// request answered costs nothing more.
    private static func waiting(_ error: APIError, store: ScreenStore) -> APIError {
        switch error.code {
        case .screenNotFound, .linkNotFound, .actionNotFound, .screenVersionNotFound, .screenAlternativeNotFound:
            store.snapshot.screenSet.isNone ? .notServingYet : error
        default: error
        }
    }

    /// The error a request gets whatever its body, known from its head: asked before a client
    /// that sent `Expect: 100-continue` is told to send the body, so a submit to an action that
    /// does not exist gets its 404 instead of `100 Continue` and then the 404. Nil when the body
    /// may matter (or is read and dropped, as elsewhere than actions).
    public func refusal(beforeBodyOf head: RequestHead) -> APIError? {
        do throws(APIError) {
            if head.isAsterisk { return nil }
            let (target, route) = try self.route(of: head)
            guard case .action(let path, let name) = route, case .POST = head.method else { return nil }
            let (shown, selection) = try actions.lookUp(name, at: path, head: head, target: target)
            _ = try actions.currentDefinition(of: shown, at: path, head: head, target: target, for: selection)
            return nil
        } catch {
            // A revision a published bundle may have: known only once the store is asked, with the body.
            if error.code == .skeletonOutdated, kept != nil { return nil }
            return Self.waiting(error, store: store)
        }
    }

    /// The route of a request's target, or the error it gets whatever else it holds: `CONNECT`
    /// (its target is a host, never a path here), an unknown path (the preview's, when it is off,
    /// for every method), a method the route does not take.
    private func route(of head: RequestHead) throws(APIError) -> (RequestTarget, Route) {
        if case .CONNECT = head.method { throw .methodNotAllowed(head.method) }
        let target = try RequestTarget(head)
        let route = Route(path: target.path)
        if case .notFound = route { throw .notFound(path: String(target.path)) }
        if preview == nil, route.isPreview { throw .notFound(path: String(target.path)) }
        try Self.checkMethod(head.method, for: route)
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

    private func route(_ request: HTTPRequest) throws(APIError) -> Reply {
        // OPTIONS * asks about the server.
        if request.head.isAsterisk { return .ready(OperationsEndpoint.options) }
        let (target, route) = try route(of: request.head)
        let isOptions = if case .OPTIONS = request.method { true } else { false }
        if case .action(let path, let name) = route {
            if isOptions { return .ready(ActionEndpoint.options) }
            // A submit reads its fields many times: made text once.
            var request = request
            request.head = request.head.keepingHeaders()
            return try actions.respond(name, at: path, request: request, target: target)
        }
        if isOptions { return .ready(OperationsEndpoint.options) }
        switch route {
        case .skeleton(let path): return .ready(try skeletons.respond(at: path, target: target, request: request))
        case .data(let path): return try data.respond(at: path, target: target, request: request)
        case .health: return .ready(OperationsEndpoint.health)
        case .ready: return .ready(operations.ready())
        case .metrics: return .ready(try operations.metrics(target))
        case .openAPI: return .ready(operations.openAPI)
        case .index: return .ready(operations.index)
        case .root: return .ready(preview == nil ? OperationsEndpoint.root : OperationsEndpoint.toPreview)
        case .resolveLink: return .ready(try links.resolve(target))
        case .appleAppSiteAssociation: return .ready(try links.appleAppSiteAssociation(target))
        case .assetLinks: return .ready(try links.assetLinks(target))
        case .preview(let route):
            guard let preview else { throw .notFound(path: String(target.path)) }
            return try preview.respond(to: route, target: target, responder: self, store: store)
        case .notFound, .action:
            throw .notFound(path: String(target.path))
        }
    }
}
