import Foundation
import TaksiSchema
import TaksiScreens
import TaksiServer

/// The JSON Schemas a project keeps for its editors, in `schemas/` beside its screens directory:
/// `screen.schema.json` (screen files, with the project's custom components) and
/// `component.schema.json` (component files). `taksi-server init` writes them with the editor
/// settings that use them, `taksi-server schema --write` writes them, and `taksi-server validate`
/// rewrites the screen schema when the components changed, so completion never lags the catalog
/// (in CI, or with `--check`, it refuses a stale one instead: CI never rewrites a checkout).
enum EditorSchemas {
    /// The folder, relative to the project (the screens directory's parent).
    static let folder = "schemas"
    /// The schema of screen files.
    static let screenSchema = "screen.schema.json"
    /// The schema of component files.
    static let componentSchema = "component.schema.json"

    /// `schemas/` beside `screensDirectory`.
    static func directory(besides screensDirectory: String) -> URL {
        URL(fileURLWithPath: screensDirectory).standardizedFileURL.deletingLastPathComponent().appendingPathComponent(folder)
    }

    /// The files and what they hold for `catalog`.
    static func contents(catalog: ComponentCatalog) -> [(name: String, text: String)] {
        [
            (screenSchema, JSONWriter.string(ScreenJSONSchema.make(catalog: catalog), pretty: true)),
            (componentSchema, JSONWriter.string(CatalogJSONSchema.make(), pretty: true)),
        ]
    }

    /// Writes the schemas into `directory` (made when missing), each only when it differs.
    /// - Parameter onlyExisting: rewrite only files that exist (what `validate` does), never add one.
    /// - Returns: the paths written.
    @discardableResult
    static func write(catalog: ComponentCatalog, into directory: URL, onlyExisting: Bool = false) throws -> [String] {
        let stale = stale(catalog: catalog, in: directory, onlyExisting: onlyExisting)
        for (path, text) in stale {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        return stale.map(\.path)
    }

    /// The schemas in `directory` that differ from what `catalog` makes (missing ones too, unless
    /// `onlyExisting`), with what they should hold: what ``write(catalog:into:onlyExisting:)``
    /// would write, and `validate --check` refuses.
    static func stale(catalog: ComponentCatalog, in directory: URL, onlyExisting: Bool = false) -> [(path: String, text: String)] {
        contents(catalog: catalog).compactMap { name, text in
            let url = directory.appendingPathComponent(name)
            let current = FileManager.default.contents(atPath: url.path)
            if onlyExisting && current == nil { return nil }
            return current == Data(text.utf8) ? nil : (url.path, text)
        }
    }
}
