import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiScreens
import TaksiServer

/// `taksi-server publish [DIR]`: checks a screen set as `validate` does and publishes it.
struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a screen directory and publish it to the fleet's store; every replica serving from the store follows.",
        discussion: """
            Runs every check validate runs (against the configuration's upstreams) and stores nothing \
            when there is an error. The set is stored once, named by its content, and becomes the current \
            release. With --wait, exits 0 once every live replica serves it, 1 (naming the others) when \
            --timeout passes first.
            """
    )

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Wait until every live replica serves the published bundle.")
    var wait = false

    @Option(help: "Seconds --wait waits at most.")
    var timeout: Double = 60

    @OptionGroup var releaser: ReleasedByOption

    func run() async throws {
        let configuration = try project.configuration()
        let load = try project.loadValid()
        if !load.diagnostics.isEmpty { print(load.diagnostics.report) }
        let directory = try project.screens()
        // What a bundle holds is the directory's own: a link out of it could name any file here.
        let outside = ScreenDirectory.linksLeavingDirectory(directory, among: ScreenDirectory.files(in: directory) ?? [])
        for file in outside {
            printError(
                "error: \(file.path): a link to a file outside \(directory), which publish does not ship; copy the file into the directory")
        }
        guard outside.isEmpty, let files = ScreenSetLoader.read(directory: directory).files, let screenSet = load.screenSet else {
            throw ExitCode.failure
        }
        let bundle = ScreenBundle(files: files)
        let (wait, timeout) = (wait, timeout)
        try await withStore(configuration) { store in
            let (release, isNew) = try await store.publish(
                bundle, screens: screenSet.screens.count, revisions: PublishedScreens.revisions(of: screenSet), by: releasedBy(releaser.by))
            if isNew {
                print(
                    "Published bundle \(short(release.bundle)) (\(release.screens) screens, \(release.bytes) bytes) as release \(release.number)"
                )
            } else {
                print("Bundle \(short(release.bundle)) is already current (release \(release.number)); nothing published")
            }
            guard wait else { return }
            try await Rollout.waitForFleet(serving: release.bundle, store: store, timeout: timeout)
        }
    }
}
