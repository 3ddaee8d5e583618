import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// `taksi-server deploy kubernetes` on a project of its own (the starter `init` writes, with a
/// production configuration): valid against the Kubernetes schemas, and deployable: the files its
/// ConfigMap mounts, laid out as the kubelet lays them out, load as the same screen set with the
/// production settings. Then what it refuses, and that deploy/kubernetes.yaml is current.
@Suite("Deployment")
struct DeploymentTests {
    /// A starter project with a production configuration and a file whose name a ConfigMap key cannot hold.
    static func makeProject() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-deploy-\(UUID().uuidString)")
        _ = try StarterProject.create(in: folder)
        let production =
            #"{"screens": "Screens", "log_level": "debug", "drain_timeout": 12, "upstreams": {"shop": "https://shop.example.com/api/"}}"#
        try Data(production.utf8).write(to: folder.appendingPathComponent("production.json"))
        try Data(#"{"note": "a fixture nothing reads"}"#.utf8).write(to: folder.appendingPathComponent("Screens/fixtures/café menu.json"))
        return folder
    }

    /// The manifest's objects by kind, as JSON (read by PyYAML, an independent YAML reader).
    static func objects(of manifest: URL) throws -> JSONValue {
        let script = """
            import json, sys, yaml
            print(json.dumps({d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1], encoding="utf-8"))}))
            """
        let result = try runTool(["python3", "-c", script, manifest.path])
        try #require(result.status == 0, "\(result.output)")
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.output.utf8))
    }

    @Test(
        "a project's manifest passes the Kubernetes 1.30 schemas, and what it mounts loads as the project with production settings",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func project() throws {
        let project = try Self.makeProject()
        let command = CommandLineTests()
        let made = try command.run(
            [
                "deploy", "kubernetes", "--config", "production.json", "--image", "registry.example.com/taksi-server:1.0.0",
                "--namespace", "shop", "--output", "kubernetes.yaml",
            ], in: project)
        try #require(made.status == 0, "\(made.error)")
        #expect(made.error.hasPrefix("Wrote kubernetes.yaml: taksi-server: 1 screen, 4 files, "), "\(made.error)")
        let manifest = project.appendingPathComponent("kubernetes.yaml")

        let validation = try runTool(["python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path])
        #expect(validation.status == 0, "\(validation.output)")
        #expect(validation.output.components(separatedBy: " passed for resource ").count == 6, "five objects: \(validation.output)")

        let objects = try Self.objects(of: manifest)
        let pod = objects["Deployment"]?["spec"]?["template"]?["spec"]
        let container = pod?["containers"]?[0]
        #expect(container?["image"] == "registry.example.com/taksi-server:1.0.0")
        #expect(container?["args"] == ["serve", "--config", "/etc/taksi/config.json"])
        #expect(container?["volumeMounts"]?[0]?["mountPath"] == "/etc/taksi")
        #expect(container?["readinessProbe"]?["httpGet"]?["path"] == "/readyz")
        #expect(container?["livenessProbe"]?["httpGet"]?["path"] == "/healthz")
        #expect(pod?["securityContext"]?["runAsUser"] == 10001, "the image's user")
        #expect(pod?["automountServiceAccountToken"] == false, "no service account token: the server calls no Kubernetes API")
        let annotations = objects["Deployment"]?["spec"]?["template"]?["metadata"]?["annotations"]
        #expect(annotations == ["prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"])
        #expect(pod?["terminationGracePeriodSeconds"] == 22, "drain_timeout 12, the preStop pause 5, and 5 to spare")
        #expect(objects["Deployment"]?["spec"]?["replicas"] == 3)
        #expect(objects["HorizontalPodAutoscaler"]?["spec"]?["minReplicas"] == 3)
        #expect(objects["PodDisruptionBudget"]?["spec"]?["minAvailable"] == 2)
        #expect(objects["Service"]?["spec"]?["ports"]?[0]?["targetPort"] == "http")
        for kind in ["ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"] {
            #expect(objects[kind]?["metadata"]?["namespace"] == "shop", "\(kind)")
        }

        // Every key mounted, at the file's real path, laid out as the kubelet lays a ConfigMap out.
        guard case .object(let data)? = objects["ConfigMap"]?["data"], case .array(let items)? = pod?["volumes"]?[0]?["configMap"]?["items"]
        else {
            Issue.record("no ConfigMap data or items")
            return
        }
        var mounted: [String: String] = [:]
        for item in items {
            guard let key = item["key"]?.stringValue, let path = item["path"]?.stringValue, let text = data[key]?.stringValue else {
                continue
            }
            mounted[path] = text
        }
        #expect(Set(data.keys) == Set(items.compactMap { $0["key"]?.stringValue }), "every key is mounted")
        #expect(data["Screens__fixtures__caf--menu.json"] != nil, "a key holds letters, digits, -, _ and . only")
        #expect(mounted["Screens/fixtures/café menu.json"] != nil, "the file keeps its name")
        let volume = project.appendingPathComponent("mounted")
        try KubeletVolume(mount: volume).publish(mounted)

        let configuration = try ServerConfiguration.resolve(file: volume.appendingPathComponent("config.json").path, environment: [:])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 8080)
        #expect(configuration.logFormat == .json, "JSON logs, as the file chose none")
        #expect(configuration.logLevel == .debug, "the project's own settings are kept")
        #expect(configuration.drainTimeout == 12)
        #expect(configuration.upstreams == ["shop": "https://shop.example.com/api"])
        #expect(!configuration.preview, "the live preview is for screen authors, never on in production")
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        let original = ScreenSetLoader.load(directory: project.appendingPathComponent("Screens").path)
        #expect(load.screenSet?.version == original.screenSet?.version, "the same files as the project's Screens/")

        // --check: current, then out of date after an edit.
        let current = try command.run(
            [
                "deploy", "kubernetes", "--config", "production.json", "--image", "registry.example.com/taksi-server:1.0.0", "--namespace",
                "shop", "--check", "kubernetes.yaml",
            ], in: project)
        #expect(current.status == 0, "\(current.error)")
        let home = project.appendingPathComponent("Screens/home.yaml")
        try Data((String(contentsOf: home, encoding: .utf8) + "\n# edited\n").utf8).write(to: home)
        let stale = try command.run(
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
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-outside-\(UUID().uuidString).json")
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

    @Test(
        "--store: pods serve the screens published to the store, its URL from a Secret; the ConfigMap holds only the configuration",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func store() throws {
        let project = try Self.makeProject()
        let production =
            #"{"log_level": "debug", "store": "postgres://taksi:hunter2@db:5432/taksi", "upstreams": {"shop": "https://shop.example.com/api/"}}"#
        try Data(production.utf8).write(to: project.appendingPathComponent("production.json"))
        let made = try CommandLineTests().run(
            ["deploy", "kubernetes", "--config", "production.json", "--store", "taksi-store", "--output", "kubernetes.yaml"], in: project)
        try #require(made.status == 0, "\(made.error)")
        #expect(made.error.contains("1 screen checked, served from the store (taksi-server publish them)"), "\(made.error)")
        let manifest = project.appendingPathComponent("kubernetes.yaml")
        let validation = try runTool(["python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path])
        #expect(validation.status == 0, "\(validation.output)")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(!text.contains("hunter2"), "the store's URL is never in the manifest")
        #expect(text.contains("kubectl create secret generic taksi-store"))

        let objects = try Self.objects(of: manifest)
        guard case .object(let data)? = objects["ConfigMap"]?["data"] else {
            Issue.record("no ConfigMap data")
            return
        }
        #expect(Array(data.keys) == ["config.json"], "no screens in the ConfigMap")
        let shipped = try JSONDecoder().decode(JSONValue.self, from: Data((data["config.json"]?.stringValue ?? "").utf8))
        #expect(shipped["screens_source"] == "store")
        #expect(shipped["store"] == nil)
        #expect(shipped["screens"] == nil)
        let container = objects["Deployment"]?["spec"]?["template"]?["spec"]?["containers"]?[0]
        #expect(container?["env"]?[0]?["name"] == "TAKSI_STORE")
        #expect(container?["env"]?[0]?["valueFrom"]?["secretKeyRef"] == ["name": "taksi-store", "key": "url"])

        let refused = try CommandLineTests().run(
            ["deploy", "kubernetes", "--config", "production.json", "--store", "Taksi Store"], in: project)
        #expect(refused.status == 1)
        #expect(refused.error.contains("--store \"Taksi Store\": name a Secret"))
    }

    @Test("ConfigMap keys stay within 253 characters when long paths are cut to the same key")
    func longKeys() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-keys-\(UUID().uuidString)")
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
    func examplesManifestIsCurrent() throws {
        let result = try CommandLineTests().run([
            "deploy", "kubernetes", "--config", "deploy/container-config.json", "--screens", "Screens", "--check", "deploy/kubernetes.yaml",
        ])
        #expect(result.status == 0, "\(result.error)")
    }
}

extension JSONValue {
    /// An array's element, nil out of range or for anything else.
    fileprivate subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
