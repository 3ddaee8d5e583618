public import Logging
public import NIOCore
public import NIOHTTP1
import Foundation
import TaksiSchema
import TaksiScreens

/// A response ready to write: status, headers and body. For `HEAD` the body is not written but
/// `Content-Length` still describes it.
public struct HTTPResponse: Sendable {
    public var status: HTTPResponseStatus
    public var headers: HTTPHeaders
    public var body: ByteBuffer

    init(status: HTTPResponseStatus = .ok, json body: ByteBuffer, headers extra: [(String, String)] = []) {
        self.status = status
        var headers = HTTPHeaders()
        headers.reserveCapacity(4 + extra.count)
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        for (name, value) in extra { headers.add(name: name, value: value) }
        self.headers = headers
        self.body = body
    }

    /// `304 Not Modified`: the validators and caching headers of the full response, no body.
    init(notModified headers: [(String, String)]) {
        self.status = .notModified
        self.headers = HTTPHeaders(headers)
        self.body = ByteBuffer()
    }

    init(error: APIError) {
        self.init(status: error.status, json: ByteBuffer(bytes: JSONWriter.bytes(error.body)), headers: error.headers)
    }
}

/// Answers requests from the current screen set. Synchronous and allocation-light: everything it
/// can, it takes precomputed from the snapshot, so it runs on the event loop.
public struct Responder: Sendable {
    let store: ScreenStore
    let logger: Logger
    /// `Cache-Control` of skeletons: public, so CDNs and shared caches may keep them.
    let skeletonCacheControl: String

    /// - Parameters:
    ///   - skeletonMaxAge: seconds a cache may serve a skeleton without asking again.
    ///   - skeletonStaleWhileRevalidate: seconds after that it may still serve it while it revalidates.
    public init(store: ScreenStore, logger: Logger, skeletonMaxAge: Int = 60, skeletonStaleWhileRevalidate: Int = 300) {
        self.store = store
        self.logger = logger
        self.skeletonCacheControl = "public, max-age=\(skeletonMaxAge), stale-while-revalidate=\(skeletonStaleWhileRevalidate)"
    }

    /// Data is per request and may hold a user's values: private, and revalidated every time.
    static let dataCacheControl = "private, no-cache"

    /// The response to a request's method, target (`/screens/home?x=1`) and headers.
    public func respond(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        do {
            return try route(method: method, uri: uri, headers: headers)
        } catch {
            return HTTPResponse(error: error)
        }
    }

    private func route(method: HTTPMethod, uri: String, headers requestHeaders: HTTPHeaders) throws(APIError) -> HTTPResponse {
        let target = try RequestTarget(uri)
        let route = Route(path: target.path)
        if route == .notFound { throw .notFound(path: String(target.path)) }
        guard method == .GET || method == .HEAD else { throw .methodNotAllowed(method) }
        let screens = store.snapshot
        switch route {
        case .health:
            return HTTPResponse(json: Self.healthBody)
        case .ready:
            return HTTPResponse(json: ByteBuffer(bytes: JSONWriter.bytes(readiness(store.status))))
        case .index:
            return HTTPResponse(json: screens.indexBody)
        case .skeleton(let name):
            guard let screen = screens.screens[name] else { throw .screenNotFound(name) }
            let variant = try select(in: screen, target: target, headers: requestHeaders)
            variant.skeletonCounter.increment()
            let headers = variantHeaders(variant, screen) + [("ETag", variant.skeletonETag), ("Cache-Control", skeletonCacheControl)]
            if Self.matches(headers: requestHeaders, etag: variant.skeletonETag) { return HTTPResponse(notModified: headers) }
            return HTTPResponse(json: variant.skeletonBody, headers: headers)
        case .data(let name):
            guard let screen = screens.screens[name] else { throw .screenNotFound(name) }
            let variant = try select(in: screen, target: target, headers: requestHeaders)
            variant.dataCounter.increment()
            var headers = variantHeaders(variant, screen) + [("Cache-Control", Self.dataCacheControl)]
            if let body = variant.staticDataBody, let etag = variant.staticDataETag {
                headers.append(("ETag", etag))
                if Self.matches(headers: requestHeaders, etag: etag) { return HTTPResponse(notModified: headers) }
                return HTTPResponse(json: body, headers: headers)
            }
            let body = try data(for: variant.compiled, query: target.query, catalog: screens.screenSet.catalog)
            return HTTPResponse(json: body, headers: headers)
        case .notFound:
            throw .notFound(path: String(target.path))
        }
    }

    /// The variant for the request: the same function for skeleton and data, so the two always agree.
    private func select(
        in screen: ServedScreenSet.Screen, target: RequestTarget, headers: HTTPHeaders
    ) throws(APIError) -> ServedScreenSet.Variant {
        var request = ScreenVariants.Request()
        let vary = screen.vary.map { [("Vary", $0)] } ?? []
        if let text = headers.first(name: "X-Taksi-Version") ?? target.query["version"] {
            guard let version = Version(text.trimmingCharacters(in: .whitespaces)) else {
                throw APIError(
                    status: .badRequest, code: "invalid_version",
                    message: "\"\(text)\" is not an app version; send numbers separated by dots, like 2.3.1", headers: vary
                )
            }
            request.version = version
        }
        request.alternative = headers.first(name: "X-Taksi-Alternative")
        request.user = headers.first(name: "X-Taksi-User")
        switch screen.variants.select(request) {
        case .success(let compiled):
            guard let variant = screen.served[compiled.variantID] else { throw .screenNotFound(screen.variants.name) }
            logger.debug(
                "variant selected",
                metadata: ["screen": .string(screen.variants.name), "variant": .string(compiled.variantID)]
            )
            return variant
        case .failure(let error):
            let code =
                switch error {
                case .versionNotFound: "screen_version_not_found"
                case .alternativeNotFound: "screen_alternative_not_found"
                }
            throw APIError(status: .notFound, code: code, message: error.description, headers: vary)
        }
    }

    /// A valid set is always loaded (start-up refuses an invalid one), so the server is ready; the
    /// body says which set it serves and whether a later edit is waiting on errors.
    private func readiness(_ status: ScreenStore.Status) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        return [
            "status": "ready",
            "screens_version": .string(status.version),
            "loaded_at": .string(formatter.string(from: status.loadedAt)),
            "last_reload_at": status.lastReloadAt.map { .string(formatter.string(from: $0)) } ?? .null,
            "pending_errors": .array(status.pendingErrors.map { .string($0.description) }),
        ]
    }

    /// Whether `If-None-Match` names `etag` (or is `*`); weak comparison, as RFC 9110 asks for it.
    static func matches(headers: HTTPHeaders, etag: String) -> Bool {
        for value in headers[canonicalForm: "If-None-Match"] {
            let candidate = value.trimmingCharacters(in: .whitespaces)
            if candidate == "*" { return true }
            let tag = candidate.hasPrefix("W/") ? candidate.dropFirst(2) : candidate[...]
            if tag == etag[...] { return true }
        }
        return false
    }

    private func variantHeaders(_ variant: ServedScreenSet.Variant, _ screen: ServedScreenSet.Screen) -> [(String, String)] {
        var headers = [("X-Taksi-Variant", variant.compiled.variantID), ("X-Taksi-Screens-Version", variant.setVersion)]
        if let vary = screen.vary { headers.append(("Vary", vary)) }
        return headers
    }

    private func data(for screen: CompiledScreen, query: [String: String], catalog: ComponentCatalog) throws(APIError) -> ByteBuffer {
        let plan = screen.dataPlan
        let requestValues: [String: JSONValue]
        do {
            requestValues = try plan.requestValues(query: query)
        } catch {
            throw APIError(status: .badRequest, code: error.code, message: error.description)
        }
        let values = plan.staticValues.merging(requestValues) { _, request in request }
        let (data, problems) = plan.build(values: values, catalog: catalog)
        for problem in problems {
            logger.log(
                level: problem.isLoss ? .warning : .debug, "data value left out",
                metadata: [
                    "screen": .string(screen.name), "variant": .string(screen.variantID),
                    "component": .string(problem.identifier), "problem": .string(problem.message),
                ]
            )
        }
        return ByteBuffer(bytes: JSONWriter.bytes(data.jsonValue))
    }

    private static let healthBody = ByteBuffer(string: #"{"status":"ok"}"#)
}
