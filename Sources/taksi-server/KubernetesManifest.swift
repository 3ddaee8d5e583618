import Foundation
import TaksiSchema
import TaksiScreens
import TaksiServer
import Yams

/// A Kubernetes manifest for any project (`taksi-server deploy kubernetes`): a ConfigMap with the
/// production configuration, a ConfigMap with every file of the screens directory, a Deployment
/// that mounts them, a Service, a HorizontalPodAutoscaler and a PodDisruptionBudget.
///
/// The screens are checked first, against the configuration's upstreams: a manifest is never made
/// for a set the server would refuse to start with. The configuration shipped is the project's,
/// with what a pod needs put over it: every interface, port 8080, the mounted screens, JSON logs
/// unless the file chose a format, no preview. Screens change with `kubectl apply`; the kubelet
/// updates the mounted files and the server reloads them (the watch is on by default). The screens'
/// ConfigMap is mounted whole (no `items:`): its keys are flat (`bikes__stations.yaml`), and
/// ``ScreenDirectory/pathIndexName`` maps them to their paths, so a file added to the screens
/// changes only the ConfigMap and reaches the running pods. A change to the configuration, which
/// the server reads at start-up, changes the pods' `checksum/config` annotation and rolls them.
struct KubernetesManifest: Sendable {
    /// What the command line can choose.
    struct Options: Sendable, Equatable {
        /// The name of every object, and the `app.kubernetes.io/name` label.
        var name = "taksi-server"
        /// The namespace written into each object; none (kubectl's current one) by default.
        var namespace: String?
        /// The image to run: the one `docker build -t taksi-server:VERSION .` makes by default.
        var image = "taksi-server:\(TaksiServerVersion.current)"
        /// Replicas, and the autoscaler's minimum.
        var replicas = 3
        /// The Secret whose key `url` holds the fleet's store (`TAKSI_STORE`): set, the pods serve
        /// the screens published to the store (`taksi-server publish`), and the ConfigMap holds
        /// only the configuration. Nil ships the screens in the ConfigMap.
        var storeSecret: String?
        /// Adds a ServiceMonitor, for clusters where the Prometheus Operator scrapes.
        var serviceMonitor = false

        init() {}
    }

    /// Why no manifest was made, with the fix.
    struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Where the configuration's ConfigMap is mounted: `config.json` is in it.
    static let configurationMountPath = "/etc/taksi/config"
    /// Where the screens' ConfigMap is mounted: beside the configuration's, not in it (a mount
    /// point inside a ConfigMap's read-only volume cannot be made).
    static let screensMountPath = "/etc/taksi/screens"
    /// The port the server listens on in the pod.
    static let containerPort = 8080
    /// A ConfigMap holds at most 1 MiB; this leaves room for its keys and metadata (the screens'
    /// ConfigMap and the configuration's are counted together, a margin for both).
    static let maximumBytes = 1_000_000
    /// The variable of the page token key a manifest gives the pods when the configuration names
    /// none and the screens have lists that continue.
    static let pageTokenKeyVariable = "PAGE_TOKEN_KEY"

    /// Where the upstream credentials' Secret is mounted, for credentials read from files.
    static let credentialsMountPath = "/etc/taksi/credentials"
    /// Seconds the preStop hook waits, so load balancers stop routing to a pod before it drains.
    static let preStopSeconds = 5

    /// The manifest's YAML.
    var text: String
    /// One line for the terminal: what it holds.
    var summary: String

    /// Makes the manifest of the screens in `screensDirectory` (default: the configuration file's
    /// `screens`, else `Screens`) served with the settings of `configurationFile`.
    /// - Throws: ``Failure`` for an invalid screen set (with its diagnostics), a configuration that
    ///   cannot work in a pod, or screens too large for a ConfigMap.
    static func make(
        configurationFile: String?, screensDirectory: String?, options: Options = Options()
    ) throws(Failure) -> KubernetesManifest {
        try check(options)
        var settings = try productionSettings(from: configurationFile)
        let directory = screensDirectory ?? settings.screensDirectory
        let load = ScreenSetLoader.load(
            directory: directory, upstreams: settings.upstreams, upstreamDocuments: settings.upstreamDocuments)
        guard let screenSet = load.screenSet, !load.diagnostics.containsErrors else {
            let report = load.diagnostics.isEmpty ? "" : load.diagnostics.report + "\n"
            throw Failure(message: report + load.summary + "\nno manifest made: fix the screens first (taksi-server validate)")
        }
        // Lists that continue need one page token key for every replica (a key made by each pod
        // would refuse the others' tokens): from the Secret, when the configuration names none.
        let pages = screenSet.screens.values.contains { $0.all.contains { !$0.dataPlan.pagedLists.isEmpty } }
        var pagesNote = ""
        if pages, settings.members["page_token_keys"] == nil {
            settings.members["page_token_keys"] = [["id": "1", "secret": ["env": .string(Self.pageTokenKeyVariable)]]]
            settings.credentials.add(variable: Self.pageTokenKeyVariable)
            pagesNote =
                "# The screens have lists that continue: every replica signs their page tokens with \(Self.pageTokenKeyVariable),\n"
                + "# 32 random bytes or more (openssl rand -base64 32), in the Secret below (docs/data-sources.md#lists-that-continue).\n"
        }
        // With the store, the screens are published there, not shipped: only the configuration is.
        let files = options.storeSecret == nil ? try mountedFiles(of: directory) : []
        var members = settings.members
        members["upstreams"] = settings.credentials.shippedUpstreams(members["upstreams"])
        members["cdn"] = settings.credentials.shipped(members["cdn"])
        members["page_token_keys"] = settings.credentials.shipped(members["page_token_keys"])
        if options.storeSecret != nil {
            members["screens_source"] = .string("store")
            members["screens"] = nil
            members["store"] = nil  // from the Secret, never in a ConfigMap
        }
        let configJSON = JSONWriter.string(.object(members), pretty: true)
        let total = files.reduce(configJSON.utf8.count) { $0 + $1.text.utf8.count }
        guard total <= maximumBytes else {
            throw Failure(
                message: "the screens and configuration are \(total) bytes, and a ConfigMap holds at most 1 MiB: "
                    + "build an image with the screens in it instead (the Dockerfile that taksi-server init writes) and deploy that"
            )
        }
        let memory = MemoryBudget(
            settings: settings, screensBytes: ScreenDirectory.files(in: directory)?.reduce(0) { $0 + $1.size } ?? 0,
            store: options.storeSecret != nil || settings.members["store"] != nil)
        let documents = objects(
            files: files, configJSON: configJSON,
            pod: PodSettings(drainTimeout: settings.drainTimeout, credentials: settings.credentials, memory: memory),
            options: options)
        let generated =
            options.storeSecret.map { secret in
                """
                # Generated by `taksi-server deploy kubernetes --store \(secret)` from \(configurationFile ?? "the default configuration").
                # The pods serve the screens published to the fleet's store (docs/fleet.md); its URL comes from the
                # Secret \(secret), key url. Before the first kubectl apply -f THIS_FILE:
                #   kubectl create secret generic \(secret) --from-literal=url='postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=require'
                #   TAKSI_STORE='postgres://...' taksi-server publish \(directory)\(configurationFile.map { " --config \($0)" } ?? "")
                # Publish again after changing the screens; regenerate this file after changing the configuration.
                # The image is \(options.image); push the one you build to your registry and pass --image.

                """
            }
                ?? """
                # Generated by `taksi-server deploy kubernetes` from \(directory)\(configurationFile.map { " and \($0)" } ?? "").
                # Regenerate it after changing the screens, then: kubectl apply -f THIS_FILE
                # The image is \(options.image); push the one you build to your registry and pass --image.

                """
        let header =
            generated + memory.explanation + pagesNote
            + settings.credentials.instructions(secret: "\(options.name)-\(UpstreamSecrets.suffix)")
        let body: String
        do {
            body = try Yams.serialize(nodes: documents, width: 120, allowUnicode: true, explicitStart: true)
        } catch {
            throw Failure(message: "the manifest could not be written as YAML: \(error)")
        }
        let screenCount = screenSet.names.count
        let screens = "\(screenCount) screen\(screenCount == 1 ? "" : "s")"
        return KubernetesManifest(
            text: header + body,
            summary: options.storeSecret == nil
                ? "\(options.name): \(screens), \(files.count) files, \(total) bytes in the ConfigMaps"
                : "\(options.name): \(screens) checked, served from the store (taksi-server publish them); the configuration in the ConfigMap"
        )
    }

    // MARK: - Inputs

    private static func check(_ options: Options) throws(Failure) {
        // A DNS-1123 label: Services need it, and every object shares the name.
        let name = options.name
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        guard !name.isEmpty, name.count <= 63, allowed, name.first != "-", name.last != "-", name.first?.isLetter == true else {
            throw Failure(
                message:
                    "--name \"\(name)\": use lower-case letters, digits and '-', starting with a letter (at most 63), like taksi-server")
        }
        if let namespace = options.namespace {
            let valid = namespace.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
            guard !namespace.isEmpty, namespace.count <= 63, valid, namespace.first != "-", namespace.last != "-" else {
                throw Failure(message: "--namespace \"\(namespace)\": use lower-case letters, digits and '-' (at most 63)")
            }
        }
        guard !options.image.isEmpty, !options.image.contains(where: \.isWhitespace) else {
            throw Failure(message: "--image must name an image, like registry.example.com/taksi-server:1.0.0")
        }
        guard (1...1000).contains(options.replicas) else {
            throw Failure(message: "--replicas must be between 1 and 1000, found \(options.replicas)")
        }
        if let secret = options.storeSecret {
            let valid = secret.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E }
            guard !secret.isEmpty, secret.count <= 253, valid, secret.first?.isLetter == true || secret.first?.isNumber == true else {
                throw Failure(
                    message: "--store \"\(secret)\": name a Secret with lower-case letters, digits, '-' and '.', like taksi-store")
            }
        }
    }

    /// The project's settings as the pod runs them.
    struct ProductionSettings {
        var members: [String: JSONValue]
        var screensDirectory: String
        var upstreams: Set<String>
        /// The upstreams' OpenAPI documents, which the screens are checked against (the pods do not get them).
        var upstreamDocuments: [String: String]
        /// The secrets of the upstreams' credentials, which the pods get from a Secret.
        var credentials: UpstreamSecrets
        var drainTimeout: Double
        var dataMemoMaxBytes: Int
        var idempotencyMaxBytes: Int
    }

    /// What a pod's memory request and limit are made of: the server's own footprint, the
    /// caches it is configured to keep, and the screen set held twice while a reload replaces it.
    struct MemoryBudget: Equatable {
        /// The resident memory of the release server serving the example screens under load
        /// (Benchmarks/memory-footprint.sh: 41.6 MiB at its peak over 100,000 mixed requests), rounded up.
        static let baseline = 64 << 20
        /// A compiled set held in memory, per byte of its files (skeletons per variant and
        /// locale, templates, the parsed files): 29 measured on 1,000 generated screens
        /// (Benchmarks/memory-footprint.sh), rounded up.
        static let compiledBytesPerFileByte = 32

        var caches: Int
        var screens: Int
        /// The earlier sets reloads keep for the data and submits of skeletons cached before them,
        /// at their byte bound (``ScreenStore/Retention``): a ConfigMap's screens reach running
        /// pods as reloads, so these fill too. The bound, not an estimate from this set's size:
        /// adding a screen then changes no limit, and restarts no pod.
        var keptSets = ScreenStore.Retention.defaultMaxBytes
        var store: Bool

        init(settings: ProductionSettings, screensBytes: Int, store: Bool) {
            // Upstream bodies are kept as bytes and as parsed values: twice their size.
            caches = settings.dataMemoMaxBytes + settings.idempotencyMaxBytes + 2 * UpstreamCache.defaultMaxBytes
            // With a store, published sets a replica no longer serves are kept to answer them.
            if store { caches += KeptBundles.maximumBytes }
            self.store = store
            screens = 2 * Self.compiledBytesPerFileByte * screensBytes
        }

        /// Requested: what a pod uses serving from cold caches.
        var request: String { Self.mebibytes(Self.baseline + screens) }
        /// The limit: every cache full, and every earlier set kept, during a reload.
        var limit: String { Self.mebibytes(Self.baseline + screens + caches + keptSets) }

        /// The manifest's comment on the figures.
        var explanation: String {
            """
            # Memory: requests \(request), the server and the screens (twice while a reload replaces them). Limit \(limit):
            # also every cache full (the data memo, idempotency keys, upstream answers\(store ? ", published sets kept" : ""))
            # and the earlier sets reloads keep for skeletons cached before them (\(Self.mebibytes(keptSets)) at most).

            """
        }

        /// `288Mi`: bytes rounded up to a mebibyte.
        static func mebibytes(_ bytes: Int) -> String { "\((bytes + (1 << 20) - 1) >> 20)Mi" }
    }

    /// What the Deployment's pods are given.
    struct PodSettings {
        var drainTimeout: Double
        var credentials: UpstreamSecrets
        var memory: MemoryBudget
    }

    private static func productionSettings(from path: String?) throws(Failure) -> ProductionSettings {
        var members: [String: JSONValue] = [:]
        var configuration = ServerConfiguration()
        if let path {
            do {
                try configuration.apply(file: path)
            } catch {
                throw Failure(message: "\(error)")
            }
            // Read a second time as values: the settings are shipped as the file wrote them.
            if let data = FileManager.default.contents(atPath: path), let node = try? JSONParser.parse(Array(data)) {
                for member in node.members ?? [] { members[member.key] = member.value.value }
            }
        }
        if let problem = configuration.fileUpstreamProblem(
            file: path, place: "a pod", fix: "give the configuration you run in production (--config), whose upstreams are http(s) URLs")
        {
            throw Failure(message: problem)
        }
        if case .file(let file) = configuration.accessLogOutput {
            throw Failure(
                message: "\(path ?? "the configuration"): access_log_output writes to \(file), but the pod's filesystem is read-only: "
                    + "use \"stderr\" or \"stdout\", which the cluster collects"
            )
        }
        // What a pod needs, over the project's choices.
        members["host"] = .string("0.0.0.0")
        members["port"] = .number(Double(containerPort))
        members["screens"] = .string(screensMountPath)
        members["preview"] = .bool(false)
        if members["log_format"] == nil { members["log_format"] = .string("json") }
        return ProductionSettings(
            members: members, screensDirectory: configuration.screensDirectory, upstreams: Set(configuration.upstreams.keys),
            upstreamDocuments: configuration.upstreamDocuments,
            credentials: UpstreamSecrets(
                configuration.upstreamOptions.compactMapValues(\.credential),
                others: (configuration.cdn?.targets.flatMap(\.secrets) ?? []) + configuration.pageTokenKeys.map(\.secret)),
            drainTimeout: configuration.drainTimeout, dataMemoMaxBytes: configuration.dataMemoMaxBytes,
            idempotencyMaxBytes: configuration.idempotencyMaxBytes
        )
    }

    /// One file of the screens directory, as the ConfigMap holds it.
    struct MountedFile: Equatable {
        /// The ConfigMap key: letters, digits, `-`, `_` and `.` only.
        var key: String
        /// The path in the screens directory: `bikes/stations.yaml`.
        var path: String
        var text: String
    }

    static func mountedFiles(of directory: String) throws(Failure) -> [MountedFile] {
        guard let found = ScreenDirectory.files(in: directory) else {
            throw Failure(message: "\(directory): not a directory; give the screens directory with --screens")
        }
        // A link is followed only inside the directory (the kubelet's own layout links into
        // `..data/`): what lies outside is no screen file, and could be any file of this machine.
        if let outside = ScreenDirectory.linksLeavingDirectory(directory, among: found).first {
            throw Failure(
                message:
                    "\(outside.path): a link to a file outside \(directory), which the ConfigMap does not ship; copy the file into the directory"
            )
        }
        var files: [MountedFile] = []
        var keys: Set<String> = [ScreenDirectory.pathIndexName]
        for file in found {
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw Failure(message: "\(file.path): cannot be read")
            }
            guard let text = String(validating: data, as: UTF8.self) else {
                throw Failure(
                    message: "\(file.path): not UTF-8 text; the screens directory holds screen, fragment, string and schema files only")
            }
            let path = file.relativePath
            let base = configMapKey(for: path)
            var key = base
            var suffix = 2
            while keys.contains(key) {
                // Within the 253 characters a key may have, suffix included.
                key = String(base.prefix(maximumKeyLength - "-\(suffix)".count)) + "-\(suffix)"
                suffix += 1
            }
            keys.insert(key)
            files.append(MountedFile(key: key, path: path, text: text))
        }
        return files
    }

    /// `bikes/stations.yaml` → `bikes__stations.yaml`: ConfigMap keys hold no `/`, and any other
    /// character a key cannot hold becomes `-` (the index keeps the real path).
    static func configMapKey(for path: String) -> String {
        var key = ""
        for scalar in path.replacingOccurrences(of: "/", with: "__").unicodeScalars {
            let allowed = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar))
            key.unicodeScalars.append(allowed ? scalar : "-")
        }
        return String(key.prefix(maximumKeyLength))
    }

    /// The longest ConfigMap key Kubernetes accepts.
    static let maximumKeyLength = 253

    // MARK: - Objects

    private static func objects(files: [MountedFile], configJSON: String, pod: PodSettings, options: Options) -> [Node] {
        let labels: Node = ["app.kubernetes.io/name": string(options.name)]
        func metadata(_ name: String) -> Node {
            var pairs: [(Node, Node)] = [("name", string(name))]
            if let namespace = options.namespace { pairs.append(("namespace", string(namespace))) }
            pairs.append(("labels", labels))
            return .mapping(Node.Mapping(pairs))
        }
        let configuration: Node = [
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata("\(options.name)-config"),
            "data": .mapping(Node.Mapping([("config.json", block(configJSON))])),
        ]
        var configMaps = [configuration]
        if options.storeSecret == nil {
            // The keys and the index that maps them to their paths, read by the server at each reload.
            let index = JSONValue.object(Dictionary(uniqueKeysWithValues: files.map { ($0.key, JSONValue.string($0.path)) }))
            var data: [(Node, Node)] = [(string(ScreenDirectory.pathIndexName), block(JSONWriter.string(index, pretty: true)))]
            data += files.map { (string($0.key), block($0.text)) }
            configMaps.append([
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata("\(options.name)-screens"),
                "data": .mapping(Node.Mapping(data)),
            ])
        }
        let deployment = deployment(
            configJSON: configJSON, pod: pod, options: options, labels: labels, metadata: metadata(options.name))
        let service: Node = [
            "apiVersion": "v1", "kind": "Service", "metadata": metadata(options.name),
            "spec": ["selector": labels, "ports": [["name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"]]],
        ]
        let autoscaler: Node = [
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": metadata(options.name),
            "spec": [
                "scaleTargetRef": ["apiVersion": "apps/v1", "kind": "Deployment", "name": string(options.name)],
                "minReplicas": number(options.replicas),
                "maxReplicas": number(max(options.replicas, 20)),
                "metrics": [
                    ["type": "Resource", "resource": ["name": "cpu", "target": ["type": "Utilization", "averageUtilization": 70]]]
                ],
            ],
        ]
        // Never fewer than one pod serving during voluntary disruptions (node drains).
        let disruption: Node = [
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": metadata(options.name),
            "spec": ["minAvailable": number(max(1, options.replicas - 1)), "selector": ["matchLabels": labels]],
        ]
        var documents = configMaps + [deployment, service, autoscaler, disruption]
        if options.serviceMonitor {
            // For the Prometheus Operator, which reads no annotations: scrape the Service's port.
            documents.append([
                "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": metadata(options.name),
                "spec": [
                    "selector": ["matchLabels": labels],
                    "endpoints": [["port": "http", "path": "/metrics", "interval": "30s"]],
                ],
            ])
        }
        return documents
    }

    /// The server's container: the image serving the mounted configuration, its memory, its
    /// probes, the preStop pause, no privileges, and the store's and credentials' variables.
    private static func container(pod: PodSettings, options: Options, mounts: [Node], credentials: [Node]) -> Node.Mapping {
        func probe(_ path: String, period: Int, failures: Int) -> Node {
            [
                "httpGet": ["path": string(path), "port": "http"], "periodSeconds": number(period), "timeoutSeconds": 2,
                "failureThreshold": number(failures),
            ]
        }
        var container: Node.Mapping = [
            "name": string(options.name),
            "image": string(options.image),
            "args": ["serve", "--config", string("\(configurationMountPath)/config.json")],
            "ports": [["name": "http", "containerPort": number(containerPort), "protocol": "TCP"]],
            // Derived from the configuration: see MemoryBudget.
            "resources": [
                "requests": ["cpu": "250m", "memory": string(pod.memory.request)], "limits": ["memory": string(pod.memory.limit)],
            ],
            // Started once it answers: a replica waiting for a published bundle it can load is
            // alive and not ready, kept out of the Service rather than restarted in a loop.
            "startupProbe": probe("/healthz", period: 1, failures: 30),
            "readinessProbe": probe("/readyz", period: 5, failures: 2),
            "livenessProbe": probe("/healthz", period: 10, failures: 3),
            "lifecycle": ["preStop": ["exec": ["command": ["sleep", string(String(preStopSeconds))]]]],
            "securityContext": [
                "allowPrivilegeEscalation": boolean(false), "readOnlyRootFilesystem": boolean(true), "capabilities": ["drop": ["ALL"]],
            ],
            "volumeMounts": .sequence(Node.Sequence(mounts)),
        ]
        var environment: [Node] = []
        if let secret = options.storeSecret {
            environment.append(["name": "TAKSI_STORE", "valueFrom": ["secretKeyRef": ["name": string(secret), "key": "url"]]])
        }
        environment += credentials
        if !environment.isEmpty { container["env"] = .sequence(Node.Sequence(environment)) }
        return container
    }

    /// The Deployment: its pods run the image with the ConfigMaps mounted, probed on /healthz
    /// (started, alive) and /readyz (ready), as the image's non-root user, with a grace period
    /// that outlasts the drain.
    private static func deployment(configJSON: String, pod: PodSettings, options: Options, labels: Node, metadata: Node) -> Node {
        // Longer than the drain plus the preStop pause, so SIGTERM's drain completes before SIGKILL.
        let grace = Int(pod.drainTimeout.rounded(.up)) + preStopSeconds + 5
        var mounts: [Node] = [["name": "config", "mountPath": string(configurationMountPath), "readOnly": boolean(true)]]
        var volumes: [Node] = [["name": "config", "configMap": ["name": string("\(options.name)-config")]]]
        if options.storeSecret == nil {
            // Whole, with no items: a key added later appears in the running pods.
            mounts.append(["name": "screens", "mountPath": string(screensMountPath), "readOnly": boolean(true)])
            volumes.append(["name": "screens", "configMap": ["name": string("\(options.name)-screens")]])
        }
        let credentials = credentialParts(pod.credentials, secret: "\(options.name)-\(UpstreamSecrets.suffix)")
        mounts += credentials.mount.map { [$0] } ?? []
        volumes += credentials.volume.map { [$0] } ?? []
        let container = container(pod: pod, options: options, mounts: mounts, credentials: credentials.environment)
        var digest = FNV1a()
        digest.combine(Array(configJSON.utf8))
        let deployment: Node = [
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": [
                "replicas": number(options.replicas),
                "selector": ["matchLabels": labels],
                "strategy": ["type": "RollingUpdate", "rollingUpdate": ["maxUnavailable": 0, "maxSurge": 1]],
                "template": [
                    "metadata": [
                        "labels": labels,
                        "annotations": [
                            // The annotations Prometheus's Kubernetes service discovery examples scrape by.
                            "prometheus.io/scrape": string("true"), "prometheus.io/port": string(String(containerPort)),
                            "prometheus.io/path": "/metrics",
                            // The configuration is read at start-up: a change to it rolls the pods.
                            "checksum/config": string(digest.hexDigest),
                        ],
                    ],
                    "spec": [
                        // The server calls no Kubernetes API: no token in its filesystem.
                        "automountServiceAccountToken": boolean(false),
                        "terminationGracePeriodSeconds": number(grace),
                        // The image's user (the Dockerfile's useradd).
                        "securityContext": [
                            "runAsNonRoot": boolean(true), "runAsUser": 10001, "runAsGroup": 10001,
                            "seccompProfile": ["type": "RuntimeDefault"],
                        ],
                        "containers": [.mapping(container)],
                        "volumes": .sequence(Node.Sequence(volumes)),
                    ],
                ],
            ],
        ]
        return deployment
    }

    /// What the pod takes from the upstream credentials' Secret (``UpstreamSecrets``): a variable
    /// per key it reads, and the files as a volume mounted at ``credentialsMountPath``.
    private static func credentialParts(
        _ credentials: UpstreamSecrets, secret: String
    ) -> (environment: [Node], mount: Node?, volume: Node?) {
        let environment: [Node] = credentials.variables.map { variable in
            ["name": string(variable), "valueFrom": ["secretKeyRef": ["name": string(secret), "key": string(variable)]]]
        }
        guard !credentials.files.isEmpty else { return (environment, nil, nil) }
        let mount: Node = ["name": "credentials", "mountPath": string(credentialsMountPath), "readOnly": boolean(true)]
        let volume: Node = [
            "name": "credentials",
            "secret": [
                "secretName": string(secret),
                "items": .sequence(Node.Sequence(credentials.files.map { ["key": string($0.key), "path": string($0.key)] })),
            ],
        ]
        return (environment, mount, volume)
    }

    /// A string scalar, quoted where YAML would read it as something else.
    private static func string(_ text: String) -> Node { .scalar(text.represented()) }

    /// A string written as a block (`|`), so screen files stay readable in the manifest.
    private static func block(_ text: String) -> Node { .scalar(Node.Scalar(text, Tag(.str), .literal)) }

    private static func number(_ value: Int) -> Node { .scalar(Node.Scalar(String(value), Tag(.int))) }

    private static func boolean(_ value: Bool) -> Node { .scalar(Node.Scalar(value ? "true" : "false", Tag(.bool))) }
}

/// The secrets of the upstreams' credentials as a pod gets them: from one Secret
/// (`<name>-upstream-credentials`), environment variables by their names and files by keys of
/// their own, mounted at ``KubernetesManifest/credentialsMountPath``. The configuration shipped
/// names the mounted files; the Secret itself is made by the operator (the manifest's header says
/// how), so no secret is ever in the manifest.
struct UpstreamSecrets {
    static let suffix = "upstream-credentials"

    /// The environment variables credentials read, sorted.
    var variables: [String] = []
    /// The files credentials read: the Secret's key each is mounted as, and the path the configuration gave.
    var files: [(key: String, path: String)] = []

    /// - Parameter others: secrets of the configuration besides the upstreams' (the CDN's tokens).
    init(_ credentials: [String: UpstreamCredential], others: [Secret] = []) {
        var variables: Set<String> = []
        var paths: Set<String> = []
        for secrets in credentials.values.map(\.secrets) + [others] {
            for secret in secrets {
                switch secret.origin {
                case .environment(let name): variables.insert(name)
                case .file(let path): paths.insert(path)
                }
            }
        }
        self.variables = variables.sorted()
        var keys: Set<String> = []
        for path in paths.sorted() {
            // A Secret's key: letters, digits, '-', '_' and '.'; two files of one name get a number.
            let name = (path as NSString).lastPathComponent.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? String($0) : "-" }
                .joined()
            var key = name.isEmpty || name == "." || name == ".." ? "secret" : name
            var number = 2
            while keys.contains(key) {
                key = "\(name)-\(number)"
                number += 1
            }
            keys.insert(key)
            files.append((key, path))
        }
    }

    /// `upstreams` as the pods get it: each credential file at its mounted path, and no OpenAPI
    /// document (the screens were checked against it before the manifest was made; a pod has no copy).
    func shippedUpstreams(_ upstreams: JSONValue?) -> JSONValue? {
        guard case .object(var entries)? = upstreams else { return upstreams }
        for (name, entry) in entries {
            guard case .object(var members) = entry else { continue }
            members["openapi"] = nil
            if let auth = members["auth"] { members["auth"] = Self.remapped(auth, mountedPaths) }
            entries[name] = .object(members)
        }
        return .object(entries)
    }

    /// A setting that holds secrets (`cdn`, `page_token_keys`) as the pods get it: each secret
    /// file at its mounted path.
    func shipped(_ setting: JSONValue?) -> JSONValue? {
        setting.map { Self.remapped($0, mountedPaths) }
    }

    /// Adds an environment variable the pods take from the Secret.
    mutating func add(variable: String) {
        variables = Array(Set(variables + [variable])).sorted()
    }

    /// Each secret file's path as the configuration gives it, and where the pods mount it.
    private var mountedPaths: [String: String] {
        Dictionary(uniqueKeysWithValues: files.map { ($0.path, KubernetesManifest.credentialsMountPath + "/" + $0.key) })
    }

    /// `value` with each `{"file": PATH}` of `mounted` pointing at its mounted path. The paths in
    /// the file may be relative (to it); `mounted` holds them resolved, so both are tried.
    private static func remapped(_ value: JSONValue, _ mounted: [String: String]) -> JSONValue {
        switch value {
        case .object(let members):
            if members.count == 1, case .string(let path)? = members["file"] {
                let resolved = mounted[path] ?? mounted.first { $0.key.hasSuffix("/" + path) }?.value
                return .object(["file": .string(resolved ?? path)])
            }
            return .object(members.mapValues { remapped($0, mounted) })
        case .array(let elements):
            return .array(elements.map { remapped($0, mounted) })
        default:
            return value
        }
    }

    /// The header lines that say how to make the Secret; none without credentials.
    func instructions(secret: String) -> String {
        guard !variables.isEmpty || !files.isEmpty else { return "" }
        let literals = variables.map { " --from-literal=\($0)=..." }.joined()
        let quoted = { (path: String) in
            path.allSatisfy { $0.isLetter || $0.isNumber || "/._-".contains($0) }
                ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        }
        let fromFiles = files.map { " --from-file=\($0.key)=\(quoted($0.path))" }.joined()
        return """
            # The upstreams' credentials (and the CDN's tokens, the page token keys) come from the Secret \(secret); make it before the first apply:
            #   kubectl create secret generic \(secret)\(literals)\(fromFiles)

            """
    }
}
