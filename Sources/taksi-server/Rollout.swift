import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiScreens
import TaksiServer

/// `taksi-server rollout status`.
struct Rollout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What every replica of the fleet serves.", subcommands: [Status.self], defaultSubcommand: Status.self)

    /// Replicas that reported within this long are live (they report every second).
    static let alive = Duration.seconds(10)

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the current release and what each live replica serves; exits 1 unless one is live and every one serves it.")

        @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
        var config: String?

        func run() async throws {
            let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
            let converged = try await withStore(configuration) { store in
                let release = try await store.currentRelease()
                let replicas = try await store.replicas(seenWithin: Rollout.alive)
                print(Rollout.report(release: release, replicas: replicas))
                // No replica live is no fleet serving anything (each is refused, crashed, or not started).
                return !replicas.isEmpty && replicas.allSatisfy { $0.bundle == release?.bundle }
            }
            if !converged { throw ExitCode.failure }
        }
    }

    /// The fleet as `rollout status` prints it.
    static func report(release: Release?, replicas: [ReplicaReport]) -> String {
        var lines: [String] = []
        if let release {
            lines.append(
                "current: release \(release.number), bundle \(short(release.bundle)) (\(release.kind) by \(release.by) at \(timestamp(release.at)))"
            )
        } else {
            lines.append("current: nothing published yet")
        }
        var rows = [["replica", "serves", "since", "seen", "refused"]]
        for replica in replicas {
            rows.append([
                replica.replica, short(replica.bundle), replica.since.map(timestamp) ?? "-", timestamp(replica.seen),
                replica.refusedBundle.map { "\(short($0)): \(replica.refusal ?? "")" } ?? "",
            ])
        }
        if replicas.isEmpty {
            lines.append("No replica is live (none reported in the last \(alive.components.seconds) s)")
        } else {
            lines.append(table(rows))
            let current = replicas.filter { $0.bundle == release?.bundle }.count
            lines.append(
                "\(replicas.count) live replica\(replicas.count == 1 ? "" : "s"); \(current) serve\(current == 1 ? "s" : "") the current bundle"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// Returns once a replica is live and every live replica serves `bundle`; exits 1 after
    /// `timeout` seconds naming the others, or saying that none is live.
    static func waitForFleet(serving bundle: String, store: PostgresFleetStore, timeout: Double) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
        while true {
            let replicas = try await store.replicas(seenWithin: alive)
            let behind = replicas.filter { $0.bundle != bundle }
            if behind.isEmpty, !replicas.isEmpty {
                print("Every live replica (\(replicas.count)) serves bundle \(short(bundle))")
                return
            }
            if clock.now >= deadline, replicas.isEmpty {
                printError(
                    "error: after \(timeout) s, no replica is live (none reported in the last \(alive.components.seconds) s), so none serves bundle \(short(bundle)); "
                        + "start one with screens_source store, or see why they stopped (their logs)")
                throw ExitCode.failure
            }
            if clock.now >= deadline {
                printError(
                    "error: after \(timeout) s, \(behind.count) of \(replicas.count) live replicas do not serve bundle \(short(bundle)):")
                for replica in behind {
                    let refused = replica.refusedBundle == bundle ? "; refused it: \(replica.refusal ?? "")" : ""
                    printError("  \(replica.replica) serves \(short(replica.bundle))\(refused)")
                }
                throw ExitCode.failure
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
