import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Loads a screen set from in-memory files (paths relative to `Screens/`).
func load(_ files: [String: String]) -> ScreenSetLoad {
    ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) })
}

/// A one-screen set holding `components` (a JSON array) and optional `sources` (a JSON object).
func loadScreen(components: String, sources: String? = nil, extraFiles: [String: String] = [:]) -> ScreenSetLoad {
    let sourcesText = sources.map { "\"sources\": \($0),\n" } ?? ""
    var files = extraFiles
    files["home.json"] = "{\"name\": \"home\", \"entry\": true,\n\(sourcesText)\"components\": \(components)}"
    files["profile.json"] = #"{"name": "profile", "entry": true, "components": []}"#
    return load(files)
}

/// The only error diagnostic, failing the test when there is not exactly one.
func onlyError(_ load: ScreenSetLoad, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Diagnostic? {
    let errors = load.diagnostics.filter { $0.severity == .error }
    #expect(errors.count == 1, "expected one error, got:\n\(load.diagnostics.report)", sourceLocation: sourceLocation)
    #expect(load.screenSet == nil, sourceLocation: sourceLocation)
    return errors.first
}

/// Whether the independent validators some tests use can run here: `python3` with these modules.
/// CI (`CI` set) always runs those tests, so a missing install fails there instead of skipping.
func pythonHas(_ modules: String...) -> Bool {
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
