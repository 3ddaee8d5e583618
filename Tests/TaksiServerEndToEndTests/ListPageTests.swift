import Foundation
import NIOCore
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Lists that continue, over real sockets against a real upstream on loopback: each page's token
/// made by the server from the upstream's answer and refused when it is not the server's own, the
/// pages of one list from the revision it was shown in.
@Suite("Lists that continue over a socket")
struct ListPageTests {
    /// The key the servers sign with, given as `page_token_keys` does: from the environment.
    static let secret = "a-page-token-key-of-32-bytes-or-more-for-tests"
    static let environment = ["TAKSI_TEST_PAGE_KEY": secret]

    /// `feed` (cursor pages of `/reviews` on the upstream `api`, shown in `list`) and `other` (the
    /// same pages, in a list of its own: another screen's tokens).
    static let feed = """
        name: feed
        entry: true
        sources:
          reviews:
            type: http
            upstream: api
            path: /reviews
            query: {limit: 2}
            pages: {kind: cursor, items: items, cursor: next, parameter: after}
        components:
          - {name: label_component, identifier: title, content: {value: Reviews}}
          - name: collection_component
            identifier: list
            content:
              component_name: label_component
              values: {$each: reviews.items, as: review, template: {value: {$template: "{review.text}"}}}
        """
    static let other = feed.replacingOccurrences(of: "name: feed", with: "name: other").replacingOccurrences(
        of: "identifier: list", with: "identifier: others")

    static func page(_ texts: [String], next: String?) -> String {
        let items = texts.map { #"{"text": "\#($0)"}"# }.joined(separator: ", ")
        return #"{"items": [\#(items)], "next": \#(next.map { "\"\($0)\"" } ?? "null")}"#
    }

    /// Three pages: 2, 2 and 1 item.
    static func serve(_ upstream: TestUpstream) {
        upstream.on("/reviews?limit=2", .json(page(["a", "b"], next: "c2")))
        upstream.on("/reviews?limit=2&after=c2", .json(page(["c", "d"], next: "c3")))
        upstream.on("/reviews?limit=2&after=c3", .json(page(["e"], next: nil)))
    }

    static func makeApplication(
        upstream: TestUpstream, files: [String: String] = ["feed.yaml": feed, "other.yaml": other], maxPages: Int = 20
    )
        throws -> (Application, URL)
    {
        let directory = Scratch.path("pages")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        var configuration = ServerConfiguration.forTests()
        configuration.screensDirectory = directory.path
        configuration.watch = false
        configuration.upstreams = ["api": upstream.baseURL]
        configuration.pageTokenKeys = [.init(id: "test", secret: Secret(.environment("TAKSI_TEST_PAGE_KEY")))]
        configuration.listMaxPages = maxPages
        return (
            try buildApplication(configuration: configuration, logger: testLogger("pages"), environment: Self.environment), directory
        )
    }

    /// The texts of a data response's list, and its `pages` entry for it.
    static func list(_ response: TestResponse, _ identifier: String = "list") -> (texts: [String], next: String?, token: String?) {
        let entry = response.json?["interface_data"]?.arrayValue?.first { $0["identifier"]?.stringValue == identifier }
        let texts = entry?["content"]?["values"]?.arrayValue?.compactMap { $0["value"]?.stringValue } ?? []
        let page = response.json?["pages"]?[identifier]
        return (texts, page?["next"]?.stringValue, page?["token"]?.stringValue)
    }

    @Test("a cursor-paged list continues page by page, each page one upstream call with the server's cursor, the last without a token")
    func continues() async throws {
        let upstream = try await TestUpstream()
        Self.serve(upstream)
        let (application, _) = try Self.makeApplication(upstream: upstream)
        try await application.test(.live) { client in
            let first = try await client.execute(uri: "/screens/feed/data")
            #expect(first.status == .ok)
            let one = Self.list(first)
            #expect(one.texts == ["a", "b"])
            #expect(first.json?["pages"]?["list"]?["field"] == "values")
            let next = try #require(one.next)
            #expect(next.hasPrefix("/screens/feed/data?only=list&page=1.test."), "\(next)")
            let second = try await client.execute(uri: next)
            #expect(second.status == .ok)
            #expect(second.json?["interface_data"]?.arrayValue?.map { $0["identifier"] } == ["list"], "only the list")
            let two = Self.list(second)
            #expect(two.texts == ["c", "d"])
            let third = try await client.execute(uri: try #require(two.next))
            #expect(Self.list(third).texts == ["e"])
            #expect(third.json?["pages"] == nil, "the last page gives no token")
            #expect(upstream.requests.map(\.uri) == ["/reviews?limit=2", "/reviews?limit=2&after=c2", "/reviews?limit=2&after=c3"])
            // The same page again is the cache's (keyed by the upstream request), not a second call.
            #expect(try await client.execute(uri: next).status == .ok)
            #expect(upstream.requests.count == 3)
        }
        try await upstream.stop()
    }

    @Test("a forged, tampered, expired, foreign or unknown key's token gets 400 with its code, and the upstream sees no call")
    func refused() async throws {
        let upstream = try await TestUpstream()
        Self.serve(upstream)
        let (application, _) = try Self.makeApplication(upstream: upstream)
        try await application.test(.live) { client in
            let token = try #require(Self.list(try await client.execute(uri: "/screens/feed/data")).token)
            let othersToken = try #require(Self.list(try await client.execute(uri: "/screens/other/data"), "others").token)
            let calls = upstream.requests.count
            let parts = token.split(separator: ".").map(String.init)
            // The payload with one character changed: still base64url, no longer what was signed.
            var payload = Array(parts[2])
            payload[4] = payload[4] == "A" ? "B" : "A"
            let tampered = [parts[0], parts[1], String(payload), parts[3]].joined(separator: ".")
            let keys = [PageTokenKey(id: "test", secret: Array(Self.secret.utf8))]
            let expired = PageTokens(keys: keys).make(
                PageToken(
                    screen: "feed", list: "list", source: "reviews", target: "/reviews?limit=2&after=c2", revision: "x", page: 2,
                    expires: Int(Date().timeIntervalSince1970) - 1))
            let elsewhere = PageTokens(keys: [PageTokenKey(id: "other", secret: Array(Self.secret.utf8))]).make(
                PageToken(
                    screen: "feed", list: "list", source: "reviews", target: "/admin", revision: "x", page: 2,
                    expires: Int(Date().timeIntervalSince1970) + 600))
            let cases: [(String, String, String)] = [
                ("forged", "1.test.e30.AAAA", "invalid_page_token"),
                ("not a token", "next-please", "invalid_page_token"),
                ("tampered", tampered, "invalid_page_token"),
                ("expired", expired, "page_token_expired"),
                ("another deployment's key", elsewhere, "invalid_page_token"),
                ("another screen's", othersToken, "foreign_page_token"),
            ]
            for (name, text, code) in cases {
                let response = try await client.execute(uri: "/screens/feed/data?page=\(text)")
                #expect(response.status == .badRequest, "\(name)")
                #expect(response.json?["error"]?["code"]?.stringValue == code, "\(name): \(response.text)")
                #expect(response.header("Cache-Control")?.contains("no-store") == true, "\(name): errors are never cached")
            }
            // The right token for another list than ?only= names.
            let mismatched = try await client.execute(uri: "/screens/feed/data?only=title&page=\(token)")
            #expect(mismatched.json?["error"]?["code"] == "foreign_page_token")
            #expect(upstream.requests.count == calls, "nothing called for a refused token")
            let metrics = try await client.execute(uri: "/metrics").text
            #expect(metrics.contains(#"taksi_list_pages_total{result="invalid"} 4"#), "\(metrics)")
            #expect(metrics.contains(#"taksi_list_pages_total{result="expired"} 1"#))
            #expect(metrics.contains(#"taksi_list_pages_total{result="foreign"} 2"#))
            #expect(metrics.contains(#"taksi_list_pages_total{result="served"} 0"#))
            // The token itself is still good.
            #expect(try await client.execute(uri: "/screens/feed/data?page=\(token)").status == .ok)
        }
        try await upstream.stop()
    }

    @Test("a publish between pages: the next page comes from the revision the list was shown in, and a new load from the new one")
    func publishBetweenPages() async throws {
        let upstream = try await TestUpstream()
        Self.serve(upstream)
        let (application, directory) = try Self.makeApplication(upstream: upstream)
        try await application.test(.live) { client in
            let skeleton = try await client.execute(uri: "/screens/feed")
            let held = try #require(skeleton.header("X-Taksi-Skeleton"))
            let first = try await client.execute(uri: "/screens/feed/data", headers: [("X-Taksi-Skeleton", held)])
            let next = try #require(Self.list(first).next)
            // A component more (a new skeleton revision), and the list's items written otherwise.
            let edited = Self.feed.replacingOccurrences(
                of: #"{value: {$template: "{review.text}"}}"#, with: #"{value: {$template: "New: {review.text}"}, kind: title}"#
            ).replacingOccurrences(
                of: "components:\n", with: "components:\n  - {name: label_component, identifier: note, content: {value: Newest first}}\n")
            try Data(edited.utf8).write(to: directory.appendingPathComponent("feed.yaml"), options: .atomic)
            #expect(application.watcher?.reload() == true)
            let current = try #require(try await client.execute(uri: "/screens/feed").header("X-Taksi-Skeleton"))
            #expect(current != held)
            // The app asks as it holds the old skeleton; with no header at all, the token still says which.
            for headers in [[("X-Taksi-Skeleton", held)], []] {
                let second = try await client.execute(uri: next, headers: headers)
                #expect(second.status == .ok)
                #expect(second.header("X-Taksi-Skeleton") == held)
                #expect(Self.list(second).texts == ["c", "d"], "the old template: \(second.text)")
            }
            let fresh = try await client.execute(uri: "/screens/feed/data")
            #expect(Self.list(fresh).texts == ["New: a", "New: b"])
            let newNext = try await client.execute(uri: try #require(Self.list(fresh).next))
            #expect(Self.list(newNext).texts == ["New: c", "New: d"])
        }
        try await upstream.stop()
    }

    @Test(
        "two paths of one pattern whose list reads the same upstream each get tokens for their own path (the data kept for one is not the other's)"
    )
    func pathsOfOnePattern() async throws {
        let upstream = try await TestUpstream()
        Self.serve(upstream)
        let tabbed = Self.feed.replacingOccurrences(of: "name: feed\n", with: "name: feed/{tab}\nparameters: {tab: {type: string}}\n")
        let (application, _) = try Self.makeApplication(upstream: upstream, files: ["feed.yaml": tabbed])
        try await application.test(.live) { client in
            for tab in ["new", "top", "new"] {
                let first = try await client.execute(uri: "/screens/feed/\(tab)/data")
                let next = try #require(Self.list(first).next)
                #expect(next.hasPrefix("/screens/feed/\(tab)/data?only=list&page="), "\(next)")
                let second = try await client.execute(uri: next)
                #expect(second.status == .ok, "\(tab): \(second.text)")
                #expect(Self.list(second).texts == ["c", "d"])
            }
            #expect(upstream.requests.count == 2, "one call per page, whatever the path")
        }
        try await upstream.stop()
    }

    @Test("list_max_pages bounds a list: its last page carries no token")
    func boundedPages() async throws {
        let upstream = try await TestUpstream()
        Self.serve(upstream)
        let (application, _) = try Self.makeApplication(upstream: upstream, maxPages: 2)
        try await application.test(.live) { client in
            let first = try await client.execute(uri: "/screens/feed/data")
            let second = try await client.execute(uri: try #require(Self.list(first).next))
            #expect(Self.list(second).texts == ["c", "d"])
            #expect(second.json?["pages"] == nil)
        }
        try await upstream.stop()
    }

    @Test("a Link header's next page is followed within the upstream, and one leading to another origin ends the list")
    func linkPages() async throws {
        let upstream = try await TestUpstream()
        let screen = Self.feed.replacingOccurrences(
            of: "pages: {kind: cursor, items: items, cursor: next, parameter: after}", with: "pages: {kind: link, items: items}")
        upstream.on(
            "/reviews?limit=2",
            .jsonWithHeaders(
                Self.page(["a", "b"], next: nil),
                headers: [
                    (
                        "Link",
                        #"<\#(upstream.baseURL)/reviews?limit=2&p=2>; rel="next", <\#(upstream.baseURL)/reviews?limit=2&p=9>; rel="last""#
                    )
                ]))
        upstream.on(
            "/reviews?limit=2&p=2",
            .jsonWithHeaders(Self.page(["c"], next: nil), headers: [("Link", #"<https://elsewhere.example/reviews?p=3>; rel="next""#)]))
        let (application, _) = try Self.makeApplication(upstream: upstream, files: ["feed.yaml": screen])
        try await application.test(.live) { client in
            let first = try await client.execute(uri: "/screens/feed/data")
            #expect(Self.list(first).texts == ["a", "b"])
            let second = try await client.execute(uri: try #require(Self.list(first).next))
            #expect(Self.list(second).texts == ["c"])
            #expect(second.json?["pages"] == nil, "a next page on another origin is never asked for")
            #expect(upstream.requests.map(\.uri) == ["/reviews?limit=2", "/reviews?limit=2&p=2"])
        }
        try await upstream.stop()
    }
}
