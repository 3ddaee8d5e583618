import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer
@testable import taksi_server

/// `taksi-server deploy kubernetes` on a project of its own (the starter `init` writes, with a
/// production configuration): valid against the Kubernetes schemas, and deployable: the files its
/// ConfigMap mounts, laid out as the kubelet lays them out, load as the same screen set with the
/// production settings. Then what it refuses, and that deploy/kubernetes.yaml is current.
@Suite("Deployment")
struct DeploymentTests {
    /// A starter project with a production configuration and a file whose name a ConfigMap key cannot hold.
    static func makeProject() throws -> URL {
        let folder = Scratch.path("deploy")
        _ = try StarterProject.create(in: folder)
        let production =
            #"{"screens": "Screens", "log_level": "debug", "drain_timeout": 12, "upstreams": {"shop": "https://shop.example.com/api/"}}"#
        try Data(production.utf8).write(to: folder.appendingPathComponent("production.json"))
        try Data(#"{"note": "a fixture nothing reads"}"#.utf8).write(to: folder.appendingPathComponent("Screens/fixtures/café menu.json"))
        return folder
    }

    /// The manifest's objects by kind (ConfigMaps by `ConfigMap/<name>`), as JSON (read by PyYAML, an
    /// independent YAML reader).
    static func objects(of manifest: URL) async throws -> JSONValue {
        let script = """
            import json, sys, yaml
            documents = yaml.safe_load_all(open(sys.argv[1], encoding="utf-8"))
            print(json.dumps({d["kind"] + ("/" + d["metadata"]["name"] if d["kind"] == "ConfigMap" else ""): d for d in documents}))
            """
        let result = try await runTool(["python3", "-c", script, manifest.path])
        try #require(result.status == 0, "\(result.output)")
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.output.utf8))
    }

    @Test(
        "a project's manifest passes the Kubernetes 1.30 schemas, and what it mounts loads as the project with production settings",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func project() async throws {
        let project = try Self.makeProject()
        let command = CommandLineTests()
        let made = try await command.run(
            [
                "deploy", "kubernetes", "--config", "production.json", "--image", "registry.example.com/taksi-server:1.0.0",
                "--namespace", "shop", "--output", "kubernetes.yaml",
            ], in: project)
        try #require(made.status == 0, "\(made.error)")
        #expect(made.error.hasPrefix("Wrote kubernetes.yaml: taksi-server: 1 screen, 5 files, "), "\(made.error)")
        let manifest = project.appendingPathComponent("kubernetes.yaml")

        let validation = try await runTool(["python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path])
        #expect(validation.status == 0, "\(validation.output)")
        #expect(validation.output.components(separatedBy: " passed for resource ").count == 7, "six objects: \(validation.output)")

        let objects = try await Self.objects(of: manifest)
        let pod = objects["Deployment"]?["spec"]?["template"]?["spec"]
        let container = pod?["containers"]?[0]
        #expect(container?["image"] == "registry.example.com/taksi-server:1.0.0")
        #expect(container?["args"] == ["serve", "--config", "/etc/taksi/config/config.json"])
        #expect(container?["volumeMounts"]?[0]?["mountPath"] == "/etc/taksi/config")
        #expect(container?["volumeMounts"]?[1]?["mountPath"] == "/etc/taksi/screens", "beside the configuration, not inside it")
        #expect(pod?["volumes"]?[1]?["configMap"] == ["name": "taksi-server-screens"], "mounted whole, with no items")
        // 64 MiB of the server, the screens' 2 x 16 x their bytes, and the caches: the memo's and
        // idempotency's 16 MiB each, the upstream cache's 64 MiB twice (bytes and values), and
        // the 256 MiB of earlier sets reloads keep; the manifest's header says so.
        #expect(container?["resources"]?["requests"]?["memory"] == "65Mi", "\(String(describing: container?["resources"]))")
        #expect(container?["resources"]?["limits"]?["memory"] == "481Mi")
        let header = try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n").prefix { $0.hasPrefix("#") }
        #expect(header.contains { $0.contains("Limit 481Mi") }, "\(header)")
        #expect(
            header.contains { $0.contains("the earlier sets reloads keep for skeletons cached before them (256Mi at most)") }, "\(header)")
        #expect(container?["readinessProbe"]?["httpGet"]?["path"] == "/readyz")
        #expect(container?["startupProbe"]?["httpGet"]?["path"] == "/healthz", "a replica waiting for a bundle is not restarted")
        #expect(container?["livenessProbe"]?["httpGet"]?["path"] == "/healthz")
        #expect(pod?["securityContext"]?["runAsUser"] == 10001, "the image's user")
        #expect(pod?["automountServiceAccountToken"] == false, "no service account token: the server calls no Kubernetes API")
        let annotations = objects["Deployment"]?["spec"]?["template"]?["metadata"]?["annotations"]
        #expect(annotations?["prometheus.io/scrape"] == "true")
        #expect(annotations?["prometheus.io/port"] == "8080")
        #expect(annotations?["prometheus.io/path"] == "/metrics")
        #expect(annotations?["checksum/config"]?.stringValue?.count == 16, "a change to the configuration rolls the pods")
        #expect(pod?["terminationGracePeriodSeconds"] == 22, "drain_timeout 12, the preStop pause 5, and 5 to spare")
        #expect(objects["Deployment"]?["spec"]?["replicas"] == 3)
        #expect(objects["HorizontalPodAutoscaler"]?["spec"]?["minReplicas"] == 3)
        #expect(objects["PodDisruptionBudget"]?["spec"]?["minAvailable"] == 2)
        #expect(objects["Service"]?["spec"]?["ports"]?[0]?["targetPort"] == "http")
        for kind in [
            "ConfigMap/taksi-server-config", "ConfigMap/taksi-server-screens", "Deployment", "Service", "HorizontalPodAutoscaler",
            "PodDisruptionBudget",
        ] {
            #expect(objects[kind]?["metadata"]?["namespace"] == "shop", "\(kind)")
        }

        // Each ConfigMap mounted whole, laid out as the kubelet lays a ConfigMap out.
        let (config, screens) = try Self.mount(objects, in: project.appendingPathComponent("mounted"))
        let data = try #require(objects["ConfigMap/taksi-server-screens"]?["data"]?.objectValue)
        #expect(data["fixtures__caf--menu.json"] != nil, "a key holds letters, digits, -, _ and . only")
        #expect(
            ScreenDirectory.files(in: screens.path)?.contains { $0.relativePath == "fixtures/café menu.json" } == true,
            "the file keeps its name")

        let configuration = try ServerConfiguration.resolve(file: config.appendingPathComponent("config.json").path, environment: [:])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 8080)
        #expect(configuration.logFormat == .json, "JSON logs, as the file chose none")
        #expect(configuration.logLevel == .debug, "the project's own settings are kept")
        #expect(configuration.drainTimeout == 12)
        #expect(configuration.upstreams == ["shop": "https://shop.example.com/api"])
        #expect(!configuration.preview, "the live preview is for screen authors, never on in production")
        #expect(configuration.screensDirectory == "/etc/taksi/screens", "where the screens' ConfigMap is mounted")
        let load = ScreenSetLoader.load(directory: screens.path, upstreams: Set(configuration.upstreams.keys))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        let original = ScreenSetLoader.load(directory: project.appendingPathComponent("Screens").path)
        #expect(load.screenSet?.version == original.screenSet?.version, "the same files as the project's Screens/")

        // --check: current, then out of date after an edit.
        let current = try await command.run(
            [
                "deploy", "kubernetes", "--config", "production.json", "--image", "registry.example.com/taksi-server:1.0.0", "--namespace",
                "shop", "--check", "kubernetes.yaml",
            ], in: project)
        #expect(current.status == 0, "\(current.error)")
        let home = project.appendingPathComponent("Screens/home.yaml")
        try Data((String(contentsOf: home, encoding: .utf8) + "\n# edited\n").utf8).write(to: home)
        let stale = try await command.run(
            [
                "deploy", "kubernetes", "--config", "production.json", "--image", "registry.example.com/taksi-server:1.0.0", "--namespace",
                "shop", "--check", "kubernetes.yaml",
            ], in: project)
        #expect(stale.status == 1)
        #expect(
            stale.error.contains("kubernetes.yaml is out of date: run this command again with --output kubernetes.yaml"), "\(stale.error)")
    }

    @Test(
        "no manifest for what would not run: screens with errors, file upstreams, a log file, screens too big for a ConfigMap, a bad name")
    func refusals() throws {
        let project = try Self.makeProject()
        func failure(config: String?, screens: String? = nil, options: KubernetesManifest.Options = .init()) -> String {
            do {
                _ = try KubernetesManifest.make(
                    configurationFile: config.map { project.appendingPathComponent($0).path },
                    screensDirectory: screens ?? project.appendingPathComponent("Screens").path, options: options)
                return "made"
            } catch {
                return error.message
            }
        }
        // A development configuration, whose upstream answers from files the pod does not have.
        let local = #"{"upstreams": {"shop": "file:upstreams/shop"}}"#
        try Data(local.utf8).write(to: project.appendingPathComponent("local.json"))
        #expect(failure(config: "local.json").contains(#"upstream "shop" answers from files"#))
        try Data(#"{"access_log_output": "logs/access.log"}"#.utf8).write(to: project.appendingPathComponent("logged.json"))
        #expect(failure(config: "logged.json").contains("the pod's filesystem is read-only"))
        var badName = KubernetesManifest.Options()
        badName.name = "Taksi_Server"
        #expect(failure(config: nil, options: badName).contains("--name \"Taksi_Server\""))
        #expect(failure(config: "production.json") == "made")

        // A screen the server would refuse: the diagnostics, and nothing made.
        let home = project.appendingPathComponent("Screens/home.yaml")
        let text = try String(contentsOf: home, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "card_component", with: "kard_component").utf8).write(to: home)
        let broken = failure(config: "production.json")
        #expect(broken.contains("home.yaml:"), "\(broken)")
        #expect(broken.contains("no manifest made: fix the screens first"), "\(broken)")
        try Data(text.utf8).write(to: home)

        // A link out of the screens directory: its target (any file of this machine) is not shipped.
        let outside = Scratch.path("outside", suffix: ".json")
        try Data(#"{"secret": "of this machine"}"#.utf8).write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        let link = project.appendingPathComponent("Screens/fixtures/outside.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: outside.path)
        let linked = failure(config: "production.json")
        #expect(linked.contains("fixtures/outside.json: a link to a file outside"), "\(linked)")
        try FileManager.default.removeItem(at: link)
        // A link inside it, as the kubelet's layout has, is followed.
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: project.appendingPathComponent("Screens/home.yaml").path)
        #expect(failure(config: "production.json") == "made")
        try FileManager.default.removeItem(at: link)

        let big = String(repeating: "x", count: 1_100_000)
        try Data(#"{"padding": "\#(big)"}"#.utf8).write(to: project.appendingPathComponent("Screens/fixtures/big.json"))
        #expect(failure(config: "production.json").contains("a ConfigMap holds at most 1 MiB"))
    }

    /// The manifest's ConfigMaps published as the kubelet publishes them, under `folder`: the
    /// configuration's and the screens' volumes.
    static func mount(_ objects: JSONValue, in folder: URL) throws -> (config: URL, screens: URL) {
        let config = folder.appendingPathComponent("config")
        let screens = folder.appendingPathComponent("screens")
        try publish(objects, "taksi-server-config", to: config)
        try publish(objects, "taksi-server-screens", to: screens)
        return (config, screens)
    }

    static func publish(_ objects: JSONValue, _ name: String, to volume: URL) throws {
        let data = try #require(objects["ConfigMap/\(name)"]?["data"]?.objectValue)
        try KubeletVolume(mount: volume).publish(data.compactMapValues(\.stringValue))
    }

    @Test(
        "a screen file added to the project reaches running pods: only the screens' ConfigMap changes, and the server serves it after the kubelet's swap",
        .enabled(if: pythonHas("yaml"), "needs python3 -m pip install pyyaml (.ci/run installs it)")
    )
    func addedFileReachesPods() async throws {
        let project = try Self.makeProject()
        let command = CommandLineTests()
        let arguments = ["deploy", "kubernetes", "--config", "production.json", "--output", "kubernetes.yaml"]
        try await #require(try command.run(arguments, in: project).status == 0)
        let before = try await Self.objects(of: project.appendingPathComponent("kubernetes.yaml"))
        let home = try String(contentsOf: project.appendingPathComponent("Screens/home.yaml"), encoding: .utf8)
        try FileManager.default.createDirectory(at: project.appendingPathComponent("Screens/more"), withIntermediateDirectories: true)
        try Data(
            home.replacingOccurrences(of: "name: home", with: "name: more/news").replacingOccurrences(
                of: "entry: true", with: "entry: false"
            ).utf8
        )
        .write(to: project.appendingPathComponent("Screens/more/news.yaml"))
        try await #require(try command.run(arguments, in: project).status == 0)
        let after = try await Self.objects(of: project.appendingPathComponent("kubernetes.yaml"))
        #expect(after["Deployment"] == before["Deployment"], "the Deployment is unchanged: no pod restarts")
        #expect(after["ConfigMap/taksi-server-config"] == before["ConfigMap/taksi-server-config"])
        #expect(after["ConfigMap/taksi-server-screens"]?["data"]?["more__news.yaml"] != nil)

        // A pod of the first manifest, whose volume the kubelet then updates to the second.
        let mounted = project.appendingPathComponent("mounted")
        let (_, screens) = try Self.mount(before, in: mounted)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.screensDirectory = screens.path
        configuration.upstreams = ["shop": "https://shop.example.com/api"]
        let application = try buildApplication(configuration: configuration, logger: testLogger("pod"))
        #expect(try await application.execute(.GET, uri: "/screens/more/news").status == .notFound)
        try Self.publish(after, "taksi-server-screens", to: screens)
        #expect(application.watcher?.reload() == true)
        #expect(try await application.execute(.GET, uri: "/screens/more/news").status == .ok)
        #expect(try await application.execute(.GET, uri: "/screens/home").status == .ok)

        // The configuration is read at start-up: a change to it changes the pods, so they restart.
        try Data(#"{"screens": "Screens", "log_level": "info", "upstreams": {"shop": "https://shop.example.com/api/"}}"#.utf8)
            .write(to: project.appendingPathComponent("production.json"))
        try await #require(try command.run(arguments, in: project).status == 0)
        let reconfigured = try await Self.objects(of: project.appendingPathComponent("kubernetes.yaml"))
        let annotation = { (objects: JSONValue) in
            objects["Deployment"]?["spec"]?["template"]?["metadata"]?["annotations"]?["checksum/config"]
        }
        #expect(annotation(reconfigured) != annotation(after))
    }

    @Test("a screens directory's path index maps flat names to paths, and a broken one is reported at the file")
    func pathIndex() throws {
        let directory = Scratch.path("index")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(ConfigMapVolumeTests.screen("One").utf8).write(to: directory.appendingPathComponent("start.json"))
        try Data(#"{"name": "a/b", "components": []}"#.utf8).write(to: directory.appendingPathComponent("a__b.json"))
        let index = directory.appendingPathComponent(ScreenDirectory.pathIndexName)
        try Data(#"{"a__b.json": "a/b.json", "start.json": "start.json"}"#.utf8).write(to: index)
        #expect(ScreenDirectory.files(in: directory.path)?.map(\.relativePath) == ["a/b.json", "start.json"])
        let load = ScreenSetLoader.load(directory: directory.path)
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        #expect(load.screenSet?.names.sorted() == ["a/b", "start"])

        for (text, message) in [
            ("[1]", "not a JSON object of names and paths"), (#"{"a__b.json": "../b.json"}"#, "must be relative, inside the directory"),
            (#"{"a__b.json": "b.json", "start.json": "b.json"}"#, "two names stand for the same path"),
        ] {
            try Data(text.utf8).write(to: index)
            let broken = ScreenSetLoader.load(directory: directory.path)
            #expect(
                broken.diagnostics.contains { $0.file.hasSuffix(ScreenDirectory.pathIndexName) && $0.message.contains(message) },
                "\(text): \(broken.diagnostics.report)")
        }
    }

    @Test(
        "--store: pods serve the screens published to the store, its URL from a Secret; the ConfigMap holds only the configuration",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func store() async throws {
        let project = try Self.makeProject()
        let production =
            #"{"log_level": "debug", "store": "postgres://taksi:hunter2@db:5432/taksi", "upstreams": {"shop": "https://shop.example.com/api/"}}"#
        try Data(production.utf8).write(to: project.appendingPathComponent("production.json"))
        let made = try await CommandLineTests().run(
            ["deploy", "kubernetes", "--config", "production.json", "--store", "taksi-store", "--output", "kubernetes.yaml"], in: project)
        try #require(made.status == 0, "\(made.error)")
        #expect(made.error.contains("1 screen checked, served from the store (taksi-server publish them)"), "\(made.error)")
        let manifest = project.appendingPathComponent("kubernetes.yaml")
        let validation = try await runTool(["python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path])
        #expect(validation.status == 0, "\(validation.output)")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(!text.contains("hunter2"), "the store's URL is never in the manifest")
        #expect(text.contains("kubectl create secret generic taksi-store"))

        let objects = try await Self.objects(of: manifest)
        guard case .object(let data)? = objects["ConfigMap/taksi-server-config"]?["data"] else {
            Issue.record("no ConfigMap data")
            return
        }
        #expect(Array(data.keys) == ["config.json"], "no screens in the ConfigMap")
        #expect(objects["ConfigMap/taksi-server-screens"] == nil, "no screens' ConfigMap")
        let resources = objects["Deployment"]?["spec"]?["template"]?["spec"]?["containers"]?[0]?["resources"]
        #expect(
            resources?["limits"]?["memory"] == "737Mi",
            "the kept published sets' 256 MiB added to the earlier sets' 256 MiB: \(String(describing: resources))")
        let shipped = try JSONDecoder().decode(JSONValue.self, from: Data((data["config.json"]?.stringValue ?? "").utf8))
        #expect(shipped["screens_source"] == "store")
        #expect(shipped["store"] == nil)
        #expect(shipped["screens"] == nil)
        let container = objects["Deployment"]?["spec"]?["template"]?["spec"]?["containers"]?[0]
        #expect(container?["env"]?[0]?["name"] == "TAKSI_STORE")
        #expect(container?["env"]?[0]?["valueFrom"]?["secretKeyRef"] == ["name": "taksi-store", "key": "url"])

        let refused = try await CommandLineTests().run(
            ["deploy", "kubernetes", "--config", "production.json", "--store", "Taksi Store"], in: project)
        #expect(refused.status == 1)
        #expect(refused.error.contains("--store \"Taksi Store\": name a Secret"))
    }

    @Test(
        "upstream credentials and CDN tokens: variables from a Secret's keys, files mounted from it, the configuration pointing at them; no secret and no OpenAPI document shipped",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func credentials() async throws {
        let project = try Self.makeProject()
        let production = #"""
            {"upstreams": {
              "shop": {"url": "https://shop.example.com/api", "openapi": "openapi/shop.json", "auth": {"bearer": {"env": "SHOP_TOKEN"}}},
              "legacy": {"url": "https://legacy.example.com", "auth": {"basic": {"username": {"env": "LEGACY_USER"}, "password": {"file": "secrets/legacy password"}}}}
            },
             "cdn": {"purge": [{"fastly": {"service_id": "s1", "token": {"env": "FASTLY_API_TOKEN"}}},
                               {"cloudflare": {"zone_id": "z1", "token": {"file": "secrets/cloudflare"}}}]},
             "page_token_keys": [{"id": "2026-11", "secret": {"file": "secrets/page-key"}}]}
            """#
        try Data(production.utf8).write(to: project.appendingPathComponent("production.json"))
        try FileManager.default.createDirectory(at: project.appendingPathComponent("openapi"), withIntermediateDirectories: true)
        try Data(#"{"openapi": "3.1.0", "info": {"title": "Shop", "version": "1"}, "paths": {}}"#.utf8)
            .write(to: project.appendingPathComponent("openapi/shop.json"))
        let made = try await CommandLineTests().run(
            ["deploy", "kubernetes", "--config", "production.json", "--output", "kubernetes.yaml"], in: project)
        try #require(made.status == 0, "\(made.error)")
        let manifest = project.appendingPathComponent("kubernetes.yaml")
        let validation = try await runTool(["python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path])
        #expect(validation.status == 0, "\(validation.output)")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(
            text.contains(
                "kubectl create secret generic taksi-server-upstream-credentials --from-literal=FASTLY_API_TOKEN=... --from-literal=LEGACY_USER=... --from-literal=SHOP_TOKEN=... --from-file=cloudflare=secrets/cloudflare --from-file=legacy-password='secrets/legacy password' --from-file=page-key=secrets/page-key"
            ), "\(text.prefix(800))")

        let objects = try await Self.objects(of: manifest)
        let pod = objects["Deployment"]?["spec"]?["template"]?["spec"]
        let container = pod?["containers"]?[0]
        #expect(container?["env"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["FASTLY_API_TOKEN", "LEGACY_USER", "SHOP_TOKEN"])
        #expect(container?["env"]?[2]?["valueFrom"]?["secretKeyRef"] == ["name": "taksi-server-upstream-credentials", "key": "SHOP_TOKEN"])
        #expect(
            container?["volumeMounts"]?.arrayValue?.contains([
                "name": "credentials", "mountPath": "/etc/taksi/credentials", "readOnly": true,
            ])
                == true)
        #expect(
            pod?["volumes"]?.arrayValue?.first { $0["name"] == "credentials" }?["secret"]
                == [
                    "secretName": "taksi-server-upstream-credentials",
                    "items": [
                        ["key": "cloudflare", "path": "cloudflare"], ["key": "legacy-password", "path": "legacy-password"],
                        ["key": "page-key", "path": "page-key"],
                    ],
                ])
        let config = objects["ConfigMap/taksi-server-config"]?["data"]?["config.json"]?.stringValue ?? ""
        let shipped = try JSONDecoder().decode(JSONValue.self, from: Data(config.utf8))
        #expect(shipped["upstreams"]?["shop"] == ["url": "https://shop.example.com/api", "auth": ["bearer": ["env": "SHOP_TOKEN"]]])
        #expect(
            shipped["upstreams"]?["legacy"]?["auth"]?["basic"]?["password"] == ["file": "/etc/taksi/credentials/legacy-password"])
        #expect(shipped["cdn"]?["purge"]?[1]?["cloudflare"]?["token"] == ["file": "/etc/taksi/credentials/cloudflare"])
        #expect(shipped["cdn"]?["purge"]?[0]?["fastly"]?["token"] == ["env": "FASTLY_API_TOKEN"])
        #expect(shipped["page_token_keys"] == [["id": "2026-11", "secret": ["file": "/etc/taksi/credentials/page-key"]]])
    }

    @Test("ConfigMap keys stay within 253 characters when long paths are cut to the same key")
    func longKeys() throws {
        let directory = Scratch.path("keys")
        let folder = directory.appendingPathComponent(String(repeating: "f", count: 200))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["json", "yaml", "yml"] {
            try Data("{}".utf8).write(to: folder.appendingPathComponent(String(repeating: "n", count: 60) + "." + name))
        }
        let files = try KubernetesManifest.mountedFiles(of: directory.path)
        #expect(files.count == 3)
        #expect(Set(files.map(\.key)).count == 3, "\(files.map(\.key))")
        #expect(files.allSatisfy { $0.key.count <= 253 }, "\(files.map(\.key.count))")
    }

    @Test(
        "deploy/kubernetes.yaml is what deploy kubernetes makes of the example screens (after changing Screens/, run the command it names)")
    func examplesManifestIsCurrent() async throws {
        let result = try await CommandLineTests().run([
            "deploy", "kubernetes", "--config", "deploy/container-config.json", "--screens", "Screens", "--check", "deploy/kubernetes.yaml",
        ])
        #expect(result.status == 0, "\(result.error)")
        // The examples' lists continue: every replica gets the one page token key from the Secret.
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("deploy/kubernetes.yaml"), encoding: .utf8)
        #expect(text.contains("kubectl create secret generic taksi-server-upstream-credentials --from-literal=PAGE_TOKEN_KEY=..."))
        #expect(text.contains(#""page_token_keys": ["#) && text.contains(#""env": "PAGE_TOKEN_KEY""#))
    }
}

extension JSONValue {
    /// An array's element, nil out of range or for anything else.
    fileprivate subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
