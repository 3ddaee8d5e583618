import TaksiServerClient
import Testing

/// What a path or query becomes in a URL: anything a URL cannot carry is percent-encoded (never
/// a trap in `URLComponents`), escapes already there are kept.
@Suite("Client library: screen paths")
struct ScreenPathTests {
    @Test(
        "a path and its query are encoded, escapes kept",
        arguments: [
            ("home", "home", nil),
            ("/home/", "home", nil),
            ("repositories?q=swift nio&sort=stars", "repositories", "q=swift%20nio&sort=stars"),
            ("repositories?q=café", "repositories", "q=caf%C3%A9"),
            ("repositories?q=caf%C3%A9", "repositories", "q=caf%C3%A9"),
            ("repositories?off=100%", "repositories", "off=100%25"),
            ("repositories?off=%zz", "repositories", "off=%25zz"),
            ("repositories?q=a?b/c", "repositories", "q=a?b/c"),
            ("repositories?", "repositories", nil),
            ("products/{id}", "products/%7Bid%7D", nil),
            ("repositories/a%2Fb/caf%C3%A9", "repositories/a%2Fb/caf%C3%A9", nil),
            ("a#b", "a%23b", nil),
            ("tab\there", "tab%09here", nil),
            ("😀/ü", "%F0%9F%98%80/%C3%BC", nil),
        ] as [(String, String, String?)])
    func encoding(path: String, screen: String, query: String?) {
        let encoded = ScreenPath(path)
        #expect(encoded.screen == screen)
        #expect(encoded.query == query)
        #expect(encoded.description == screen + (query.map { "?" + $0 } ?? ""))
    }

    @Test("a path that names no screen is empty", arguments: ["", "/", "?q=1", "//?"])
    func empty(path: String) {
        #expect(ScreenPath(path).isEmpty)
    }
}
