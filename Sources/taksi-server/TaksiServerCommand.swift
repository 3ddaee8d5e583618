import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

@main
struct TaksiServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "taksi-server",
        abstract: "Serves Taksi server-driven UI screens: skeletons and data patches over HTTP.",
        version: TaksiServerVersion.described,
        subcommands: [
            Serve.self, Validate.self, Compat.self, Manifest.self, Codegen.self, Schema.self, Init.self, Deploy.self, Publish.self,
            Rollback.self, History.self, Rollout.self, BundleCommand.self, VersionCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// A version given on the command line, or a usage error naming the option.
func parseVersion(_ text: String, option: String, meaning: String) throws -> Version {
    guard let version = Version(text) else {
        printError("error: \(option) \"\(text)\" is not a version; write \(meaning), like 2.3")
        throw ExitCode(2)
    }
    return version
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Whether the file at `path` holds exactly `text`: what a command's `--check` compares (a file
/// it generates, committed beside the screens).
func fileHolds(_ text: String, at path: String) -> Bool {
    FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } == text
}

/// Writes `text` to `path` whole, or not at all (a command's `--output`).
func writeWhole(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
}
