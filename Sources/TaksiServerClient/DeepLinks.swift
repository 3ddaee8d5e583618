public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The action a deep link opens, as the server resolved it.
public struct ResolvedLink: Sendable, Equatable {
    /// The action's JSON, `{"identifier": "navigation", "content": {"interface_identifier": ...}}`:
    /// decode it with the Taksi client's action decoder and run it like a tap's.
    public let action: Data
    /// The screen it opens (its `interface_identifier`), for ``ScreenServer/load(_:)``.
    public let screen: String?
}

extension ScreenServer {
    /// Asks the server which screen `link` opens (`GET <base>/links/resolve?url=<link>`): a
    /// universal link, a custom scheme's URL, a push notification's.
    ///
    /// - Returns: the action, or the error: `404 link_not_found` for a link the server has no
    ///   screen for (open it in a browser, say), `400 invalid_link`...
    public func resolve(_ link: URL) async -> Result<ResolvedLink, TaksiServerError> {
        // The whole link as one query value, everything but unreserved characters encoded (`+`
        // too, which a query would read as a space): the server gets the link as it was.
        let value = ScreenPath.encoded(link.absoluteString, allowing: ScreenPath.valueAllowed, keepingEscapes: false)
        let request: URLRequest
        switch self.request("links/resolve", query: "url=" + value) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        switch await send(request) {
        case .failure(let error): return .failure(error)
        case .success(let answer) where answer.status == 200:
            let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
            let content = object?["content"] as? [String: Any]
            return .success(ResolvedLink(action: answer.body, screen: content?["interface_identifier"] as? String))
        case .success(let answer): return .failure(answer.error)
        }
    }
}
