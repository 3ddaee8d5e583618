import Foundation
import Logging
import MetricsTestKit
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Versions, alternatives and experiments over HTTP, on the fixture screens: `home` is served in
/// two app versions, `landing` runs an experiment over two alternatives.
@Suite("Variant routes")
struct VariantRoutesTests {
    let metrics = TestMetrics()
    let application: Application

    init() {
        var configuration = ServerConfiguration()
        configuration.port = 0
        application = buildApplication(
            configuration: configuration, screenSet: fixtureScreens, logger: testLogger("test"), metrics: metrics)
    }

    @Test("two app versions of home are served by header or query, and the variant is named")
    func versions() async throws {
        let classic = try await application.execute(uri: "/screens/home")
        #expect(classic.headers["X-Taksi-Variant"] == ["home|*|default"])
        // Accept-Encoding too: the skeleton has a gzip form.
        #expect(classic.headers["Vary"] == ["X-Taksi-Version, Accept-Encoding"])
        let cards = try await application.execute(uri: "/screens/home", headers: [("X-Taksi-Version", "2.4.1")])
        #expect(cards.headers["X-Taksi-Variant"] == ["home|>= 2.0|default"])
        #expect(cards.json?["components"]?.arrayValue?[2]["content"]?["component_name"] == "restaurant_component")
        #expect(classic.json?["components"]?.arrayValue?[2]["content"]?["component_name"] == "label_component")
        #expect(try await application.execute(uri: "/screens/home?version=2.0").headers["X-Taksi-Variant"] == ["home|>= 2.0|default"])
        #expect(
            try await application.execute(uri: "/screens/home", headers: [("X-Taksi-Version", "1.9")]).headers["X-Taksi-Variant"] == [
                "home|*|default"
            ])
    }

    @Test("an explicit alternative, then the experiment by user, then the default")
    func alternatives() async throws {
        #expect(try await application.execute(uri: "/screens/landing").headers["X-Taksi-Variant"] == ["landing|*|default"])
        #expect(
            try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-Alternative", "compact")]).headers["X-Taksi-Variant"]
                == [
                    "landing|*|compact"
                ])
        #expect(
            try await application.execute(uri: "/screens/landing").headers["Vary"] == ["X-Taksi-Alternative, X-Taksi-User, Accept-Encoding"]
        )
        // Pinned: bob and alice land on different sides of the landing-call-to-action experiment.
        #expect(
            try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-User", "alice")]).headers["X-Taksi-Variant"] == [
                "landing|*|compact"
            ])
        #expect(
            try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-User", "bob")]).headers["X-Taksi-Variant"] == [
                "landing|*|default"
            ])
        #expect(try await application.execute(uri: "/screens/login").headers["Vary"] == ["Accept-Encoding"])
    }

    @Test("skeleton and data with the same headers always name the same variant")
    func skeletonAndDataAgree() async throws {
        let headerSets: [[(String, String)]] =
            (0..<200).map { [("X-Taksi-User", "user-\($0)")] }
            + [[], [("X-Taksi-Version", "2.0")], [("X-Taksi-Version", "1.0")], [("X-Taksi-Alternative", "compact")]]
        for name in ["home", "landing", "login"] {
            for headers in headerSets {
                let skeleton = try await application.execute(uri: "/screens/\(name)", headers: headers)
                let data = try await application.execute(uri: "/screens/\(name)/data", headers: headers)
                #expect(skeleton.headers["X-Taksi-Variant"] == data.headers["X-Taksi-Variant"])
                // Both vary on what chose the variant; a body with a gzip form also varies on
                // Accept-Encoding, and data on the skeleton it is for.
                let chosenBy = { (response: TestResponse) in
                    response.headers["Vary"].first?.split(separator: ", ").filter { $0 != "Accept-Encoding" && $0 != "X-Taksi-Skeleton" }
                        ?? []
                }
                #expect(chosenBy(skeleton) == chosenBy(data))
                if data.status == .ok { #expect(data.headers["Vary"].first?.contains("X-Taksi-Skeleton") == true, "\(name) \(headers)") }
                #expect(skeleton.headers["X-Taksi-Skeleton"] == data.headers["X-Taksi-Skeleton"])
            }
        }
    }

    @Test("users keep their assignment across a restart")
    func restart() async throws {
        let load = ScreenSetLoader.load(directory: fixtureScreensDirectory.path)
        let restarted = buildApplication(
            configuration: ServerConfiguration(), screenSet: try #require(load.screenSet), logger: testLogger("restarted")
        )
        var counts: [String: Int] = [:]
        for user in 0..<1_000 {
            let headers = [("X-Taksi-User", "user-\(user)")]
            let before = try await application.execute(uri: "/screens/landing", headers: headers).headers["X-Taksi-Variant"]
            let after = try await restarted.execute(uri: "/screens/landing", headers: headers).headers["X-Taksi-Variant"]
            #expect(before == after)
            counts[before.first ?? "", default: 0] += 1
        }
        #expect(abs((counts["landing|*|compact"] ?? 0) - 500) < 50, "\(counts)")
    }

    @Test("no variant for the request: a 404 that says what exists")
    func notFound() async throws {
        let load = ScreenSetLoader.load(files: [
            "new.json": Array(#"{"name": "news", "version": ">= 3.0", "components": []}"#.utf8)
        ])
        let application = buildApplication(
            configuration: ServerConfiguration(), screenSet: try #require(load.screenSet), logger: .init(label: "t")
        )
        func body(_ uri: String, _ headers: [(String, String)]) async throws -> (HTTPResponseStatus, JSONValue?) {
            let response = try await application.execute(uri: uri, headers: headers)
            return (response.status, response.json)
        }
        let old = try await body("/screens/news", [("X-Taksi-Version", "2.9")])
        #expect(old.0 == .notFound)
        #expect(
            old.1 == [
                "error": [
                    "code": "screen_version_not_found",
                    "message": #"screen "news" has no variant for app version 2.9; it is served to versions >= 3.0"#,
                ]
            ])
        let none = try await body("/screens/news/data", [])
        #expect(
            none.1?["error"]?["message"]
                == #"screen "news" is only served to app versions >= 3.0; send the app's version in X-Taksi-Version (or ?version=)"#)
        // A forced alternative the screen lacks (a QA build forcing B everywhere) gets the default.
        let forced = try await application.execute(
            .GET, uri: "/screens/news", headers: HTTPHeaders([("X-Taksi-Version", "3.1"), ("X-Taksi-Alternative", "B")]))
        #expect(forced.status == .ok)
        #expect(forced.headers["X-Taksi-Variant"] == ["news|>= 3.0|default"])
        let invalid = try await body("/screens/news", [("X-Taksi-Version", "latest")])
        #expect(invalid.0 == .badRequest)
        #expect(invalid.1?["error"]?["code"] == "invalid_version")
        #expect(try await application.execute(.GET, uri: "/screens/news", headers: [:]).headers["Vary"] == ["X-Taksi-Version"])
        // Semantic Versioning forms are app versions too; a pre-release is before its release.
        for accepted in ["3.1-beta.2", "3.0.0+45", "v3.1"] {
            #expect(try await body("/screens/news", [("X-Taksi-Version", accepted)]).0 == .ok, "\(accepted)")
        }
        #expect(try await body("/screens/news?version=3.0-rc.1", []).1?["error"]?["code"] == "screen_version_not_found")
    }

    @Test("every served variant is counted, skeletons and data apart")
    func counted() async throws {
        for user in ["alice", "bob", "carol"] {
            _ = try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-User", user)])
        }
        _ = try await application.execute(uri: "/screens/landing/data", headers: [("X-Taksi-User", "alice")])
        let compact = try metrics.expectCounter("taksi_variant_skeletons_total", [("screen", "landing"), ("variant", "landing|*|compact")])
        let standard = try metrics.expectCounter(
            "taksi_variant_skeletons_total", [("screen", "landing"), ("variant", "landing|*|default")])
        #expect(compact.totalValue == 1 && standard.totalValue == 2)
        #expect(
            try metrics.expectCounter("taksi_variant_data_total", [("screen", "landing"), ("variant", "landing|*|compact")]).totalValue == 1
        )
    }
}
