package import Foundation

/// The repository's root, found from this file's path (`Tests/TaksiTestSupport/Repository.swift`).
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Whether goldens (expected outputs kept in the repository) are rewritten rather than compared:
/// `TAKSI_UPDATE_GOLDEN=1 swift test`, then review the diff.
package var isUpdatingGoldens: Bool { ProcessInfo.processInfo.environment["TAKSI_UPDATE_GOLDEN"] == "1" }

/// Runs a command (found on PATH) in the repository's root; its exit status and its output and
/// errors together. For the independent checkers some tests use (Python validators, scripts).
package func runTool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// Whether the independent validators some tests use can run here: `python3` with these modules.
/// CI (`CI` set) always runs those tests, so a missing install fails there instead of skipping.
package func pythonHas(_ modules: String...) -> Bool {
    ProcessInfo.processInfo.environment["CI"] != nil
        || (try? runTool(["python3", "-c", "import " + modules.joined(separator: ", ")]))?.status == 0
}
