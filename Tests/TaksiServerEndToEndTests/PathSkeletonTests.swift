import CompressNIO
import Foundation
import Logging
import NIOCore
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Static fields built from a screen's path (a detail screen's button opening its own
/// sub-screen): each URL's skeleton, over a real socket, with the validators, gzip form and memory
/// bound of a kept data response, decoded as the client decodes it.
@Suite("Skeletons per URL")
struct PathSkeletonTests {
    /// A long description, so the skeleton is worth a gzip form.
    static let blurb = String(repeating: "Made to order, shipped in a week. ", count: 20)

    static let files = [
        "product.yaml": """
        name: products/{id}
        parameters:
          id: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
        components:
          - {name: label_component, identifier: blurb, content: {value: "\(blurb)"}}
          - name: button_component
            identifier: review
            content:
              title: {$template: "Review {path.id}"}
              action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.id}/review"}}}
        """,
        "review.yaml": """
        name: products/{id}/review
        parameters:
          id: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
        components:
          - name: button_component
            identifier: back
            content: {title: Back, action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.id}"}}}}
        """,
        // A path value that fits every parameter and still cannot make the target: the runtime check.
        "tag.yaml": """
        name: tags/{tag}/first
        entry: true
        parameters:
          tag: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
        components:
          - name: button_component
            identifier: first
            content: {title: First, action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.tag}"}}}}
        """,
    ]

    static func application(memoBytes: Int = 16 << 20) throws -> Application {
        let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) })
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        var configuration = ServerConfiguration.forTests()
        configuration.dataMemoMaxBytes = memoBytes
        return buildApplication(configuration: configuration, screenSet: set, logger: testLogger("test"))
    }

    @Test("each URL gets its own skeleton: its target and title from its path, its ETag, 304 and gzip; the shape's revision is one")
    func perURL() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            let grinder = try #require(await connection.request("/screens/products/grinder"))
            #expect(grinder.status == 200)
            let skeleton = try JSONDecoder().decode(Skeleton.self, from: Data(grinder.bytes))
            let button = try #require(skeleton.components.first { $0.identifier == "review" })
            #expect(button.content["title"] == "Review grinder")
            #expect(
                button.content["action"] == ["identifier": "navigation", "content": ["interface_identifier": "products/grinder/review"]])
            #expect(!button.requiresData)
            #expect(grinder.header("Cache-Control")?.hasPrefix("public") == true, "the path value is in the URL, so caches keep them apart")

            let kettle = try #require(await connection.request("/screens/products/kettle"))
            #expect(kettle.body.contains("products/kettle/review"))
            #expect(kettle.header("X-Taksi-Skeleton") == grinder.header("X-Taksi-Skeleton"), "one shape, one revision: data fits both")
            let etag = try #require(grinder.header("ETag"))
            #expect(kettle.header("ETag") != etag)

            let revalidated = try #require(await connection.request("/screens/products/grinder", headers: [("If-None-Match", etag)]))
            #expect(revalidated.status == 304)
            #expect(revalidated.header("ETag") == etag)

            // Kept the second time it is asked for, then served in gzip to clients that take it.
            let gzipped = try #require(await connection.request("/screens/products/grinder", headers: [("Accept-Encoding", "gzip")]))
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.header("Vary")?.contains("Accept-Encoding") == true)
            var compressed = ByteBuffer(bytes: gzipped.bytes)
            #expect(try compressed.decompress(with: .gzip()) == ByteBuffer(bytes: grinder.bytes))
            #expect(gzipped.header("ETag") == String(etag.dropLast()) + "-gzip\"")

            // The sub-screen's own path makes its way back.
            let review = try #require(await connection.request("/screens/products/grinder/review"))
            #expect(review.body.contains(#""interface_identifier":"products/grinder""#))
        }
    }

    @Test("a path value the target screen does not take is a 400 with a JSON error, never a broken link")
    func valueThatCannotOpenTheTarget() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            // "data" fits {tag}, but as the last segment of products/{id} it would name the data endpoint.
            let response = try #require(await connection.request("/screens/tags/data/first"))
            #expect(response.status == 400)
            #expect(response.json?["error"]?["code"] == "invalid_parameter")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.body.contains(#"action of component \"first\""#), "\(response.body)")
            #expect(try #require(await connection.request("/screens/tags/sale/first")).status == 200)
        }
    }

    @Test("the skeletons kept per URL stay within the memo's bytes, however many URLs are asked for")
    func bounded() async throws {
        let limit = 128 << 10
        let application = try Self.application(memoBytes: limit)
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            for index in 0..<300 {
                for _ in 0..<2 {
                    let response = try #require(await connection.request("/screens/products/item-\(index)"))
                    #expect(response.status == 200)
                }
            }
            #expect(application.memo.size.cost <= limit)
            #expect(application.memo.size.entries > 0)
        }
    }
}
