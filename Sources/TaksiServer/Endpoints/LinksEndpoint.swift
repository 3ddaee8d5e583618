import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// Deep links: `GET /links/resolve?url=<link>` (the navigation action a link opens), and the
/// association files the platforms read to open the app for its links
/// (`/.well-known/apple-app-site-association`, `/.well-known/assetlinks.json`).
struct LinksEndpoint: Sendable {
    let store: ScreenStore

    func resolve(_ target: RequestTarget) throws(APIError) -> HTTPResponse {
        try resolveLink(target.value(of: "url"), in: store.snapshot.screenSet.links)
    }

    func appleAppSiteAssociation(_ target: RequestTarget) throws(APIError) -> HTTPResponse {
        guard let response = store.snapshot.appleAssociation else { throw .notFound(path: String(target.path)) }
        return response
    }

    func assetLinks(_ target: RequestTarget) throws(APIError) -> HTTPResponse {
        guard let response = store.snapshot.androidAssociation else { throw .notFound(path: String(target.path)) }
        return response
    }

    /// `GET /links/resolve?url=<link>`: the navigation action a deep link opens, in the client's
    /// action shape, so the app decodes it with the client's own action decoder.
    private func resolveLink(_ url: String?, in links: DeepLinks) throws(APIError) -> HTTPResponse {
        guard let url, !url.isEmpty else {
            throw APIError(
                .missingParameter,
                message: "query parameter \"url\" (the link to resolve, percent-encoded) is required; add ?url=https%3A%2F%2F..."
            )
        }
        switch links.resolve(url) {
        case .success(let target):
            let action: JSONValue = ["identifier": "navigation", "content": ["interface_identifier": .string(target)]]
            var response = HTTPResponse(
                json: ByteBuffer(bytes: JSONWriter.bytes(action)), headers: [("Cache-Control", "public, max-age=60")])
            response.metricsLabel = .links
            return response
        case .failure(.notALink(let reason)):
            throw APIError(.invalidLink, message: "\"\(url)\" cannot be resolved: \(reason)")
        case .failure(.noMatch):
            throw APIError(
                .linkNotFound,
                message:
                    "no link pattern of links.yaml matches \"\(url)\" with values its screen accepts; open the app's start screen instead"
            )
        }
    }
}
