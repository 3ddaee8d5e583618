import Foundation
import TaksiTestSupport
import Testing

/// The ValidateScreens plugin as a team uses it: from a package of its own that depends on this
/// one, through real `swift build` runs.
@Suite("Build plugin")
struct BuildPluginTests {
    /// Runs `swift build` in `package`; its exit status and its output.
    func build(_ package: URL) async throws -> (status: Int32, output: String) {
        try await runTool([
            "swift", "build", "--package-path", package.path, "--scratch-path", package.appendingPathComponent(".build").path,
        ])
    }

    func write(_ text: String, _ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test("screens added, moved or deleted after a first build are checked by the next one, with config.json's upstreams and actions")
    func newFilesAreChecked() async throws {
        let package = Scratch.path("plugin")
        // A path dependency's identity is its folder's name.
        let identity = repositoryRoot.lastPathComponent.lowercased()
        try write(
            """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "app",
                dependencies: [.package(path: "\(repositoryRoot.path)")],
                targets: [.executableTarget(name: "App", plugins: [.plugin(name: "ValidateScreens", package: "\(identity)")])]
            )
            """, package.appendingPathComponent("Package.swift")
        )
        try write("print(\"app\")\n", package.appendingPathComponent("Sources/App/main.swift"))
        try write(#"{"upstreams": {"api": "http://127.0.0.1:9"}}"#, package.appendingPathComponent("config.json"))
        try write(
            #"{"name": "home", "entry": true, "components": [{"name": "label_component", "identifier": "t", "content": {"value": "Hi"}}]}"#,
            package.appendingPathComponent("Screens/home.json")
        )
        let first = try await build(package)
        try #require(first.status == 0, "\(first.output)")

        // Added after the first build, in a new folder.
        let bad = package.appendingPathComponent("Screens/more/bad.yaml")
        try write("name: bad\nentry: true\ncomponents:\n  - name: labl_component\n    content: {value: x}\n", bad)
        let added = try await build(package)
        #expect(added.status != 0)
        #expect(
            added.output.contains("Screens/more/bad.yaml:4:11: error: components[0].name: component type \"labl_component\" is not known"),
            "\(added.output)")

        // Renamed: still checked; deleted: the build passes again.
        try FileManager.default.moveItem(at: bad, to: package.appendingPathComponent("Screens/more/worse.yaml"))
        let renamed = try await build(package)
        #expect(renamed.output.contains("Screens/more/worse.yaml:4:11: error:"), "\(renamed.output)")
        try FileManager.default.removeItem(at: package.appendingPathComponent("Screens/more"))
        let deleted = try await build(package)
        #expect(deleted.status == 0, "\(deleted.output)")

        // An http source naming an upstream config.json does not have fails the build too.
        try write(
            #"{"name": "feed", "entry": true, "sources": {"s": {"type": "http", "upstream": "apii", "path": "/x"}}, "components": [{"name": "label_component", "identifier": "t", "content": {"value": {"$bind": "s.v"}}}]}"#,
            package.appendingPathComponent("Screens/feed.json")
        )
        let upstream = try await build(package)
        #expect(upstream.status != 0)
        #expect(upstream.output.contains(#"upstream "apii" is not configured"#), "\(upstream.output)")
        try FileManager.default.removeItem(at: package.appendingPathComponent("Screens/feed.json"))

        // A typo in an action's patch identifier fails the build at its line.
        try write(
            """
            name: form
            entry: true
            components:
              - {name: label_component, identifier: error, content: {value: " "}}
            actions:
              send:
                answers:
                  success:
                    data:
                      - {identifier: eror, content: {value: Sent}}
            """, package.appendingPathComponent("Screens/form.yaml")
        )
        let action = try await build(package)
        #expect(action.status != 0)
        #expect(
            action.output.contains(
                #"Screens/form.yaml:10:26: error: actions.send.answers.success.data[0].identifier: "eror" is not a component of this screen"#
            ),
            "\(action.output)"
        )
        try FileManager.default.removeItem(at: package.appendingPathComponent("Screens/form.yaml"))

        // An enum value newer than some app versions the screen reaches fails the build at its use.
        try write(
            #"{"name": "badge", "fields": [{"name": "kind", "type": "enum", "values": ["new", {"value": "hot", "since": "2.3"}]}]}"#,
            package.appendingPathComponent("Screens/components/badge.json"))
        try write(
            "name: deals\nentry: true\nversion: \">= 2.0\"\ncomponents:\n  - name: badge\n    content: {kind: hot}\n",
            package.appendingPathComponent("Screens/deals.yaml"))
        let versioned = try await build(package)
        #expect(versioned.status != 0)
        #expect(
            versioned.output.contains(
                #"Screens/deals.yaml:6:21: error: components[0].content.kind: "hot" of badge.kind is decoded by apps since 2.3 only, but its version requirement ">= 2.0" admits 2.0"#
            ),
            "\(versioned.output)"
        )
        try FileManager.default.removeItem(at: package.appendingPathComponent("Screens/deals.yaml"))
        try FileManager.default.removeItem(at: package.appendingPathComponent("Screens/components"))

        // A message missing in one locale fails the build at its line in the default locale's table.
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Screens/strings"), withIntermediateDirectories: true)
        try write("title: Welcome\nbye: Goodbye\n", package.appendingPathComponent("Screens/strings/en.yaml"))
        try write("title: Boas-vindas\n", package.appendingPathComponent("Screens/strings/pt.yaml"))
        try write(
            #"{"name": "hi", "entry": true, "components": [{"name": "label_component", "content": {"value": {"$text": "title"}}}, {"name": "label_component", "content": {"value": {"$text": "bye"}}}]}"#,
            package.appendingPathComponent("Screens/hi.json")
        )
        let text = try await build(package)
        #expect(text.status != 0)
        #expect(
            text.output.contains(#"Screens/strings/en.yaml:2:1: error: bye: message "bye" is missing from "#)
                && text.output.contains(#"Screens/strings/pt.yaml; every locale has every message, so add it there"#),
            "\(text.output)"
        )
    }
}
