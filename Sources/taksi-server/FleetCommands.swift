import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiScreens
import TaksiServer

// The commands of the fleet's store (docs/fleet.md): publish a screen set, roll back, list the
// releases, and see what every replica serves.

/// Runs `body` with the configuration's store running; exits 2 when there is none.
func withStore<Result: Sendable>(
    _ configuration: ServerConfiguration, _ body: @escaping @Sendable (PostgresFleetStore) async throws -> Result
) async throws -> Result {
    guard configuration.store.connection != nil else {
        printError(
            "error: no store is configured; set TAKSI_STORE (or \"store\" in the configuration file) to the fleet's PostgreSQL URL, like postgres://taksi:PASSWORD@db:5432/taksi"
        )
        throw ExitCode(2)
    }
    // A command's errors are printed; the pool's messages (a lease asked for a moment before
    // its pool runs) would only be noise.
    var logger = Logger(label: "taksi-server")
    logger.logLevel = .error
    // A command is not a request in flight: it waits longer for a store that is slow to answer
    // (a first connection, the migrations, a large bundle) before it gives up.
    var settings = configuration.store
    settings.timeout = max(settings.timeout, 30)
    let store = try PostgresFleetStore(
        settings: settings, window: .milliseconds(Int64(configuration.idempotencyWindow * 1000)), logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await store.run() }
        defer { group.cancelAll() }
        do {
            return try await body(store)
        } catch let error as StoreError {
            printError("error: \(error)")
            throw ExitCode.failure
        }
    }
}

/// Who moves a release, as the history shows it.
private var releasedBy: String {
    let environment = ProcessInfo.processInfo.environment
    return "\(environment["USER"] ?? environment["LOGNAME"] ?? "unknown")@\(ProcessInfo.processInfo.hostName)"
}

/// A bundle's short name, as `history` and `rollout status` show it (any unique prefix works).
private func short(_ bundle: String?) -> String { bundle.map { String($0.prefix(12)) } ?? "-" }

private func timestamp(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// `taksi-server publish [DIR]`: checks a screen set as `validate` does and publishes it.
struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a screen directory and publish it to the fleet's store; every replica serving from the store follows.",
        discussion: """
            Runs every check validate runs (against the configuration's upstreams) and stores nothing \
            when there is an error. The set is stored once, named by its content, and becomes the current \
            release. With --wait, exits 0 once every live replica serves it, 1 (naming the others) when \
            --timeout passes first.
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Wait until every live replica serves the published bundle.")
    var wait = false

    @Option(help: "Seconds --wait waits at most.")
    var timeout: Double = 60

    func run() async throws {
        let configuration = try project.configuration()
        let load = try project.loadValid()
        if !load.diagnostics.isEmpty { print(load.diagnostics.report) }
        let directory = try project.screens()
        guard let files = ScreenSetLoader.read(directory: directory).files, let screenSet = load.screenSet else { throw ExitCode.failure }
        let bundle = ScreenBundle(files: files)
        let (wait, timeout) = (wait, timeout)
        try await withStore(configuration) { store in
            let (release, isNew) = try await store.publish(
                bundle, screens: screenSet.screens.count, revisions: PublishedScreens.revisions(of: screenSet), by: releasedBy)
            if isNew {
                print(
                    "Published bundle \(short(release.bundle)) (\(release.screens) screens, \(release.bytes) bytes) as release \(release.number)"
                )
            } else {
                print("Bundle \(short(release.bundle)) is already current (release \(release.number)); nothing published")
            }
            guard wait else { return }
            try await Rollout.waitForFleet(serving: release.bundle, store: store, timeout: timeout)
        }
    }
}

/// `taksi-server rollback [REV]`.
struct Rollback: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an earlier published bundle current again (by default the one before the current one).")

    @Argument(help: "The bundle to make current: its name or a prefix only it has (taksi-server history lists them).")
    var bundle: String?

    @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    func run() async throws {
        let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
        let bundle = bundle
        try await withStore(configuration) { store in
            let release = try await store.rollback(to: bundle, by: releasedBy)
            print("Rolled back to bundle \(short(release.bundle)) (\(release.screens) screens) as release \(release.number)")
        }
    }
}

/// `taksi-server history`.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the latest releases of the fleet's screens, newest first.")

    @Option(help: "How many releases to list.")
    var limit: Int = 20

    @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    func run() async throws {
        let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
        let limit = max(1, limit)
        try await withStore(configuration) { store in
            let releases = try await store.history(limit: limit)
            guard !releases.isEmpty else {
                print("Nothing was published yet (taksi-server publish)")
                return
            }
            var rows = [["release", "bundle", "kind", "at", "by", "screens", "bytes"]]
            for release in releases {
                rows.append([
                    String(release.number), short(release.bundle), release.kind, timestamp(release.at), release.by,
                    String(release.screens), String(release.bytes),
                ])
            }
            print(table(rows) + "\nrelease \(releases[0].number) is current")
        }
    }
}

/// `taksi-server rollout status`.
struct Rollout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What every replica of the fleet serves.", subcommands: [Status.self], defaultSubcommand: Status.self)

    /// Replicas that reported within this long are live (they report every second).
    static let alive = Duration.seconds(10)

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the current release and what each live replica serves; exits 1 unless every one serves it.")

        @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
        var config: String?

        func run() async throws {
            let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
            let converged = try await withStore(configuration) { store in
                let release = try await store.currentRelease()
                let replicas = try await store.replicas(seenWithin: Rollout.alive)
                print(Rollout.report(release: release, replicas: replicas))
                return replicas.allSatisfy { $0.bundle == release?.bundle }
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
        if !replicas.isEmpty { lines.append(table(rows)) }
        let current = replicas.filter { $0.bundle == release?.bundle }.count
        lines.append(
            "\(replicas.count) live replica\(replicas.count == 1 ? "" : "s"); \(current) serve\(current == 1 ? "s" : "") the current bundle"
        )
        return lines.joined(separator: "\n")
    }

    /// Returns once every live replica serves `bundle`; exits 1 naming the others after `timeout` seconds.
    static func waitForFleet(serving bundle: String, store: PostgresFleetStore, timeout: Double) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
        while true {
            let replicas = try await store.replicas(seenWithin: alive)
            let behind = replicas.filter { $0.bundle != bundle }
            if behind.isEmpty {
                print(
                    replicas.isEmpty
                        ? "No replica is live (none reported in the last 10 s); nothing to wait for"
                        : "Every live replica (\(replicas.count)) serves bundle \(short(bundle))")
                return
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

/// Rows as columns padded to their widest cell.
private func table(_ rows: [[String]]) -> String {
    let widths = rows.reduce(into: [Int]()) { widths, row in
        for (index, cell) in row.enumerated() {
            if index < widths.count { widths[index] = max(widths[index], cell.count) } else { widths.append(cell.count) }
        }
    }
    return rows.map { row in
        row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }
        .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }.joined(separator: "\n")
}
