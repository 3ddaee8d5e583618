import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// App code generated from the catalog.
struct Codegen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate the app code for the catalog's custom components and actions.",
        subcommands: [SwiftCode.self]
    )

    /// The Swift types an app registers with the Taksi client (``SwiftCodegen``).
    struct SwiftCode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "swift",
            abstract: "Write the Swift types an app registers with the Taksi client, one file per component and TaksiCatalog.swift.",
            discussion: """
                Each component's view is the app's: <Type>View, adopting ViewRepresentable, with init(content:onAction:). \
                Files are rewritten only when they change; a file an earlier run wrote for a component that is gone \
                is removed.
                """
        )

        @Option(help: "The folder to write to (in the app's sources).")
        var out: String

        @Option(help: "The app version to generate for (default: the newest the catalog describes).")
        var appVersion: String?

        @OptionGroup var project: ProjectOptions

        func run() throws {
            let version = try appVersion.map { try parseVersion($0, option: "--app-version", meaning: "an app version") }
            let load = try project.loadValid()
            let catalog = load.catalogVersions.catalog(load.catalog, forAppVersion: version)
            let files = SwiftCodegen.files(
                catalog: catalog, versions: load.catalogVersions, summaries: load.actionSummaries, appVersion: version,
                source: try project.screens())
            let folder = URL(fileURLWithPath: out)
            var changed = 0
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for file in files {
                    let url = folder.appendingPathComponent(file.name)
                    if FileManager.default.contents(atPath: url.path) == Data(file.contents.utf8) { continue }
                    try Data(file.contents.utf8).write(to: url, options: .atomic)
                    changed += 1
                }
                // What an earlier run wrote for a component that is gone.
                let names = Set(files.map(\.name))
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
                where name.hasSuffix(".swift") && !names.contains(name) {
                    let url = folder.appendingPathComponent(name)
                    guard let data = FileManager.default.contents(atPath: url.path),
                        String(decoding: data, as: UTF8.self).hasPrefix(SwiftCodegen.marker)
                    else { continue }
                    try FileManager.default.removeItem(at: url)
                    changed += 1
                }
            } catch {
                printError("taksi-server: \(out): \(error.localizedDescription)")
                throw ExitCode.failure
            }
            print("\(files.count) files in \(out): \(changed == 0 ? "unchanged" : "\(changed) written or removed")")
        }
    }
}
