import Foundation
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

/// The `taksi-server` executable as users run it: exit codes and output.
@Suite("Command line")
struct CommandLineTests {
    /// A built executable, next to the test bundle in the build folder.
    static func built(_ name: String) -> URL? { builtExecutable(name) }

    func run(
        _ arguments: [String], executable name: String = "taksi-server", in directory: URL = repositoryRoot,
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String, error: String) {
        let executable = try #require(Self.built(name), "\(name) was not built next to the tests")
        let outcome = try await runProcess(
            executable, arguments, in: directory,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }.merging(environment) { $1 })
        return (outcome.status, outcome.output, outcome.error)
    }

    func brokenScreens() throws -> String {
        let directory = Scratch.path("cli")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(
            """
            {
              "name": "home", "entry": true,
              "components": [
                {"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "profil"}}}}
              ]
            }
            """.utf8
        ).write(to: directory.appendingPathComponent("home.json"))
        try Data(#"{"name": "profile", "entry": true, "components": []}"#.utf8).write(to: directory.appendingPathComponent("profile.json"))
        return directory.path
    }

    @Test("validate exits 0 on a valid set")
    func validateExamples() async throws {
        let result = try await run(["validate", fixtureScreensDirectory.path])
        #expect(result.status == 0)
        #expect(result.output == "6 screens (8 variants) are valid\n")
    }

    @Test("validate --affected lists the variants a fragment's or a string table's edit changes, and the files that change none")
    func affected() async throws {
        let directory = Scratch.path("affected")
        let files = [
            "fragments/header.yaml": "components:\n  - {name: label_component, identifier: title, content: {value: {$text: title}}}\n",
            "strings/en.yaml": "title: Welcome\n",
            "home.json": #"{"name": "home", "entry": true, "components": [{"$fragment": "header"}]}"#,
            "home-new.json":
                #"{"name": "home", "version": ">= 2.0", "components": [{"$fragment": "header"}, {"name": "spacer_component", "content": {}}]}"#,
            "about.json": #"{"name": "about", "entry": true, "components": [{"name": "label_component", "content": {"value": "About"}}]}"#,
        ]
        for (path, text) in files {
            let url = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let fragment = try await run([
            "validate", directory.path, "--affected", directory.appendingPathComponent("fragments/header.yaml").path,
        ])
        #expect(fragment.status == 0)
        #expect(
            fragment.output == """
                2 screens (3 variants) are valid
                home  \(directory.path)/home-new.json  (version >= 2.0; through \(directory.path)/fragments/header.yaml)
                home  \(directory.path)/home.json  (every version; through \(directory.path)/fragments/header.yaml)
                2 variants of 1 screen change with this file
                a CDN purges: taksi:screen:home

                """
        )
        // Relative paths work too, from where the command runs.
        let relative = try await run(["validate", ".", "--affected", "strings/en.yaml", "about.json", "links.yaml"], in: directory)
        #expect(
            relative.output == """
                2 screens (3 variants) are valid
                about  ./about.json  (every version)
                home  ./home-new.json  (version >= 2.0; through strings/en.yaml)
                home  ./home.json  (every version; through strings/en.yaml)
                links.yaml: no variant's payloads are made from it
                3 variants of 2 screens change with these files
                a CDN purges: taksi:screen:about taksi:screen:home

                """
        )
        // What a CDN keyed with config.json's cdn would be purged of, per variant and locale.
        let config = directory.deletingLastPathComponent().appendingPathComponent("taksi-config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: config) }
        try Data(#"{"cdn": {"tag_header": "Cache-Tag", "tag_prefix": "shop"}}"#.utf8).write(to: config)
        let tags = try await run(["validate", ".", "--config", config.path, "--tags", "home", "abuot"], in: directory)
        let version = try #require(ScreenSetLoader.load(directory: directory.path).screenSet?.version)
        #expect(
            tags.output == """
                2 screens (3 variants) are valid
                home  ./home-new.json  en  shop shop:version:\(version) shop:screen:home shop:strings:en shop:fragment:header
                home  ./home.json  en  shop shop:version:\(version) shop:screen:home shop:strings:en shop:fragment:header
                abuot: no such screen (did you mean "about"?)

                """
        )
    }

    @Test("validate prints every diagnostic and exits 1 on an error")
    func validateBroken() async throws {
        let directory = try brokenScreens()
        let result = try await run(["validate", directory])
        #expect(result.status == 1)
        #expect(
            result.output == """
                \(directory)/home.json:4:136: error: components[0].content.action.content.interface_identifier: navigation target "profil" is not a screen; name an existing screen (did you mean "profile"?)
                1 error, 0 warnings; nothing can be served until the errors are fixed

                """
        )
    }

    @Test("serve refuses to start on a broken screen set, naming file, path and fix")
    func serveRefuses() async throws {
        let directory = try brokenScreens()
        let result = try await run(["--screens", directory, "--port", "0"])
        #expect(result.status == 1)
        #expect(result.error.contains("\(directory)/home.json:4:136: error: components[0].content.action.content.interface_identifier"))
        #expect(result.error.contains("did you mean \"profile\"?"))
    }

    @Test("the build-time validator fails on a broken set with compiler-style diagnostics, and passes a valid one")
    func buildTimeValidator() async throws {
        let directory = try brokenScreens()
        let output = Scratch.path("validated", suffix: ".swift")
        let broken = try await run([directory, output.path], executable: "taksi-validate")
        #expect(broken.status == 1)
        #expect(broken.error.hasPrefix("\(directory)/home.json:4:136: error: components[0].content.action.content.interface_identifier"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let valid = try await run([fixtureScreensDirectory.path, output.path], executable: "taksi-validate")
        #expect(valid.status == 0, "\(valid.error)")
        let generated = try String(contentsOf: output, encoding: .utf8)
        #expect(generated.contains("6 screens (8 variants) are valid"))
    }

    @Test("init writes a project where validate and serve's configuration work with no flags; a second init refuses")
    func initProject() async throws {
        let folder = Scratch.path("init-cli")
        let created = try await run(["init", folder.path])
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("Screens/home.yaml"))
        let validated = try await run(["validate"], in: folder)
        #expect(validated.status == 0, "\(validated.output)\(validated.error)")
        #expect(validated.output == "1 screen is valid\n")
        let again = try await run(["init", folder.path])
        #expect(again.status == 1)
        #expect(again.error.contains("init never writes over a file"))
    }

    @Test("compat over real git revisions: a removed enum value exits 1 naming it; the same said with until passes")
    func compatGate() async throws {
        let folder = Scratch.path("compat")
        let screens = folder.appendingPathComponent("Screens")
        try FileManager.default.createDirectory(at: screens.appendingPathComponent("components"), withIntermediateDirectories: true)
        func write(_ text: String, _ path: String) throws { try Data(text.utf8).write(to: screens.appendingPathComponent(path)) }
        func commit(_ message: String) async throws {
            for arguments in [["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message]] {
                let result = try await runTool(["git", "-C", folder.path] + arguments)
                try #require(result.status == 0, "\(result.output)")
            }
        }
        try #require(try await runTool(["git", "init", "-q", folder.path]).status == 0)
        try write(#"{"name": "home", "entry": true, "components": [{"name": "tag", "content": {"kind": "sale"}}]}"#, "home.json")
        try write(
            #"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "values": ["sale", "new", "old"]}]}"#, "components/tag.json")
        try await commit("first")

        try write(#"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "values": ["sale", "new"]}]}"#, "components/tag.json")
        try await commit("remove old")
        let removed = try await run(["compat", "HEAD~1", "Screens"], in: folder)
        #expect(removed.status == 1)
        #expect(
            removed.output.contains(
                #"HEAD~1:Screens/components/tag.json:1:87: breaking: tag.kind: enum value "old" removed, but apps already out decode it"#),
            "\(removed.output)\(removed.error)")
        #expect(removed.output.hasSuffix("1 catalog change since HEAD~1: 1 breaking, 0 compatible\n"), "\(removed.output)")

        try write(
            #"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "values": ["sale", "new", {"value": "old", "until": "2.4"}]}]}"#,
            "components/tag.json")
        let said = try await run(["compat", "HEAD~1", "Screens"], in: folder)
        #expect(said.status == 0, "\(said.output)\(said.error)")
        #expect(said.output.contains(#"compatible: tag.kind: enum value "old" removed (for apps after 2.4)"#), "\(said.output)")

        // A directory as the base; a base that is neither is a usage error.
        let base = folder.appendingPathComponent("base")
        try FileManager.default.copyItem(at: screens, to: base)
        #expect(try await run(["compat", base.path, "Screens"], in: folder).output.hasPrefix("0 catalog changes"))
        let wrong = try await run(["compat", "no-such-rev", "Screens"], in: folder)
        #expect(wrong.status == 2)
        #expect(wrong.error.contains("no-such-rev is neither a directory nor a git revision"), "\(wrong.error)")

        // A checkout another user owns, as in a CI job's container (root over the runner's
        // workspace): git alone refuses it ("detected dubious ownership"); compat reads it.
        // (No global or system git configuration: one that trusts every directory hides it.)
        if getuid() == 0 {
            let untrusting = ["GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"]
            try #require(try await runTool(["chown", "-R", "nobody", folder.path]).status == 0)
            let plainGit = try await runTool(
                ["env"] + untrusting.map { "\($0.key)=\($0.value)" } + ["git", "-C", folder.path, "rev-parse", "HEAD"])
            #expect(plainGit.status != 0 && plainGit.output.contains("dubious ownership"), "\(plainGit.output)")
            let owned = try await run(["compat", "HEAD~1", "Screens"], in: folder, environment: untrusting)
            #expect(owned.status == 0, "\(owned.output)\(owned.error)")
            #expect(owned.output.contains(#"compatible: tag.kind: enum value "old" removed (for apps after 2.4)"#), "\(owned.output)")
        }
    }

    @Test("a port in use is said plainly, with the fix, and exit code 1")
    func portInUse() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let holder = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(holder.localAddress?.port)
        let result = try await run(["serve", "--screens", fixtureScreensDirectory.path, "--port", String(port), "--no-watch"])
        try await holder.close()
        try await group.shutdownGracefully()
        #expect(result.status == 1)
        #expect(
            result.error.contains(
                "taksi-server: cannot listen on 127.0.0.1:\(port): the port is already in use by another process; stop it, or choose another port with --port"
            ),
            "\(result.error)"
        )
    }

    @Test("serve's flags are read as their settings say; a debug log does not write the configuration's values")
    func serveFlags() async throws {
        let secret = "Bearer flags-test-secret"
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }.merging([
            "TAKSI_TRACING_HEADERS": "authorization=" + secret.replacingOccurrences(of: " ", with: "%20")
        ]) { $1 }
        let (process, logs, _) = try await startServerProcess(
            [
                "--screens", fixtureScreensDirectory.path, "--port", "0", "--no-watch", "--log-level", "debug", "--log-format", "json",
                "--no-preview", "--access-log-format", "json",
            ], environment: environment)
        process.terminate()
        var lines: [String] = []
        while let line = await logs.nextLine() { lines.append(line) }
        await exited(process)
        #expect(lines.contains { $0.contains("\"log.level\":\"debug\"") }, "--log-level debug is applied")
        #expect(!lines.contains { $0.contains("flags-test-secret") }, "\(lines.filter { $0.contains("flags-test-secret") })")
        let wrong = try await run(["--access-log-format", "yaml"])
        #expect(wrong.status == 2)
        #expect(wrong.error.contains("--access-log-format"), "\(wrong.error)")
    }

    @Test("--version prints the release")
    func version() async throws {
        let result = try await run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == "1.0.0\n")
    }

    @Test("validate finds the configuration as serve does: its screens directory and its upstream names")
    func validateUsesConfiguration() async throws {
        let project = Scratch.path("config")
        try FileManager.default.createDirectory(at: project.appendingPathComponent("Mine"), withIntermediateDirectories: true)
        try Data(#"{"screens": "Mine", "upstreams": {"api": "http://127.0.0.1:9"}}"#.utf8).write(
            to: project.appendingPathComponent("app.json"))
        try Data(
            #"{"name": "home", "entry": true, "sources": {"s": {"type": "http", "upstream": "apii", "path": "/x"}}, "components": [{"name": "label_component", "identifier": "t", "content": {"value": {"$bind": "s.v"}}}]}"#
                .utf8
        ).write(to: project.appendingPathComponent("Mine/home.json"))
        let viaFlag = try await run(["validate", "--config", "app.json"], in: project)
        #expect(viaFlag.status == 1)
        #expect(
            viaFlag.output.contains(#"Mine/home.json:1:79: error: sources.s.upstream: upstream "apii" is not configured"#),
            "\(viaFlag.output)")
        let viaEnvironment = try await run(
            ["validate"], in: project, environment: ["TAKSI_CONFIG": project.appendingPathComponent("app.json").path])
        #expect(
            viaEnvironment.output
                == viaFlag.output.replacingOccurrences(of: "Mine/", with: project.appendingPathComponent("Mine").path + "/"))
    }

    @Test("validate --production refuses a configuration with an upstream that answers from files, naming it and the build argument")
    func validateProduction() async throws {
        let project = Scratch.path("production")
        try FileManager.default.createDirectory(at: project.appendingPathComponent("Screens"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: project.appendingPathComponent("answers"), withIntermediateDirectories: true)
        try Data(#"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "Hi"}}]}"#.utf8).write(
            to: project.appendingPathComponent("Screens/home.json"))
        try Data(#"{"upstreams": {"shop": "file:answers", "api": "https://api.example.com"}}"#.utf8).write(
            to: project.appendingPathComponent("config.json"))
        try Data(#"{"upstreams": {"shop": {"url": "https://shop.example.com", "auth": {"bearer": {"env": "SHOP_TOKEN"}}}}}"#.utf8).write(
            to: project.appendingPathComponent("production.json"))
        // At a desk a file: upstream is fine; shipped, its folder is not there.
        #expect(try await run(["validate"], in: project).status == 0)
        let refused = try await run(["validate", "--production"], in: project)
        #expect(refused.status == 1)
        #expect(
            refused.error
                == #"error: config.json: upstream "shop" answers from files (file:answers), which an image does not have: ship the configuration you run in production, whose upstreams are http(s) URLs (docker build --build-arg CONFIG=production.json)"#
                + "\n", "\(refused.error)")
        #expect(refused.output.isEmpty, "nothing else is checked")
        // The credential is read at start, not here: validate needs no token.
        let shipped = try await run(["validate", "--config", "production.json", "--production"], in: project)
        #expect(shipped.status == 0, "\(shipped.output)\(shipped.error)")
    }

    @Test("a bad flag value is a configuration error with exit code 2")
    func badFlag() async throws {
        let result = try await run(["--port", "eighty"])
        #expect(result.status == 2)
        #expect(result.error.contains("--port: the port must be a number from 0 to 65535, found \"eighty\""))
    }

    @Test(
        "bundle writes the skeletons an app version gets (each alternative and locale, the server's bytes), and --check names the command when stale"
    )
    func bundle() async throws {
        let folder = Scratch.path("bundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let screens = folder.appendingPathComponent("Screens")
        try FileManager.default.createDirectory(at: screens, withIntermediateDirectories: true)
        let start =
            #"{"name": "start", "entry": true, "components": [{"name": "label_component", "identifier": "t", "content": {"value": "Hi"}}]}"#
        try Data(start.utf8).write(to: screens.appendingPathComponent("start.json"))
        try Data(start.replacingOccurrences(of: "\"start\", \"entry\": true", with: "\"start\", \"alternative\": \"B\"").utf8)
            .write(to: screens.appendingPathComponent("start-b.json"))
        try Data(#"{"name": "item/{id}", "parameters": {"id": {"type": "string"}}, "components": []}"#.utf8)
            .write(to: screens.appendingPathComponent("item.json"))
        let made = try await run(["bundle", "--app-version", "1.2", "Screens", "--output", "bundle.json"], in: folder)
        #expect(made.status == 0, "\(made.error)")
        #expect(made.output.contains("Wrote bundle.json: 2 skeletons for app 1.2"), "\(made.output)")
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: folder.appendingPathComponent("bundle.json")))
        let entries = try #require(document["screens"]?.arrayValue)
        #expect(entries.map { $0["alternative"]?.stringValue } == ["B", "default"])
        for entry in entries {
            #expect(entry["path"] == "start")
            #expect(entry["revision"]?.stringValue?.count == 16)
            #expect(entry["etag"]?.stringValue != nil)
        }
        #expect(entries.last?["skeleton"]?["components"]?.arrayValue?.first?["content"]?["value"] == "Hi")
        #expect(try await run(["bundle", "--app-version", "1.2", "Screens", "--check", "bundle.json"], in: folder).status == 0)
        try Data(start.replacingOccurrences(of: "Hi", with: "Hello").utf8).write(to: screens.appendingPathComponent("start.json"))
        let stale = try await run(["bundle", "--app-version", "1.2", "Screens", "--check", "bundle.json"], in: folder)
        #expect(stale.status == 1)
        #expect(stale.error.contains("run taksi-server bundle --app-version 1.2 --output bundle.json"), "\(stale.error)")
    }
}
