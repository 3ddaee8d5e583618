import Foundation
import Logging
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// The examples' app flows, end to end over a real socket with the repository's own
/// `config.json` (offline upstreams): every row of a list opens its detail, whose skeleton and
/// data follow the protocol; the example deep links resolve to the same targets. Like
/// `ExampleScreensTests`, this is the examples' own test: no other server test reads `Screens/`.
@Suite("Example flows")
struct ExampleFlowTests {
    static func application() throws -> Application {
        var configuration = try ServerConfiguration.resolve(
            file: repositoryRoot.appendingPathComponent("config.json").path, environment: [:])
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        configuration.watch = false
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        return buildApplication(configuration: configuration, screenSet: set, logger: testLogger("test"))
    }

    /// GET over the connection; the response must be a 200. Read off the cooperative pool, where
    /// the upstream calls of data requests run.
    static func get(_ connection: RawConnection, _ path: String, version: String) async throws -> RawResponse {
        let response = try #require(await connection.request(path, headers: [("X-Taksi-Version", version)]))
        #expect(response.status == 200, "\(path): \(response.status) \(response.body)")
        return response
    }

    /// The navigation targets in a data response's collection items.
    static func targets(in data: JSONValue?) -> [String] {
        (data?["interface_data"]?.arrayValue ?? []).flatMap { entry in
            (entry["content"]?["values"]?.arrayValue ?? []).compactMap { $0["action"]?["content"]?["interface_identifier"]?.stringValue }
        }
    }

    /// Opens a target as the app does (`/screens/<target>` and the same plus `/data`) and checks
    /// both payloads: the client's decoding, data entries only for dynamic components, no degraded source.
    static func follow(_ target: String, on connection: RawConnection, version: String) async throws {
        let skeletonResponse = try await get(connection, "/screens/\(target)", version: version)
        let skeleton = try JSONDecoder().decode(Skeleton.self, from: Data(skeletonResponse.body.utf8))
        let dataResponse = try await get(connection, "/screens/\(target)/data", version: version)
        let data = try JSONDecoder().decode(InterfaceData.self, from: Data(dataResponse.body.utf8))
        let dynamic = Set(skeleton.components.filter(\.requiresData).map(\.identifier))
        #expect(!data.entries.isEmpty, "\(target) has no data")
        #expect(Set(data.entries.map(\.identifier)).isSubset(of: dynamic), "\(target)")
        #expect(dataResponse.header("X-Taksi-Degraded") == nil, "\(target): \(dataResponse.header("X-Taksi-Degraded") ?? "")")
    }

    @Test(
        "every row of the example lists opens a detail screen that answers, skeleton and data",
        arguments: [
            ("/screens/bikes/networks/data", "1.0", "bikes/stations/", 6),
            ("/screens/repositories/data?q=swift", "1.0", "repositories/", 30),
            ("/screens/home/data?name=Ada", "2.1", "restaurants/", 4),
        ]
    )
    func listToDetail(_ list: String, _ version: String, _ prefix: String, _ count: Int) async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            let targets = Self.targets(in: try await Self.get(connection, list, version: version).json)
            #expect(targets.count == count, "\(targets)")
            for target in targets {
                #expect(target.hasPrefix(prefix))
                try await Self.follow(target, on: connection, version: version)
            }
        }
    }

    @Test("an unknown restaurant answers the screen's declared empty state: a 200, nothing degraded, the patch's text")
    func unknownRestaurant() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            let response = try await Self.get(connection, "/screens/restaurants/no-such-place/data", version: "2.1")
            #expect(response.header("X-Taksi-Degraded") == nil)
            #expect(response.header("Cache-Control") == "private, max-age=30")
            let data = try JSONDecoder().decode(InterfaceData.self, from: Data(response.body.utf8))
            #expect(data.entries.map(\.identifier) == ["name", "cuisine", "rating", "badge", "address", "dishes"])
            #expect(Self.labels(response)["name"] == "This restaurant is not on Eats any more")
        }
    }

    @Test("each restaurant's skeleton opens its own reviews, whose dates are written the locale's way, and whose back button returns")
    func restaurantReviews() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            for id in ["la-table", "sakura-ramen"] {
                let response = try await Self.get(connection, "/screens/restaurants/\(id)", version: "2.1")
                let skeleton = try JSONDecoder().decode(Skeleton.self, from: Data(response.body.utf8))
                let button = try #require(skeleton.components.first { $0.identifier == "reviews" })
                let target = try #require(button.content["action"]?["content"]?["interface_identifier"]?.stringValue)
                #expect(target == "restaurants/\(id)/reviews")
                try await Self.follow(target, on: connection, version: "2.1")
                let reviews = try await Self.get(connection, "/screens/\(target)", version: "2.1")
                #expect(reviews.body.contains(#""interface_identifier":"restaurants/\#(id)""#))
            }
            connection.send("GET /screens/restaurants/la-table/reviews/data HTTP/1.1\r\nHost: localhost\r\nAccept-Language: pt\r\n\r\n")
            let data = try #require(await connection.receive(1).first)
            #expect(data.body.contains("Camille, 2 de nov. de 2026"), "\(data.body)")
        }
    }

    @Test("a restaurant's rating is written the locale's way, and its badge chosen by comparing it")
    func formattedAndConditional() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            func labels(_ id: String, _ language: String) async throws -> [String: String] {
                connection.send("GET /screens/restaurants/\(id)/data HTTP/1.1\r\nHost: localhost\r\nAccept-Language: \(language)\r\n\r\n")
                let response = try #require(await connection.receive(1).first)
                #expect(response.header("Vary")?.contains("Accept-Language") == true)
                return Self.labels(response)
            }
            let english = try await labels("la-table", "en")
            #expect(english["rating"] == "★ 4.9")
            #expect(english["badge"] == "Top rated")
            #expect(try await labels("la-table", "pt-BR")["rating"] == "★ 4,9")
            let other = try await labels("burger-lab", "pt")
            #expect(other["rating"] == "★ 4,2")
            #expect(other["badge"] == " ")
        }
    }

    /// POSTs a form (or JSON) to an action over the connection.
    static func post(
        _ connection: RawConnection, _ path: String, _ body: String, type: String = "application/x-www-form-urlencoded"
    ) async throws -> RawResponse {
        let response = try #require(await connection.request(path, method: "POST", headers: [("Content-Type", type)], body: body))
        #expect(response.header("Cache-Control") == "no-store")
        return response
    }

    /// The value of each label an answer fills, by identifier.
    static func labels(_ response: RawResponse) -> [String: String] {
        var labels: [String: String] = [:]
        for entry in response.json?["interface_data"]?.arrayValue ?? [] {
            if let identifier = entry["identifier"]?.stringValue, let value = entry["content"]?["value"]?.stringValue {
                labels[identifier] = value
            }
        }
        return labels
    }

    @Test(
        "the login form submits to the offline auth upstream: home on success, the reason in its labels otherwise; the newsletter form validates"
    )
    func forms() async throws {
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            let skeleton = try JSONDecoder().decode(
                Skeleton.self, from: Data(try await Self.get(connection, "/screens/login", version: "1.0").body.utf8))
            let labels = Set(skeleton.components.filter { $0.name == "label_component" }.map(\.identifier))

            let success = try await Self.post(connection, "/screens/login/actions/submit", "email=ada%40example.com&password=correct-horse")
            #expect(success.status == 200, "\(success.body)")
            #expect(success.json?["then"] == ["identifier": "navigation", "content": ["interface_identifier": "home"]])
            #expect(Set(Self.labels(success).keys).isSubset(of: labels))
            // The next screen opens as the navigation says.
            try await Self.follow("home", on: connection, version: "2.1")

            let badEmail = try await Self.post(connection, "/screens/login/actions/submit", "email=ada&password=correct-horse")
            #expect(badEmail.status == 422)
            #expect(Self.labels(badEmail)["email_error"] == "Enter an email address, like ada@example.com.")
            #expect(Self.labels(badEmail)["password_error"] == " ")
            #expect(badEmail.json?["errors"]?.arrayValue?.map { $0["input"] } == ["email"])

            let wrong = try await Self.post(connection, "/screens/login/actions/submit", "email=ada%40example.com&password=wrong-password")
            #expect(wrong.status == 422)
            #expect(Self.labels(wrong)["error"] == "Wrong email or password.")
            #expect(wrong.json?["outcome"] == "rejected")

            let subscribed = try await Self.post(
                connection, "/screens/newsletter/actions/subscribe", #"{"inputs": {"email": "ada@example.com", "frequency": "monthly"}}"#,
                type: "application/json"
            )
            #expect(subscribed.status == 201, "\(subscribed.body)")
            #expect(Self.labels(subscribed)["message"] == "Subscribed: ada@example.com gets our monthly letter.")
            let again = try await Self.post(connection, "/screens/newsletter/actions/subscribe", "email=grace%40example.com")
            #expect(Self.labels(again)["message"] == "grace@example.com is already subscribed.")
            let invalid = try await Self.post(
                connection, "/screens/newsletter/actions/subscribe", "email=ada%40example.com&frequency=daily")
            #expect(invalid.status == 422)
            #expect(Self.labels(invalid)["message"] == "Check the email address and the frequency.")
        }
    }

    @Test("the example deep links resolve to the targets the lists send")
    func deepLinks() async throws {
        let links = [
            ("https://eats.example.com/r/la-table", "restaurants/la-table"),
            ("taksi-eats://restaurant/sakura-ramen", "restaurants/sakura-ramen"),
            ("https://eats.example.com/bikes/velib", "bikes/stations/velib"),
            ("https://eats.example.com/code/apple/swift-nio", "repositories/apple/swift-nio"),
        ]
        try await withRunningServer(try Self.application()) { port in
            let connection = try RawConnection(port: port)
            for (link, target) in links {
                let encoded = link.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? link
                let action = try await Self.get(connection, "/links/resolve?url=\(encoded)", version: "2.1").json
                #expect(action == ["identifier": "navigation", "content": ["interface_identifier": .string(target)]])
                try await Self.follow(target, on: connection, version: "2.1")
            }
        }
    }
}
