import Foundation
import Logging
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

@testable import taksi_server

/// `taksi-server init DIR`: a project a team owns, valid as written, served with no flags, and
/// never written over an existing file.
@Suite("Starter project")
struct StarterProjectTests {
    func makeFolder() -> URL {
        Scratch.path("init")
    }

    @Test("the starter loads with no diagnostic, and its configuration serves its screen and data")
    func servesAsWritten() async throws {
        let folder = makeFolder()
        let written = try StarterProject.create(in: folder)
        #expect(
            written == [
                "Screens/home.yaml", "Screens/components/card_component.json", "Screens/fixtures/home.json", "Screens/actions.json",
                "config.json", "Dockerfile",
                "scripts/install-taksi-server.sh", ".github/workflows/screens.yml", ".vscode/settings.json", ".vscode/extensions.json",
                ".gitignore", "README.md", "schemas/screen.schema.json", "schemas/component.schema.json",
            ])
        let configuration = try ServerConfiguration.resolve(file: folder.appendingPathComponent("config.json").path, environment: [:])
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        #expect(load.diagnostics.isEmpty, "\(load.diagnostics.report)")

        let application = try buildApplication(configuration: configuration, logger: testLogger("starter"))
        let skeleton = try await application.execute(.GET, uri: "/screens/home")
        #expect(skeleton.status == .ok)
        let decoded = try JSONDecoder().decode(Skeleton.self, from: Data(skeleton.body.readableBytesView))
        #expect(
            decoded.components.map(\.name) == [
                "label_component", "label_component", "collection_component", "spacer_component", "button_component",
            ])
        let data = try await application.execute(.GET, uri: "/screens/home/data?name=Ada")
        let entries = try JSONDecoder().decode(InterfaceData.self, from: Data(data.body.readableBytesView)).entries
        #expect(entries.map(\.identifier) == ["greeting", "intro", "cards"])
        #expect(entries.first?.content == ["value": "Hello, Ada!"])
        #expect(entries.last?.content["values"]?.arrayValue?.count == 3)
        // A team's own desk gets the live preview; its container image turns it off.
        #expect(configuration.preview)
        #expect(try await application.execute(.GET, uri: "/preview/home").status == .ok)
        let dockerfile = try String(contentsOf: folder.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("\"--no-preview\"]"))
    }

    @Test("the version names the commit it was built from as SemVer build metadata; a build flag that is no commit id is ignored")
    func sourceCommit() {
        let commit = "9fb4902e1c3a5b7d9f0e2c4a6b8d0f1e3a5c7e9b"
        #expect(TaksiServerVersion.sourceCommit(commit) == commit)
        for bad in ["", "9fb4902", String(commit.dropLast()) + "G", commit.uppercased(), commit + "0", "$(rm -rf /)"] {
            #expect(TaksiServerVersion.sourceCommit(bad) == nil, "\(bad)")
        }
        #expect(
            TaksiServerVersion.described
                == (TaksiServerVersion.commit.map { "\(TaksiServerVersion.current)+\($0.prefix(12))" } ?? TaksiServerVersion.current))
    }

    @Test(
        "the CI workflow it writes installs the server's version with the project's script, cached by what it installs, runs validate, and compat on pull requests"
    )
    func workflow() async throws {
        guard pythonHas("yaml") else { return }
        let folder = makeFolder()
        try StarterProject.create(in: folder)
        let file = folder.appendingPathComponent(".github/workflows/screens.yml").path
        // Read by an independent YAML parser, as GitHub reads it.
        let script = """
            import json, sys, yaml
            workflow = yaml.safe_load(open(sys.argv[1]))
            steps = workflow["jobs"]["validate"]["steps"]
            cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache@"))
            print(json.dumps({"env": workflow.get("env"), "runs": [step.get("run", "") for step in steps],
                              "on": sorted(workflow[True]), "cache": cache["with"]["key"],
                              "depth": steps[0]["with"]["fetch-depth"], "gate": steps[-1].get("if", "")}))
            """
        let result = try await runTool(["python3", "-c", script, file])
        #expect(result.status == 0, "\(result.output)")
        let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(result.output.utf8))
        #expect(parsed["env"] == .null, "the version is named once, in the install script")
        #expect(parsed["on"] == ["pull_request", "push"])
        #expect(parsed["cache"]?.stringValue?.contains("steps.server-source.outputs.key") == true, "keyed by what is installed")
        let runs = parsed["runs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(runs.contains("scripts/install-taksi-server.sh"))
        #expect(runs.contains { $0.contains("scripts/install-taksi-server.sh --source-id") })
        #expect(runs.suffix(2) == ["taksi-server validate", #"taksi-server compat "origin/$GITHUB_BASE_REF""#])
        #expect(parsed["gate"] == "github.event_name == 'pull_request'")
        #expect(parsed["depth"] == 0, "the base branch is fetched")
        // The script it runs is the project's own (scripts/check-starter.py runs every step in CI).
        let installer = folder.appendingPathComponent("scripts/install-taksi-server.sh").path
        #expect(FileManager.default.isExecutableFile(atPath: installer))
        let text = try String(contentsOfFile: installer, encoding: .utf8)
        #expect(text.contains("version=${TAKSI_SERVER_VERSION:-\(TaksiServerVersion.current)}"))
        // Pinned to the commit this binary was built from (none for a build that did not say it).
        #expect(text.contains("commit=${TAKSI_SERVER_COMMIT:-\(TaksiServerVersion.commit ?? "")}\n"))
        #expect(text.contains("repository=${TAKSI_SERVER_REPOSITORY:-\(TaksiServerVersion.repository)}"))
        // The tarball it asks for is the one scripts/release.sh names (TaksiServerVersion.tarball).
        #expect(text.contains(#"tarball="taksi-server-$version-$system-$(uname -m).tar.gz""#))
        #expect(
            TaksiServerVersion.tarball(system: "Linux", machine: "x86_64")
                == "taksi-server-\(TaksiServerVersion.current)-linux-x86_64.tar.gz")
        let dockerfile = try String(contentsOf: folder.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("RUN PREFIX=/usr/local /tmp/install-taksi-server.sh"), "the image installs the same server")
    }

    @Test(
        "editors: the settings point each kind of file at its schema, the screen's schema line resolves, and validate keeps the schema current"
    )
    func editors() async throws {
        let folder = makeFolder()
        try StarterProject.create(in: folder)
        let settings = try JSONDecoder().decode(
            JSONValue.self, from: Data(contentsOf: folder.appendingPathComponent(".vscode/settings.json")))
        /// The schema a VS Code glob list gives `path`, for the YAML extension's map and the JSON server's list.
        func schema(of path: String) -> String? {
            var candidates: [(url: String, globs: [String])] = []
            for (url, globs) in settings["yaml.schemas"]?.objectValue ?? [:] {
                candidates.append((url, globs.arrayValue?.compactMap(\.stringValue) ?? []))
            }
            for entry in settings["json.schemas"]?.arrayValue ?? [] {
                candidates.append((entry["url"]?.stringValue ?? "", (entry["fileMatch"]?.arrayValue ?? []).compactMap(\.stringValue)))
            }
            let matching = candidates.filter { candidate in
                let positive = candidate.globs.filter { !$0.hasPrefix("!") }
                let negative = candidate.globs.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()) }
                return positive.contains { Self.glob($0, matches: path) } && !negative.contains { Self.glob($0, matches: path) }
            }
            return matching.count == 1 ? matching[0].url : nil
        }
        for (path, expected) in [
            ("Screens/home.yaml", "./schemas/screen.schema.json"), ("Screens/shop/item.json", "./schemas/screen.schema.json"),
            ("Screens/components/card_component.json", "./schemas/component.schema.json"),
            ("Screens/components/card_component.yaml", "./schemas/component.schema.json"),
        ] {
            #expect(schema(of: path) == expected, "\(path)")
        }
        for path in ["Screens/fixtures/home.json", "Screens/fragments/header.yaml", "Screens/strings/en.yaml", "Screens/links.yaml"] {
            #expect(schema(of: path) == nil, "\(path) is no screen")
        }
        for url in ["./schemas/screen.schema.json", "./schemas/component.schema.json"] {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(url).path), "\(url)")
        }
        let home = try String(contentsOf: folder.appendingPathComponent("Screens/home.yaml"), encoding: .utf8)
        let line = try #require(home.split(separator: "\n").first)
        #expect(line == "# yaml-language-server: $schema=../schemas/screen.schema.json")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("Screens/../schemas/screen.schema.json").path))

        // A new field: validate rewrites the screen schema, and says so; a second run has nothing to do.
        let schemaFile = folder.appendingPathComponent("schemas/screen.schema.json")
        #expect(try !String(contentsOf: schemaFile, encoding: .utf8).contains("badge"))
        let component = folder.appendingPathComponent("Screens/components/card_component.json")
        let text = try String(contentsOf: component, encoding: .utf8).replacingOccurrences(
            of: #""fields": ["#, with: #""fields": [{"name": "badge", "type": "string", "required": false, "summary": "A badge."},"#)
        try Data(text.utf8).write(to: component)
        // In CI (CI=true, as GitHub Actions sets it) or with --check: an error naming the command, nothing rewritten.
        for (arguments, environment) in [(["validate", "--check"], ["CI": ""]), (["validate"], ["CI": "true"])] {
            let checked = try await CommandLineTests().run(arguments, in: folder, environment: environment)
            #expect(checked.status == 1, "\(arguments) \(environment): \(checked.output)\(checked.error)")
            #expect(
                checked.error.contains(
                    "error: schemas/screen.schema.json is out of date (the components changed); run `taksi-server validate` (outside CI, without --check) to update it, and commit it"
                ), "\(checked.error)")
            #expect(try !String(contentsOf: schemaFile, encoding: .utf8).contains("badge"))
        }
        // At a desk: rewritten, and said.
        let validated = try await CommandLineTests().run(["validate"], in: folder, environment: ["CI": ""])
        #expect(validated.status == 0, "\(validated.output)\(validated.error)")
        #expect(validated.output.contains("updated ") && validated.output.contains("schemas/screen.schema.json (the components changed)"))
        #expect(try String(contentsOf: schemaFile, encoding: .utf8).contains("badge"))
        #expect(try await !CommandLineTests().run(["validate"], in: folder, environment: ["CI": ""]).output.contains("updated"))
        #expect(try await CommandLineTests().run(["validate", "--check"], in: folder).status == 0, "up to date: nothing to refuse")
        // schema --write: both files, only what changed.
        let written = try await CommandLineTests().run(["schema", "--write"], in: folder)
        #expect(written.output.contains("up to date"), "\(written.output)")
    }

    /// VS Code's globs as the tests need them: `**` any folders, `*` within one name; a leading `/` anchors at the project.
    static func glob(_ pattern: String, matches path: String) -> Bool {
        var expression = "^"
        var rest = Substring(pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern)
        while let character = rest.first {
            if rest.hasPrefix("**/") {
                expression += "(.*/)?"
                rest = rest.dropFirst(3)
            } else if rest.hasPrefix("**") {
                expression += ".*"
                rest = rest.dropFirst(2)
            } else {
                expression += character == "*" ? "[^/]*" : NSRegularExpression.escapedPattern(for: String(character))
                rest = rest.dropFirst()
            }
        }
        return path.range(of: expression + "$", options: .regularExpression) != nil
    }

    @Test("init refuses a folder where any of its files exists, and writes nothing there")
    func neverOverwrites() throws {
        let folder = makeFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("config.json"))
        #expect(throws: StarterProject.CreationError.self) { try StarterProject.create(in: folder) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["config.json"])
        #expect(try String(contentsOf: folder.appendingPathComponent("config.json"), encoding: .utf8) == "mine")
    }
}
