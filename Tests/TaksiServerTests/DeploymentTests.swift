import Foundation
import TaksiSchema
import TaksiScreens
import TaksiServer
import Testing

/// deploy/kubernetes.yaml: current, valid against the Kubernetes schemas, and deployable: the
/// files its ConfigMap mounts, laid out as the kubelet lays them out, load as a valid screen set
/// with its configuration.
@Suite("Deployment")
struct DeploymentTests {
    @Test(
        "the manifest is up to date with Screens/ and passes the Kubernetes 1.30 schemas",
        .enabled(if: pythonHas("yaml", "kubernetes_validate"), "needs python3 -m pip install pyyaml kubernetes-validate (.ci/run installs them)")
    )
    func valid() throws {
        let current = try runTool(["python3", "scripts/render-kubernetes.py", "--check"])
        #expect(current.status == 0, "\(current.output)")
        let validation = try runTool([
            "python3", "-m", "kubernetes_validate", "-k", "1.30.0", "--strict", "deploy/kubernetes.yaml",
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
            import json, os, sys, yaml
            documents = {d["kind"]: d for d in yaml.safe_load_all(open("deploy/kubernetes.yaml"))}
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
        guard case .object(let mounted)? = facts["files"] else { Issue.record("no files: \(result.output)"); return }
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
        let load = ScreenSetLoader.load(directory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        #expect(load.screenSet?.names == exampleScreens.names)
        #expect(load.screenSet?.version == exampleScreens.version, "the same files as Screens/")
    }
}
