import Foundation
import TaksiServer
import TaksiTestSupport
import Testing

@testable import ClientSnippets

/// The app code docs/client.md gives (docs/client-snippets), run against the real server: a path or
/// query the app wrote itself, with a space, an accent or a brace, is encoded, never a trap.
@Suite("Client requests")
struct ClientRequestTests {
    @Test("what URLComponents traps on is percent-encoded; escapes already there are kept")
    func encoding() {
        let query = CharacterSet.urlQueryAllowed
        #expect(TaksiServerClient.encoded("q=swift nio&sort=stars", allowing: query) == "q=swift%20nio&sort=stars")
        #expect(TaksiServerClient.encoded("q=café", allowing: query) == "q=caf%C3%A9")
        #expect(TaksiServerClient.encoded("q=caf%C3%A9", allowing: query) == "q=caf%C3%A9")
        #expect(TaksiServerClient.encoded("off=100%", allowing: query) == "off=100%25")
        #expect(TaksiServerClient.encoded("off=%zz", allowing: query) == "off=%25zz")
        #expect(TaksiServerClient.encoded("products/{id}", allowing: .urlPathAllowed) == "products/%7Bid%7D")
        #expect(TaksiServerClient.encoded("a#b?c", allowing: .urlPathAllowed) == "a%23b%3Fc")
    }

    @Test("hostile paths and queries reach the server encoded: its answer, never a trap")
    func hostileRequests() async throws {
        try await fixtureApplication().test(.live) { client in
            let port = try #require(client.port)
            let app = TaksiServerClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, userID: nil)
            let decoder = JSONDecoder()
            for query in ["q=swift nio&sort=stars", "q=café", "q={swift}", "q=100%", "q=a%20b"] {
                let data = await app.fetchInterfaceData(for: "repositories?" + query, using: decoder)
                #expect(data != nil, "\(query)")
            }
            // A path segment the app wrote: answered (404 or data), not a crash.
            for path in ["bikes/stations/vé lib", "bikes/stations/{network}", "bikes/stations/a%2Fb"] {
                _ = await app.fetchInterfaceData(for: path, using: decoder)
            }
        }
    }
}
