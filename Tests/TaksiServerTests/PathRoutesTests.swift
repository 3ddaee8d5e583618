import Foundation
import Logging
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Screens with path parameters and deep links over HTTP, on a small in-memory set.
@Suite("Path routes and deep links")
struct PathRoutesTests {
    static let files = [
        "shop.yaml": """
        name: shop/{id}
        entry: true
        parameters: {id: {type: integer}}
        sources:
          query: {type: request, parameters: {tab: {default: menu}}}
        components:
          - name: label_component
            identifier: title
            content: {value: {$template: "Shop {path.id}, {query.tab}"}}
        """,
        "shop-v2.yaml": """
        name: shop/{id}
        version: ">= 2.0"
        parameters: {id: {type: integer}}
        components:
          - name: label_component
            identifier: title
            content: {value: {$template: "Shop {path.id} (v2)"}}
        """,
        "featured.yaml": "name: shop/featured\nentry: true\ncomponents: [{name: label_component, content: {value: Featured}}]",
        "links.yaml": """
        links:
          - url: https://shop.example.com/s/{id}
            screen: shop/{id}
          - url: shop-app://open/{id}
            screen: shop/{id}
        """,
    ]

    static let screens: ScreenSet = {
        let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) })
        guard let set = load.screenSet else { preconditionFailure(load.diagnostics.report) }
        return set
    }()

    static func application(appLinks: AppLinks = AppLinks()) -> Application {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.appLinks = appLinks
        return buildApplication(configuration: configuration, screenSet: screens, logger: testLogger("test"))
    }

    let application = PathRoutesTests.application(
        appLinks: AppLinks(
            appleAppIDs: ["ABCDE12345.com.example.shop"], androidPackage: "com.example.shop",
            androidCertificateFingerprints: [Array(repeating: "AB", count: 32).joined(separator: ":")]
        )
    )

    func get(_ uri: String, _ headers: [(String, String)] = []) async throws -> (response: TestResponse, body: String, json: JSONValue?) {
        let response = try await application.execute(uri: uri, headers: headers)
        return (response, response.text, response.json)
    }

    @Test("the skeleton is the same bytes and ETag for every value; the data is per value")
    func skeletonAndData() async throws {
        let one = try await get("/screens/shop/1")
        let two = try await get("/screens/shop/2")
        #expect(one.response.status == .ok)
        #expect(one.body == two.body)
        #expect(one.response.headers["ETag"] == two.response.headers["ETag"])
        #expect(one.response.headers["X-Taksi-Variant"] == ["shop/{id}|*|default"])
        #expect(
            try await get("/screens/shop/1/data").json == [
                "interface_data": [["identifier": "title", "content": ["value": "Shop 1, menu"]]]
            ])
        #expect(
            try await get("/screens/shop/2/data?tab=reviews").json == [
                "interface_data": [["identifier": "title", "content": ["value": "Shop 2, reviews"]]]
            ])
    }

    @Test(
        "a literal name wins; trailing slashes, /interfaces and app versions work as for any screen",
        arguments: [
            ("/screens/shop/featured", [], "shop/featured|*|default"),
            ("/screens/shop/7/", [], "shop/{id}|*|default"),
            ("/interfaces/shop/7/data", [], "shop/{id}|*|default"),
            ("/screens/shop/7/data", [("X-Taksi-Version", "2.1")], "shop/{id}|>= 2.0|default"),
        ] as [(String, [(String, String)], String)]
    )
    func routing(_ uri: String, _ headers: [(String, String)], _ variant: String) async throws {
        let result = try await get(uri, headers)
        #expect(result.response.status == .ok)
        #expect(result.response.headers["X-Taksi-Variant"] == [variant])
    }

    @Test(
        "a value that fails its type is a 400 invalid_parameter for the skeleton and the data, never cached",
        arguments: ["/screens/shop/x", "/screens/shop/x/data", "/screens/shop/1.5", "/screens/shop/%ZZ/data"])
    func invalidValue(_ uri: String) async throws {
        let result = try await get(uri)
        #expect(result.response.status == .badRequest)
        #expect(result.json?["error"]?["code"] == "invalid_parameter")
        #expect(result.response.headers["Cache-Control"] == ["no-store"])
    }

    @Test("the index lists a screen's path parameters")
    func index() async throws {
        let screens = try #require(try await get("/screens").json?["screens"]?.arrayValue)
        #expect(screens.first { $0["name"] == "shop/{id}" }?["parameters"] == ["id": ["type": "integer"]])
        #expect(screens.first { $0["name"] == "shop/featured" }?["parameters"] == [:])
    }

    @Test(
        "/links/resolve answers the client's navigation action, or a JSON error with a stable code",
        arguments: [
            ("https%3A%2F%2Fshop.example.com%2Fs%2F42", 200, "shop/42"),
            ("shop-app://open/42?from=push", 200, "shop/42"),
            ("https://shop.example.com/s/not-a-number", 404, "link_not_found"),
            ("https://elsewhere.example.com/s/42", 404, "link_not_found"),
            ("no-scheme", 400, "invalid_link"),
            ("", 400, "missing_parameter"),
        ]
    )
    func resolve(_ url: String, _ status: Int, _ expected: String) async throws {
        let result = try await get("/links/resolve?url=\(url)")
        #expect(result.response.status.code == UInt(status))
        if status == 200 {
            #expect(result.body == #"{"content":{"interface_identifier":"\#(expected)"},"identifier":"navigation"}"#)
            #expect((try? JSONDecoder().decode(Action.self, from: Data(result.body.utf8))) == .navigation(interfaceIdentifier: expected))
        } else {
            #expect(result.json?["error"]?["code"] == .string(expected))
            #expect(result.response.headers["Cache-Control"] == ["no-store"])
        }
    }

    @Test("apple-app-site-association and assetlinks.json are generated from links.yaml and the configuration, as exact application/json")
    func associationFiles() async throws {
        let apple = try await get("/.well-known/apple-app-site-association")
        #expect(apple.response.status == .ok)
        #expect(apple.response.headers["Content-Type"] == ["application/json"])
        #expect(
            apple.body
                == #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/s/*","comment":"https://shop.example.com/s/{id} opens shop/{id}"}]}]}}"#
        )
        let android = try await get("/.well-known/assetlinks.json")
        #expect(android.response.headers["Content-Type"] == ["application/json"])
        let fingerprint = Array(repeating: "AB", count: 32).joined(separator: ":")
        #expect(
            android.body
                == #"[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.shop","sha256_cert_fingerprints":["\#(fingerprint)"]}}]"#
        )
    }

    @Test("without configured apps, the association files are 404 like any unknown path")
    func associationFilesOff() async throws {
        let application = Self.application()
        for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json"] {
            let response = try await application.execute(.GET, uri: path)
            #expect(response.status == .notFound)
        }
    }

    @Test("app link settings are checked when the configuration is read")
    func appLinkSettings() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["TAKSI_APPLE_APP_IDS": "ABCDE12345.com.example.a, FGHIJ67890.com.example.b"])
        #expect(configuration.appLinks.appleAppIDs == ["ABCDE12345.com.example.a", "FGHIJ67890.com.example.b"])
        #expect(throws: ConfigurationError.self) { try configuration.apply(environment: ["TAKSI_APPLE_APP_IDS": "com.example.a"]) }
        #expect(throws: ConfigurationError.self) { try configuration.apply(environment: ["TAKSI_ANDROID_CERT_FINGERPRINTS": "AB:CD"]) }
        #expect(throws: ConfigurationError.self) { try configuration.apply(environment: ["TAKSI_ANDROID_PACKAGE": "eats"]) }
    }
}
