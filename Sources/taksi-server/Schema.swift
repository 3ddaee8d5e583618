import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// Prints the JSON Schema of screen files, or of component files, for editors.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the JSON Schema (2020-12) of screen files, custom components of DIR included (--catalog: of component files).",
        discussion: """
            --write keeps both in the project's schemas/ folder (beside DIR), where the editor settings taksi-server \
            init writes point; validate then rewrites the screen schema whenever the components change. See docs/validation.md.
            """
    )

    @Argument(help: "The screens directory whose custom components to include.")
    var directory: String = "Screens"

    @Flag(help: "Print the schema of component files (components/<type>.json) instead.")
    var catalog = false

    @Flag(help: "Write schemas/screen.schema.json and schemas/component.schema.json beside DIR instead of printing.")
    var write = false

    func run() throws {
        if write {
            let load = ScreenSetLoader.load(directory: directory)
            let folder = EditorSchemas.directory(besides: directory)
            let written: [String]
            do {
                written = try EditorSchemas.write(catalog: load.catalog, into: folder)
            } catch {
                printError("taksi-server: cannot write \(folder.path): \(error.localizedDescription)")
                throw ExitCode.failure
            }
            print(
                written.isEmpty
                    ? "\(ScreenDirectory.shown(folder.path)): up to date"
                    : written.map { "wrote \(ScreenDirectory.shown($0))" }.joined(separator: "\n")
            )
            return
        }
        if catalog {
            print(JSONWriter.string(CatalogJSONSchema.make(), pretty: true), terminator: "")
            return
        }
        let load = ScreenSetLoader.load(directory: directory)
        print(JSONWriter.string(ScreenJSONSchema.make(catalog: load.catalog), pretty: true), terminator: "")
    }
}
