import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

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
