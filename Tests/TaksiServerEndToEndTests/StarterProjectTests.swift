import Foundation
import Logging
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// `taksi-server init DIR`: a project a team owns, valid as written, served with no flags, and
/// never written over an existing file.
@Suite("Starter project")
struct StarterProjectTests {
    func makeFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("taksi-init-\(UUID().uuidString)")
    }

    @Test("the starter loads with no diagnostic, and its configuration serves its screen and data")
    func servesAsWritten() async throws {
        let folder = makeFolder()
        let written = try StarterProject.create(in: folder)
        #expect(
            written == [
                "Screens/home.yaml", "Screens/components/card_component.json", "Screens/fixtures/home.json", "config.json", "Dockerfile",
                ".github/workflows/screens.yml", ".gitignore", "README.md",
            ])
        let configuration = try ServerConfiguration.resolve(file: folder.appendingPathComponent("config.json").path, environment: [:])
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        #expect(load.diagnostics.isEmpty, "\(load.diagnostics.report)")

        let application = try buildApplication(configuration: configuration, logger: Logger(label: "starter"))
        let skeleton = await application.responder.response(method: .GET, uri: "/screens/home")
        #expect(skeleton.status == .ok)
        let decoded = try JSONDecoder().decode(Skeleton.self, from: Data(skeleton.body.readableBytesView))
        #expect(
            decoded.components.map(\.name) == [
                "label_component", "label_component", "collection_component", "spacer_component", "button_component",
            ])
        let data = await application.responder.response(method: .GET, uri: "/screens/home/data?name=Ada")
        let entries = try JSONDecoder().decode(InterfaceData.self, from: Data(data.body.readableBytesView)).entries
        #expect(entries.map(\.identifier) == ["greeting", "intro", "cards"])
        #expect(entries.first?.content == ["value": "Hello, Ada!"])
        #expect(entries.last?.content["values"]?.arrayValue?.count == 3)
        // A team's own desk gets the live preview; its container image turns it off.
        #expect(configuration.preview)
        #expect(await application.responder.response(method: .GET, uri: "/preview/home").status == .ok)
        let dockerfile = try String(contentsOf: folder.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("\"--no-preview\"]"))
    }

    @Test("the CI workflow it writes builds the server's version with the install script, runs validate, and compat on pull requests")
    func workflow() throws {
        guard pythonHas("yaml") else { return }
        let folder = makeFolder()
        try StarterProject.create(in: folder)
        let file = folder.appendingPathComponent(".github/workflows/screens.yml").path
        // Read by an independent YAML parser, as GitHub reads it.
        let script = """
            import json, sys, yaml
            workflow = yaml.safe_load(open(sys.argv[1]))
            steps = workflow["jobs"]["validate"]["steps"]
            print(json.dumps({"env": workflow["env"], "runs": [step.get("run", "") for step in steps],
                              "on": sorted(workflow[True]), "cache": steps[1]["with"]["key"],
                              "depth": steps[0]["with"]["fetch-depth"], "gate": steps[-1].get("if", "")}))
            """
        let result = try runTool(["python3", "-c", script, file])
        #expect(result.status == 0, "\(result.output)")
        let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(result.output.utf8))
        #expect(parsed["env"]?["TAKSI_SERVER_VERSION"] == .string(TaksiServerVersion.current))
        #expect(parsed["on"] == ["pull_request", "push"])
        #expect(parsed["cache"]?.stringValue?.contains("env.TAKSI_SERVER_VERSION") == true)
        let runs = parsed["runs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(runs.contains { $0.contains("scripts/install.sh") })
        #expect(runs.suffix(2) == ["taksi-server validate", #"taksi-server compat "origin/$GITHUB_BASE_REF""#])
        #expect(parsed["gate"] == "github.event_name == 'pull_request'")
        #expect(parsed["depth"] == 0, "the base branch is fetched")
        // The script it runs is this repository's.
        #expect(FileManager.default.isExecutableFile(atPath: repositoryRoot.appendingPathComponent("scripts/install.sh").path))
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
