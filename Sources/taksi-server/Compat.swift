import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// The breaking-change gate: what changed in the catalog since a base, and what of it can break
/// an app build that is already out.
struct Compat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the catalog changes since BASE; exits 1 when one can break an app build already out.",
        discussion: """
            BASE is a directory of screens, or a git revision of the repository the screens are in \
            (HEAD~1, main, origin/main). A change to what the catalog says about app versions already out \
            (a component, field, enum value or custom action removed, retyped or added for them; a field \
            made required or optional) is breaking; say new facts with "since" and "until". The screens \
            of the working tree are validated too.
            """
    )

    @Argument(help: "The base: a screens directory, or a git revision.")
    var base: String

    @OptionGroup var project: ProjectOptions

    @Option(help: "The newest app version already out: a change for it or older is breaking even where since/until says it.")
    var released: String?

    func run() async throws {
        let releasedVersion = try released.map { try parseVersion($0, option: "--released", meaning: "the newest app version already out") }
        let screens = try project.screens()
        guard let head = RevisionFiles.read(directory: screens) else {
            printError("error: \(screens): not a directory of screens; give it as the second argument")
            throw ExitCode(2)
        }
        let baseFiles: (files: [String: [UInt8]], root: String)
        do {
            baseFiles = try await RevisionFiles.base(base, screens: screens)
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
        let changes = CatalogCompatibility.changes(base: baseFiles, head: (head, screens), released: releasedVersion)
        for change in changes { print(change) }
        let breaking = changes.filter(\.isBreaking).count
        // The working tree must also be a valid set: the checks every variant gets.
        let load = try project.load()
        if load.diagnostics.containsErrors { print(load.diagnostics.report) }
        let count = changes.count
        print(
            "\(count) catalog change\(count == 1 ? "" : "s") since \(base): \(breaking) breaking, \(count - breaking) compatible"
                + (load.diagnostics.containsErrors ? "; the screens have errors" : "")
        )
        if breaking > 0 || load.diagnostics.containsErrors { throw ExitCode.failure }
    }
}
