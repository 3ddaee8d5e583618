import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// Writes what a platform needs to run a project's screens.
struct Deploy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write deployment files for a project's screens and configuration.",
        subcommands: [Kubernetes.self]
    )

    /// A Kubernetes manifest for the project (``KubernetesManifest``).
    struct Kubernetes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a Kubernetes manifest that ships the screens and the configuration in ConfigMaps.",
            discussion: """
                The screens are checked first, against the configuration's upstreams; nothing is written for a set \
                with errors. The configuration is yours with what a pod needs over it: host 0.0.0.0, port 8080, \
                the mounted screens, no preview, JSON logs unless you chose a format. Give the configuration you \
                run in production: its upstreams must be http(s) URLs. The memory request and limit are derived \
                from the configuration's caches and the screens' size. A screen file added later reaches running \
                pods with kubectl apply, without a restart; a changed configuration rolls them.
                """
        )

        @Option(help: "The configuration file to ship (default ./config.json when present).")
        var config: String?

        @Option(help: "The screens directory (default: the configuration's \"screens\", else Screens).")
        var screens: String?

        @Option(help: "The image to run; push the one you build to your registry and name it here.")
        var image = KubernetesManifest.Options().image

        @Option(help: "The name of every object and its app.kubernetes.io/name label.")
        var name = KubernetesManifest.Options().name

        @Option(help: "The namespace of every object (default: kubectl's current one).")
        var namespace: String?

        @Option(help: "Replicas, and the autoscaler's minimum.")
        var replicas = KubernetesManifest.Options().replicas

        @Option(
            help: ArgumentHelp(
                "Serve the screens published to the fleet's store (taksi-server publish), its URL from this Secret's key url; the ConfigMap then holds only the configuration.",
                valueName: "secret"))
        var store: String?

        @Flag(help: "Add a ServiceMonitor for the Prometheus Operator (the pods carry prometheus.io annotations either way).")
        var serviceMonitor = false

        @Option(name: .shortAndLong, help: "Write the manifest to this file instead of standard output.")
        var output: String?

        @Option(help: "Exit 1 when this file is not what would be written (for CI).")
        var check: String?

        func validate() throws {
            if output != nil, check != nil { throw ValidationError("give --output or --check, not both") }
        }

        func run() throws {
            var options = KubernetesManifest.Options()
            options.image = image
            options.name = name
            options.namespace = namespace
            options.replicas = replicas
            options.storeSecret = store
            options.serviceMonitor = serviceMonitor
            let manifest: KubernetesManifest
            do {
                manifest = try KubernetesManifest.make(
                    configurationFile: ServerConfiguration.filePath(given: config, environment: [:]), screensDirectory: screens,
                    options: options)
            } catch {
                printError("taksi-server: \(error)")
                throw ExitCode.failure
            }
            if let check {
                guard fileHolds(manifest.text, at: check) else {
                    printError("\(check) is out of date: run this command again with --output \(check) instead of --check")
                    throw ExitCode.failure
                }
                printError("\(check) is up to date (\(manifest.summary))")
            } else if let output {
                do {
                    try writeWhole(manifest.text, to: output)
                } catch {
                    printError("taksi-server: \(output): \(error.localizedDescription)")
                    throw ExitCode.failure
                }
                printError("Wrote \(output): \(manifest.summary)")
            } else {
                print(manifest.text, terminator: "")
                printError(manifest.summary)
            }
        }
    }
}
