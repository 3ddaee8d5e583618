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
