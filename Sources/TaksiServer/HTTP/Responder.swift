public import Logging
public import NIOCore
public import NIOHTTP1
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

    /// The response to a request's method and target (`/screens/home?x=1`).
    public func respond(method: HTTPMethod, uri: String) -> HTTPResponse {
        do {
            return try route(method: method, uri: uri)
        } catch {
            return HTTPResponse(error: error)
        }
    }

    private func route(method: HTTPMethod, uri: String) throws(APIError) -> HTTPResponse {
        let target = try RequestTarget(uri)
        let route = Route(path: target.path)
        if route == .notFound { throw .notFound(path: String(target.path)) }
        guard method == .GET || method == .HEAD else { throw .methodNotAllowed(method) }
        let screens = store.snapshot
        switch route {
        case .health:
            return HTTPResponse(json: Self.healthBody)
        case .index:
            return HTTPResponse(json: screens.indexBody)
        case .skeleton(let name):
            guard let screen = screens.screens[name] else { throw .screenNotFound(name) }
            return HTTPResponse(json: screen.skeletonBody)
        case .data(let name):
            guard let screen = screens.screens[name] else { throw .screenNotFound(name) }
            if let body = screen.staticDataBody { return HTTPResponse(json: body) }
            return try data(for: screen, query: target.query, catalog: screens.screenSet.catalog)
        case .notFound:
            throw .notFound(path: String(target.path))
        }
    }

    private func data(for screen: ServedScreenSet.Screen, query: [String: String], catalog: ComponentCatalog) throws(APIError) -> HTTPResponse {
        let plan = screen.compiled.dataPlan
        var values = plan.staticValues
        do {
            values.merge(try plan.requestValues(query: query)) { _, request in request }
        } catch {
            throw APIError(status: .badRequest, code: error.code, message: error.description)
        }
        let (data, problems) = plan.build(values: values, catalog: catalog)
        for problem in problems {
            logger.log(
                level: problem.isLoss ? .warning : .debug, "data value left out",
                metadata: [
                    "screen": .string(screen.compiled.name), "component": .string(problem.identifier),
                    "problem": .string(problem.message),
                ]
            )
        }
        return HTTPResponse(json: ByteBuffer(bytes: JSONWriter.bytes(data.jsonValue)))
    }

    private static let healthBody = ByteBuffer(string: #"{"status":"ok"}"#)
}
