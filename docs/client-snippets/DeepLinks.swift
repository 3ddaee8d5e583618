import Foundation
import Taksi

/// The action that opens the screen a link names (run it as a tap's action), or nil when the
/// server knows no screen for it.
func action(for link: URL, baseURL: URL) async -> (any Action)? {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
    components.percentEncodedPath += "/links/resolve"
    // The whole link as one query value, everything but unreserved characters encoded (`+` too,
    // which a query would read as a space), so the server gets the link as it was.
    let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    guard let value = link.absoluteString.addingPercentEncoding(withAllowedCharacters: unreserved) else { return nil }
    components.percentEncodedQuery = "url=" + value
    guard let url = components.url else { return nil }
    let answer: (Data, URLResponse)? = await withCheckedContinuation { continuation in
        URLSession.shared.dataTask(with: url) { body, response, _ in
            continuation.resume(returning: body.flatMap { body in response.map { (body, $0) } })
        }.resume()
    }
    guard let (body, response) = answer, (response as? HTTPURLResponse)?.statusCode == 200 else { return nil }
    // {"identifier": "navigation", "content": {"interface_identifier": "restaurants/la-table"}}:
    // the client's own action decoder, through the features registered in FeatureBuilder.
    return (try? JSONDecoder().decode(AnyAction.self, from: body))?.action
}
