import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The parts of lists that continue below the data endpoint: the signed tokens, the keys that sign
/// them as the configuration gives them, an upstream's `Link` header, and a `file:` upstream's pages.
@Suite("Page tokens, keys and links")
struct PageTokenTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let token = PageToken(
        screen: "repositories", list: "results", source: "search", target: "/search/repositories?q=swift&page=2", revision: "abc",
        page: 2, expires: 2_000_000_000)

    @Test("a token reads back as made; any other key, an altered byte or its time past is refused")
    func roundTrip() {
        let tokens = PageTokens(keys: [PageTokenKey(id: "new", secret: Self.secret)])
        let text = tokens.make(Self.token)
        #expect(text.hasPrefix("1.new."))
        #expect(text.utf8.allSatisfy { $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }, "URL-safe")
        #expect(tokens.read(text, now: 1_900_000_000) == .success(Self.token))
        #expect(tokens.read(text, now: 2_000_000_000) == .failure(.expired))
        // Rotation: a new key signs, the old one still reads what it signed.
        let old = PageTokens(keys: [PageTokenKey(id: "old", secret: Array("another key of thirty-two bytes!".utf8))])
        let rotated = PageTokens(keys: [PageTokenKey(id: "new", secret: Self.secret)] + old.keys)
        #expect(rotated.read(old.make(Self.token), now: 0) == .success(Self.token))
        #expect(rotated.make(Self.token).hasPrefix("1.new."))
        #expect(tokens.read(old.make(Self.token), now: 0) == .failure(.unknownKey("old")))
        // The same id with another secret: a forgery.
        let forger = PageTokens(keys: [PageTokenKey(id: "new", secret: Array("not the server's key, 32 bytes!!".utf8))])
        guard case .failure(.invalid) = tokens.read(forger.make(Self.token), now: 0) else {
            Issue.record("a token signed with another secret was read")
            return
        }
        for text in ["", "1.new", "2.new.e30.AA", "1.new.e30.!!!", "1.n\u{0}.e30.AA"] {
            let read = tokens.read(text, now: 0)
            #expect((try? read.get()) == nil, "\(text)")
        }
    }

    @Test("page_token_keys from the file and the environment: ids, secrets from env or file, 32 bytes or more")
    func keys() throws {
        let directory = Scratch.path("page-keys")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("config.json")
        try Data(
            #"{"page_token_keys": [{"id": "2026-11", "secret": {"env": "PAGE_KEY"}}, {"id": "2026-10", "secret": {"file": "old-key"}}], "list_max_pages": 5, "page_token_lifetime": 600}"#
                .utf8
        ).write(to: file)
        let configuration = try ServerConfiguration.resolve(file: file.path, environment: [:])
        #expect(
            configuration.pageTokenKeys == [
                .init(id: "2026-11", secret: Secret(.environment("PAGE_KEY"))),
                .init(id: "2026-10", secret: Secret(.file(directory.path + "/old-key"))),
            ])
        #expect(configuration.listMaxPages == 5 && configuration.pageTokenLifetime == 600)
        try Data("0123456789abcdef0123456789abcdef\n".utf8).write(to: directory.appendingPathComponent("old-key"))
        let read = ServerConfiguration.PageTokenKeySetting.keys(
            configuration.pageTokenKeys, environment: ["PAGE_KEY": "fedcba9876543210fedcba9876543210"])
        #expect(read.problems.isEmpty)
        #expect(read.keys.map(\.id) == ["2026-11", "2026-10"])
        let short = ServerConfiguration.PageTokenKeySetting.keys(configuration.pageTokenKeys, environment: ["PAGE_KEY": "short"])
        #expect(short.problems.map(\.description).contains { $0.contains("it is 5 bytes; a key is 32 random bytes or more") })
        #expect(!short.problems.map(\.description).joined().contains("short"), "a secret is never written")
        let unset = ServerConfiguration.PageTokenKeySetting.keys(configuration.pageTokenKeys, environment: [:])
        #expect(unset.problems.map(\.description).contains { $0.contains("PAGE_KEY") })

        let environment = try ServerConfiguration.resolve(
            file: nil, environment: ["TAKSI_PAGE_TOKEN_KEYS": #"[{"id": "k1", "secret": {"env": "K1"}}]"#])
        #expect(environment.pageTokenKeys == [.init(id: "k1", secret: Secret(.environment("K1")))])
        for (text, expected) in [
            (#"[{"id": "k", "secret": "literal-secret"}]"#, "never from this file's text"),
            (#"[{"id": "a key", "secret": {"env": "K"}}]"#, "is not a key id"),
            (#"[{"id": "k", "secret": {"env": "K"}}, {"id": "k", "secret": {"env": "L"}}]"#, "two keys with id"),
            (#"[]"#, "a list of keys"),
            (#"{"id": "k"}"#, "a list of keys"),
        ] {
            #expect(throws: ConfigurationError.self, "\(text)") {
                try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_PAGE_TOKEN_KEYS": text])
            }
            do {
                _ = try ServerConfiguration.resolve(file: nil, environment: ["TAKSI_PAGE_TOKEN_KEYS": text])
            } catch {
                #expect("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    @Test("a Link header's rel=next, resolved within the upstream's origin and base path; anything else ends the list")
    func links() {
        let github =
            #"<https://api.github.com/search/repositories?q=a&page=2>; rel="next", <https://api.github.com/search/repositories?q=a&page=5>; rel="last""#
        #expect(LinkHeader.next(in: github) == "https://api.github.com/search/repositories?q=a&page=2")
        #expect(LinkHeader.next(in: #"</p/1>; rel="prev", </p/3>; rel="next""#) == "/p/3")
        #expect(LinkHeader.next(in: #"</p/3>; title="x"; rel="prefetch next""#) == "/p/3")
        #expect(LinkHeader.next(in: #"</p/1>; rel="prev""#) == nil)
        #expect(LinkHeader.next(in: "garbage") == nil)
        let url = "https://api.github.com/search/repositories?q=a"
        #expect(
            LinkHeader.target("https://api.github.com/search/repositories?q=a&page=2", from: url, base: "https://api.github.com")
                == "/search/repositories?q=a&page=2")
        #expect(LinkHeader.target("?q=a&page=2", from: url, base: "https://api.github.com") == "/search/repositories?q=a&page=2")
        #expect(LinkHeader.target("https://evil.example/search?page=2", from: url, base: "https://api.github.com") == nil)
        #expect(
            LinkHeader.target("http://api.github.com/search?page=2", from: url, base: "https://api.github.com") == nil, "another scheme")
        #expect(LinkHeader.target("/v1/items?c=2", from: "https://h/v2/items", base: "https://h/v2") == nil, "outside the base path")
        #expect(LinkHeader.target("/v2/items?c=2", from: "https://h/v2/items", base: "https://h/v2") == "/items?c=2")
        #expect(LinkHeader.fileTarget("/search/repositories?page=2") == "/search/repositories?page=2")
        #expect(LinkHeader.fileTarget("https://api.github.com/search") == nil)
        #expect(LinkHeader.fileTarget("//elsewhere/x") == nil)
    }

    @Test("a file: upstream answers a query item's own file when it has one, with the Link of its headers file")
    func filePages() throws {
        let directory = Scratch.path("file-pages")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("search"), withIntermediateDirectories: true)
        for name in ["items.json", "items.page=2.json", "items.cursor=a%2Fb.json"] {
            try Data("{}".utf8).write(to: directory.appendingPathComponent("search/\(name)"))
        }
        try Data("Link: </search/items?page=2>; rel=\"next\"\nX-Other: 1\n".utf8).write(
            to: directory.appendingPathComponent("search/items.headers"))
        let upstream = FileUpstream(directory: directory.path)
        let base = directory.path + "/search/items"
        #expect(upstream.answerFile(for: "/search/items?q=x") == base + ".json")
        #expect(upstream.answerFile(for: "/search/items?q=x&page=2") == base + ".page=2.json")
        #expect(upstream.answerFile(for: "/search/items?cursor=a%2Fb") == base + ".cursor=a%2Fb.json", "a value's / stays encoded")
        #expect(upstream.answerFile(for: "/search/items?page=..%2F..") == base + ".json")
        #expect(upstream.headers(of: base + ".json").first?.value == #"</search/items?page=2>; rel="next""#)
        #expect(upstream.headers(of: base + ".page=2.json").isEmpty)
    }
}
