import Foundation
import TaksiTestSupport
import Testing

@testable import TaksiServerClient

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

/// No text an app may hand the library makes a request fail to build, or trap: random strings
/// over an alphabet of what breaks URLs (spaces, `%`, `?`, `#`, braces, controls, accents,
/// emoji), each made a request whose URL keeps the text, decoded, as it was.
@Suite("Client library: any text")
struct AnyTextTests {
    static let alphabet: [Character] = Array("aZ09-._~ %?#&=+/;:@!$'()*,[]{}|\\^`\"<>\t\n\r\u{0}\u{7F}é✓😀🇵🇹ﬁ\u{301}\u{200B}")

    @Test("two thousand random paths and queries each become a URL that carries them")
    func randomText() throws {
        var generator = SplitMix64(seed: 42)
        let server = ScreenServer(baseURL: URL(string: "https://screens.example.com/base/")!, appVersion: "1.0.0")
        for _ in 0..<2000 {
            let length = Int.random(in: 0...24, using: &generator)
            let text = String((0..<length).map { _ in Self.alphabet.randomElement(using: &generator)! })
            let path = ScreenPath(text)
            let request = try server.request("screens/" + path.screen, query: path.query).get()
            let url = try #require(request.url, "\(text.debugDescription)")
            #expect(url.host == "screens.example.com")
            #expect(url.absoluteString.hasPrefix("https://screens.example.com/base/screens/"), "\(text.debugDescription)")
            // Without a `%` of its own, the path reads back as it was given.
            let name = String(text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            if !text.contains("%") {
                #expect(
                    path.screen.removingPercentEncoding == name.trimmingCharacters(in: CharacterSet(charactersIn: "/")),
                    "\(text.debugDescription)")
            }
        }
    }
}
