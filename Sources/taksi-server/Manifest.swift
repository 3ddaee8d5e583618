import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// What the screens may send to one app build.
struct Manifest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what the screens may send to one app version: components, fields, enum values, actions, screens.",
        discussion: "Check an app release against it before it ships; --json for tools."
    )

    @Option(help: "The app version, like 2.3.")
    var appVersion: String

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let version = try parseVersion(appVersion, option: "--app-version", meaning: "an app version")
        guard let screenSet = try project.loadValid().screenSet else { throw ExitCode.failure }
        let manifest = AppManifest(screenSet, appVersion: version)
        print(json ? JSONWriter.string(manifest.json, pretty: true) : manifest.text, terminator: "")
    }
}
