import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiScreens
import TaksiServer

/// `taksi-server rollback [REV]`.
struct Rollback: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an earlier published bundle current again (by default the one before the current one).")

    @Argument(help: "The bundle to make current: its name or a prefix only it has (taksi-server history lists them).")
    var bundle: String?

    @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    @OptionGroup var releaser: ReleasedByOption

    func run() async throws {
        let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
        let bundle = bundle
        try await withStore(configuration) { store in
            let release = try await store.rollback(to: bundle, by: releasedBy(releaser.by))
            print("Rolled back to bundle \(short(release.bundle)) (\(release.screens) screens) as release \(release.number)")
        }
    }
}
