package import Foundation

/// The repository's root, found from this file's path (`Tests/TaksiTestSupport/Repository.swift`).
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Whether goldens (expected outputs kept in the repository) are rewritten rather than compared:
/// `TAKSI_UPDATE_GOLDEN=1 swift test`, then review the diff.
package var isUpdatingGoldens: Bool { ProcessInfo.processInfo.environment["TAKSI_UPDATE_GOLDEN"] == "1" }

/// Runs a command (found on PATH) in the repository's root; its exit status and its output and
/// errors together. For the independent checkers some tests use (Python validators, scripts).
/// Awaited off Swift's cooperative pool (``runProcess(_:_:in:environment:mergingError:)``).
package func runTool(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let outcome = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments, mergingError: true)
    return (outcome.status, outcome.output)
}

/// Whether the independent validators some tests use can run here: `python3` with these modules.
/// CI (`CI` set) always runs those tests, so a missing install fails there instead of skipping.
/// (Asked while the test plan is made, before any test runs, so it may block.)
package func pythonHas(_ modules: String...) -> Bool {
    if ProcessInfo.processInfo.environment["CI"] != nil { return true }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", "import " + modules.joined(separator: ", ")]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}
