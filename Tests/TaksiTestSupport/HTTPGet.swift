package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// A GET through `URLSession`, as an app makes it, with no cache of its own between the test and
/// the server: the body and the response.
package func httpGet(_ url: URL, headers: [String: String] = [:]) async throws -> (Data, HTTPURLResponse) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    let session = URLSession(configuration: configuration)
    var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await withCheckedThrowingContinuation { continuation in
        session.dataTask(with: request) { body, response, error in
            if let body, let http = response as? HTTPURLResponse {
                continuation.resume(returning: (body, http))
            } else {
                continuation.resume(throwing: error ?? URLError(.badServerResponse))
            }
        }.resume()
    }
}
