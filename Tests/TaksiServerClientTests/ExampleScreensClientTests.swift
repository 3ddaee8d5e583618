import Foundation
import TaksiServerClient
import TaksiTestSupport
import Testing

/// The app side's library against `taksi-server` on the example project, over real sockets:
/// every screen in every variant, and every screen their lists and buttons open, load whole;
/// the example deep links resolve. Like ExampleFlowTests, a test of the examples themselves.
@Suite("Client library: the example screens")
struct ExampleScreensClientTests {
    /// Queries the example screens need for their data (a required parameter).
    static let queries = ["repositories": "q=swift"]

    /// Every navigation target in a body: `"interface_identifier": "..."`.
    static func targets(in body: Data) -> [String] {
        var found: [String] = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if let target = object["interface_identifier"] as? String { found.append(target) }
                object.values.forEach(walk)
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        if let json = try? JSONSerialization.jsonObject(with: body) { walk(json) }
        return found
    }

    @Test("every screen in every variant loads whole, and so does every screen they open")
    func everyScreenAndVariant() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let (body, _) = try await httpGet(replica.url.appendingPathComponent("readyz"))
        let revisions = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["revisions"] as? [String: String])
        var opened: Set<String> = []
        var targets: [String] = []
        for (variant, revision) in revisions.sorted(by: { $0.key < $1.key }) {
            // "home|>= 2.0|default": a screen, its app versions and its alternative.
            let parts = variant.split(separator: "|").map(String.init)
            guard parts.count == 3, !parts[0].contains("{") else { continue }  // templates: opened from a list
            let version = parts[1].hasPrefix(">=") ? parts[1].dropFirst(2).trimmingCharacters(in: .whitespaces) + ".0" : "1.0.0"
            let server = client(replica.url, alternative: parts[2] == "default" ? nil : parts[2], version: version)
            let path = Self.queries[parts[0]].map { "\(parts[0])?\($0)" } ?? parts[0]
            let screen = try await server.load(path).get()
            #expect(screen.revision == revision, "\(variant)")
            #expect(screen.passes == 1, "\(variant)")
            #expect(screen.degraded.isEmpty, "\(variant): \(screen.degraded)")
            let data = try screen.data.get()
            #expect(screen.identifiers.count > 0, "\(variant)")
            targets += Self.targets(in: screen.skeleton) + Self.targets(in: data)
            opened.insert(parts[0])
        }
        // What the lists and buttons open, as the app opens them: the target as sent.
        let server = client(replica.url)
        while let target = targets.popLast() {
            guard opened.insert(target).inserted, opened.count < 80 else { continue }
            let screen = try await server.load(target).get()
            #expect(screen.degraded.isEmpty, "\(target): \(screen.degraded)")
            targets += Self.targets(in: screen.skeleton) + Self.targets(in: try screen.data.get())
        }
        #expect(opened.contains { $0.hasPrefix("bikes/stations/") } && opened.contains { $0.hasPrefix("repositories/") })
        #expect(opened.contains { $0.hasPrefix("restaurants/") })
    }

    /// The texts of a list in a screen's data: each item's `field`.
    static func items(_ list: String, of screen: LoadedScreen, field: String) throws -> [String] {
        let data = try JSONSerialization.jsonObject(with: try screen.data.get()) as? [String: Any]
        let entry = (data?["interface_data"] as? [[String: Any]])?.first { $0["identifier"] as? String == list }
        return ((entry?["content"] as? [String: Any])?["values"] as? [[String: Any]] ?? []).compactMap { $0[field] as? String }
    }

    @Test("the search results grow 30 -> 60 -> 90 through the library and stop; the reviews grow by cursor; a failed page leaves the list")
    func listsThatContinue() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url)
        var screen = try await server.load("repositories?q=swift").get()
        #expect(try Self.items("results", of: screen, field: "full_name").count == 30)
        #expect(screen.hasMore("results") && screen.listsWithMore == ["results"])
        var counts: [Int] = []
        while screen.hasMore("results") {
            let page = try await server.loadMore("results", on: screen).get()
            #expect(page.added == 30)
            screen = page.screen
            counts.append(try Self.items("results", of: screen, field: "full_name").count)
            // The patch for the client: the list's one entry, with every item so far.
            let patch = try #require(try JSONSerialization.jsonObject(with: page.patch) as? [String: Any])
            let entries = try #require(patch["interface_data"] as? [[String: Any]])
            #expect(entries.map { $0["identifier"] as? String } == ["results"])
            #expect(((entries.first?["content"] as? [String: Any])?["values"] as? [Any])?.count == counts.last)
            #expect(page.hasMore == (counts.count < 2))
        }
        #expect(counts == [60, 90])
        let names = try Self.items("results", of: screen, field: "full_name")
        #expect(Set(names).count == 90, "no page twice")
        #expect(names.first == "apple/swift-nio" && names.last == "example/swift-networking-90")
        // The whole data keeps its other entries, and says the list has no more.
        let whole = try #require(try JSONSerialization.jsonObject(with: try screen.data.get()) as? [String: Any])
        #expect((whole["interface_data"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String }.sorted() == ["results", "total"])
        #expect(whole["pages"] == nil && screen.listsWithMore.isEmpty)
        guard case .failure(.invalidRequest(let reason)) = await server.loadMore("results", on: screen) else {
            Issue.record("a list with no more pages loaded more")
            return
        }
        #expect(reason.contains("has no more pages"))

        var reviews = try await server.load("restaurants/la-table/reviews").get()
        var shown = [try Self.items("reviews", of: reviews, field: "value").count]
        while reviews.hasMore("reviews") {
            reviews = try await server.loadMore("reviews", on: reviews).get().screen
            shown.append(try Self.items("reviews", of: reviews, field: "value").count)
        }
        #expect(shown == [3, 6, 7])
        #expect(try Self.items("reviews", of: reviews, field: "value").last?.contains("Tomás") == true)

        // A page the upstream cannot give (its Link leads to a path with no file: a 404): the list
        // as it was, and why. Another query, so its first page is not the cache's.
        try Data(#"Link: </search/gone?page=2>; rel="next""#.utf8).write(
            to: replica.directory.appendingPathComponent("upstreams/github/search/repositories.headers"))
        let fresh = try await server.load("repositories?q=swift nio").get()
        let failed = await server.loadMore("results", on: fresh)
        guard case .failure(.status(200, "page_unavailable", let message?)) = failed else {
            Issue.record("a failed page: \(failed)")
            return
        }
        #expect(message.contains("search failed"), "\(message)")
        #expect(try Self.items("results", of: fresh, field: "full_name").count == 30)
    }

    @Test("the example deep links resolve to the screen they name, and one it does not know is link_not_found")
    func deepLinks() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url)
        let link = try await server.resolve(URL(string: "https://eats.example.com/bikes/velib")!).get()
        #expect(link.screen == "bikes/stations/velib")
        #expect(String(decoding: link.action, as: UTF8.self).contains("\"navigation\""))
        let opened = try await server.load(try #require(link.screen)).get()
        #expect(opened.degraded.isEmpty)
        #expect(await server.resolve(URL(string: "https://eats.example.com/nowhere?x=a+b&y=%20")!).failureCode == "link_not_found")
    }
}
