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
        settings: settings, window: configuration.idempotencyDuration, logger: logger)
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

/// Who moves a release, as the history shows it: `--by`, else the CI's account that ran the job
/// (`GITHUB_ACTOR` on GitHub Actions, `GITLAB_USER_LOGIN` on GitLab CI), else `user@host` (a CI
/// runner's user is a machine's, `runner@fv-az123`, which names nobody). At most 200 characters,
/// without control characters: it comes from outside and is shown in a terminal.
func releasedBy(_ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    func present(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
    let who =
        present(given) ?? present(environment["GITHUB_ACTOR"]) ?? present(environment["GITLAB_USER_LOGIN"])
        ?? "\(present(environment["USER"]) ?? present(environment["LOGNAME"]) ?? "unknown")@\(ProcessInfo.processInfo.hostName)"
    return String(String.UnicodeScalarView(who.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }).prefix(200))
}

/// `--by`, for the commands that move a release.
struct ReleasedByOption: ParsableArguments {
    @Option(
        help: "Who the history names for this release (default: GITHUB_ACTOR or GITLAB_USER_LOGIN in CI, else user@host).")
    var by: String?
}

/// A bundle's short name, as `history` and `rollout status` show it (any unique prefix works).
func short(_ bundle: String?) -> String { bundle.map { String($0.prefix(12)) } ?? "-" }

func timestamp(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// Rows as columns padded to their widest cell.
func table(_ rows: [[String]]) -> String {
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
