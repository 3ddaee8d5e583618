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

    init(error: APIError) {
        self.init(status: error.status, json: ByteBuffer(bytes: JSONWriter.bytes(error.body)), headers: error.headers)
    }
}

/// Answers requests from the current screen set. Synchronous and allocation-light: everything it
/// can, it takes precomputed from the snapshot, so it runs on the event loop.
public struct Responder: Sendable {
    let store: ScreenStore
    let logger: Logger

    public init(store: ScreenStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The response to a request's method, target (`/screens/home?x=1`) and headers.
    public func respond(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        do {
            return try route(method: method, uri: uri, headers: headers)
        } catch {
            return HTTPResponse(error: error)
        }
    }

    private func route(method: HTTPMethod, uri: String, headers: HTTPHeaders) throws(APIError) -> HTTPResponse {
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
            let variant = try select(in: screen, target: target, headers: headers)
            variant.skeletonCounter.increment()
            return HTTPResponse(json: variant.skeletonBody, headers: variantHeaders(variant, screen))
        case .data(let name):
            guard let screen = screens.screens[name] else { throw .screenNotFound(name) }
            let variant = try select(in: screen, target: target, headers: headers)
            variant.dataCounter.increment()
            if let body = variant.staticDataBody {
                return HTTPResponse(json: body, headers: variantHeaders(variant, screen))
            }
            let body = try data(for: variant.compiled, query: target.query, catalog: screens.screenSet.catalog)
            return HTTPResponse(json: body, headers: variantHeaders(variant, screen))
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
