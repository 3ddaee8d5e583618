import Foundation
import NIOCore
import NIOHTTP1
import Prometheus
import TaksiSchema
import TaksiScreens

/// What operators and tools ask the server about itself: `GET /healthz` (the process answers),
/// `GET /readyz` (it serves a set and is not draining), `GET /metrics` (Prometheus), the API
/// description (`/openapi.yaml`, `/openapi.json`), the index of screens (`GET /screens`) and
/// `OPTIONS`.
struct OperationsEndpoint: Sendable {
    let store: ScreenStore
    /// What `/metrics` exposes; nil answers it with 404.
    let metrics: MetricsExposition?
    /// Shutdown began: `/readyz` answers 503.
    let draining: Draining
    /// What this replica serves of the published screens, when they come from the store.
    var published: PublishedScreens.State? = nil
    /// The CDN purges, when configured: `/readyz` names the targets whose last purge failed.
    var purger: CDNPurger? = nil

    func ready() -> HTTPResponse {
        let draining = self.draining.isDraining
        let waiting = store.snapshot.screenSet.isNone
        var response = HTTPResponse(
            status: draining || waiting ? .serviceUnavailable : .ok,
            json: ByteBuffer(bytes: JSONWriter.bytes(readiness(store.status, draining: draining, waiting: waiting))),
            headers: [("Cache-Control", "no-store")]
        )
        response.metricsLabel = .ready
        return response
    }

    func metrics(_ target: RequestTarget) throws(APIError) -> HTTPResponse {
        guard let metrics else { throw .notFound(path: String(target.path)) }
        let body = ByteBuffer(bytes: MetricFamilies.withHelp(metrics.emit(served: store.snapshot)))
        var response = HTTPResponse(body: body, type: "text/plain; version=0.0.4; charset=utf-8", headers: [("Cache-Control", "no-store")])
        response.metricsLabel = .metrics
        return response
    }

    /// The OpenAPI description of the set served now.
    var openAPI: HTTPResponse { store.snapshot.openAPI }

    /// `GET /screens`: every screen, its parameters, variants and actions.
    var index: HTTPResponse { store.snapshot.index }

    /// Ready while a set is served and shutdown has not begun: a directory's set is valid from the
    /// start (start-up refuses an invalid one); a replica serving from the store is `waiting` until
    /// it loads a bundle, and `published.waiting` says why. The body says which set it serves and
    /// whether a later edit is waiting on errors.
    private func readiness(_ status: ScreenStore.Status, draining: Bool, waiting: Bool) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        return [
            "status": draining ? "draining" : waiting ? "waiting" : "ready",
            "screens_version": waiting ? .null : .string(status.version),
            "loaded_at": .string(formatter.string(from: status.loadedAt)),
            "last_reload_at": status.lastReloadAt.map { .string(formatter.string(from: $0)) } ?? .null,
            "pending_errors": .array(status.pendingErrors.map { .string($0.description) }),
            // What each variant's data must match (X-Taksi-Skeleton), and how many earlier sets
            // still answer the skeletons cached from them.
            "revisions": .object(revisions(of: store.snapshot)),
            "earlier_sets": .number(Double(store.earlierSets.count)),
            "published": published.map { Self.published($0, formatter: formatter) } ?? .null,
            "cdn": purger.map { purger in
                [
                    "failing": .array(
                        purger.failing.map {
                            ["target": .string($0.target), "error": .string($0.error), "since": .string(formatter.string(from: $0.since))]
                        }),
                    "waiting_on": .array(purger.waitingOn.map(JSONValue.string)),
                ]
            } ?? .null,
        ]
    }

    /// The published bundle served, the one refused and why, and whether the store answers.
    private static func published(_ state: PublishedScreens.State, formatter: ISO8601DateFormatter) -> JSONValue {
        let (report, failing, waiting) = state.values.withLockedValue { ($0.report, $0.storeFailing, $0.waiting) }
        return [
            "waiting": waiting.map(JSONValue.string) ?? .null,
            "bundle": report.bundle.map(JSONValue.string) ?? .null,
            "since": report.since.map { .string(formatter.string(from: $0)) } ?? .null,
            "refused_bundle": report.refusedBundle.map(JSONValue.string) ?? .null,
            "refusal": report.refusal.map(JSONValue.string) ?? .null,
            "store": failing ? "unreachable" : "reachable",
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

    /// `OPTIONS`: what the server allows, with no body.
    static let options: HTTPResponse = {
        var response = HTTPResponse(
            status: .noContent, headers: [("Allow", APIError.allowedMethods), ("Cache-Control", "no-store")], body: ByteBuffer()
        )
        response.metricsLabel = .options
        return response.precomputed()
    }()

    /// `GET /` without the preview: where things are, for a person who opened the address.
    static let root: HTTPResponse = {
        let body = JSONWriter.bytes(
            [
                "name": "taksi-server", "version": .string(TaksiServerVersion.current),
                "screens": "/screens", "openapi": "/openapi.yaml", "health": "/healthz", "ready": "/readyz",
            ], pretty: true)
        var response = HTTPResponse(json: ByteBuffer(bytes: body), headers: [("Cache-Control", "no-store")])
        response.metricsLabel = .root
        return response.precomputed()
    }()

    /// `GET /` with the preview on (a screen author's desk): to it.
    static let toPreview: HTTPResponse = {
        var response = HTTPResponse(
            status: .found, headers: [("Location", "/preview"), ("Cache-Control", "no-store")], body: ByteBuffer())
        response.metricsLabel = .root
        return response.precomputed()
    }()

    static let health: HTTPResponse = {
        let body = JSONWriter.bytes(["status": "ok", "version": .string(TaksiServerVersion.current)])
        var response = HTTPResponse(json: ByteBuffer(bytes: body), headers: [("Cache-Control", "no-store")])
        response.metricsLabel = .health
        return response.precomputed()
    }()
}
