import Foundation
import Logging
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// A value that arrives at run time is checked against the catalog of the requesting app's
/// version: an enum value newer than the app is left out, never sent to a build that cannot
/// decode it, and responses for different versions are kept apart (memo, `Vary`).
@Suite("Versioned data")
struct VersionedDataTests {
    static let files = [
        "components/tag.json":
            #"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "dynamic": true, "values": ["plain", {"value": "shiny", "since": "3.0"}]}]}"#,
        "components/row.json":
            #"{"name": "row", "fields": [{"name": "kind", "type": "enum", "required": true, "dynamic": true, "values": ["plain", {"value": "shiny", "since": "3.0"}]}]}"#,
        "home.json": #"""
        {"name": "home", "entry": true,
         "sources": {"q": {"type": "request", "parameters": {"kind": {"default": "plain"}}}},
         "components": [
           {"name": "tag", "identifier": "t", "content": {"kind": {"$bind": "q.kind"}}},
           {"name": "collection_component", "identifier": "rows", "content": {"component_name": "row", "values":
             [{"kind": "plain"}, {"kind": {"$bind": "q.kind"}}]}}
         ]}
        """#,
    ]

    let application: Application

    init() throws {
        let load = ScreenSetLoader.load(files: Self.files.mapValues { Array($0.utf8) })
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        var configuration = ServerConfiguration()
        configuration.port = 0
        application = buildApplication(configuration: configuration, screenSet: set, logger: testLogger("test"))
    }

    func data(version: String?) async throws -> TestResponse {
        let headers = version.map { [("X-Taksi-Version", $0)] } ?? []
        return try await application.execute(uri: "/screens/home/data?kind=shiny", headers: headers)
    }

    @Test("shiny reaches apps 3.0 and later only; older ones get the rest, and the data says it varies by version")
    func byVersion() async throws {
        // Newest first, so a response kept for 3.0 would be served to 2.1 if the memo mixed them up.
        let new = try await data(version: "3.0")
        #expect(
            new.text
                == #"{"interface_data":[{"content":{"kind":"shiny"},"identifier":"t"},{"content":{"values":[{"kind":"plain"},{"kind":"shiny"}]},"identifier":"rows"}]}"#
        )
        for version in ["2.1", "3.0-beta.1", nil] as [String?] {
            let old = try await data(version: version)
            #expect(
                // The optional field is left out (the app uses its default); the required one's item is.
                old.text
                    == #"{"interface_data":[{"content":{},"identifier":"t"},{"content":{"values":[{"kind":"plain"}]},"identifier":"rows"}]}"#,
                "\(version ?? "no version"): \(old.text)")
            #expect(old.headers["Vary"] == ["X-Taksi-Version, X-Taksi-Skeleton"])
        }
        #expect(try await data(version: "3.1").text == new.text)
    }
}
