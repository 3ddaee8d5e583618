import Foundation
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// The Kubernetes manifest that `scripts/render-kubernetes.py` makes: valid against the Kubernetes
/// schemas, and deployable: the files its ConfigMap mounts, laid out as the kubelet lays them out,
/// load as a valid screen set with its configuration. (That deploy/kubernetes.yaml is current
/// with Screens/ is the examples' own check, in ExampleScreensTests.)
@Suite("Deployment")
struct DeploymentTests {
    @Test(
        "the manifest passes the Kubernetes 1.30 schemas",
        .enabled(
            if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func valid() throws {
        let manifest = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-manifest-\(UUID().uuidString).yaml")
        let rendered = try runTool(["python3", "scripts/render-kubernetes.py", "--stdout"])
        try #require(rendered.status == 0, "\(rendered.output)")
        try Data(rendered.output.utf8).write(to: manifest)
        let validation = try runTool([
            "python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", manifest.path,
        ])
        #expect(validation.status == 0, "python3 -m pip install kubernetes-validate where missing: \(validation.output)")
        #expect(validation.output.components(separatedBy: " passed for resource ").count == 6, "\(validation.output)")
    }

    @Test(
        "what the ConfigMap mounts loads: a valid screen set and configuration; probes, replicas and user are right",
        .enabled(if: pythonHas("yaml"), "needs python3 -m pip install pyyaml (.ci/run installs it)")
    )
    func deployable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-k8s-\(UUID().uuidString)")
        // Prints each mounted item's path and content, and the facts checked below.
        let script = """
            import json, os, subprocess, sys, yaml
            documents = {d["kind"]: d for d in yaml.safe_load_all(subprocess.run(
                [sys.executable, "scripts/render-kubernetes.py", "--stdout"], check=True, capture_output=True, text=True).stdout)}
            data = documents["ConfigMap"]["data"]
            pod = documents["Deployment"]["spec"]["template"]["spec"]
            container = pod["containers"][0]
            mount = container["volumeMounts"][0]["mountPath"]
            print(json.dumps({
                "files": {item["path"]: data[item["key"]] for item in pod["volumes"][0]["configMap"]["items"]},
                "mount": mount, "args": container["args"], "replicas": documents["Deployment"]["spec"]["replicas"],
                "readiness": container["readinessProbe"]["httpGet"]["path"], "liveness": container["livenessProbe"]["httpGet"]["path"],
                "user": pod["securityContext"]["runAsUser"], "nonRoot": pod["securityContext"]["runAsNonRoot"],
                "unmounted": sorted(set(data) - {i["key"] for i in pod["volumes"][0]["configMap"]["items"]}),
                "service": documents["Service"]["spec"]["ports"][0]["targetPort"], "minReplicas": documents["HorizontalPodAutoscaler"]["spec"]["minReplicas"],
            }))
            """
        let result = try runTool(["python3", "-c", script])
        try #require(result.status == 0, "\(result.output)")
        let facts = try JSONDecoder().decode(JSONValue.self, from: Data(result.output.utf8))
        // Laid out exactly as the kubelet mounts a ConfigMap with items: links into a timestamped folder.
        guard case .object(let mounted)? = facts["files"] else {
            Issue.record("no files: \(result.output)")
            return
        }
        try KubeletVolume(mount: directory).publish(mounted.compactMapValues { if case .string(let text) = $0 { text } else { nil } })
        #expect(facts["args"] == ["serve", "--config", "/etc/taksi/config.json"])
        #expect(facts["mount"] == "/etc/taksi")
        #expect(facts["replicas"] == 3)
        #expect(facts["minReplicas"] == 3)
        #expect(facts["readiness"] == "/readyz")
        #expect(facts["liveness"] == "/healthz")
        #expect(facts["nonRoot"] == true)
        #expect(facts["user"] == 10001, "the image's user")
        #expect(facts["service"] == "http")
        #expect(facts["unmounted"] == [], "every ConfigMap key is mounted")

        let configuration = try ServerConfiguration.resolve(file: directory.appendingPathComponent("config.json").path, environment: [:])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.logFormat == .json)
        #expect(!configuration.preview, "the live preview is for screen authors, never on in production")
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        let repository = ScreenSetLoader.load(directory: repositoryRoot.appendingPathComponent("Screens").path)
        #expect(load.screenSet?.names == repository.screenSet?.names)
        #expect(load.screenSet?.version == repository.screenSet?.version, "the same files as Screens/")
    }
}
