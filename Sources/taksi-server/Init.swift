import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// Writes a starter project a team owns.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a project folder: a starter screen, a custom component, config.json, a Dockerfile.",
        discussion: "Never writes over a file. Then: cd DIR && taksi-server validate && taksi-server serve"
    )

    @Argument(help: "The folder to create (or an empty one).")
    var directory: String

    func run() throws {
        do {
            let written = try StarterProject.create(in: URL(fileURLWithPath: directory))
            print("Created \(directory):")
            for path in written { print("  \(path)") }
            print("Next: cd \(directory) && taksi-server serve, then curl localhost:8080/screens/home")
        } catch {
            printError("taksi-server: \(error)")
            throw ExitCode.failure
        }
    }
}
