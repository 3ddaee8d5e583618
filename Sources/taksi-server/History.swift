import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiScreens
import TaksiServer

/// `taksi-server history`.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the latest releases of the fleet's screens, newest first.")

    @Option(help: "How many releases to list.")
    var limit: Int = 20

    @Option(help: "A configuration file naming the store (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    func run() async throws {
        let configuration = try ProjectOptions.parse(config.map { ["--config", $0] } ?? []).configuration()
        let limit = max(1, limit)
        try await withStore(configuration) { store in
            let releases = try await store.history(limit: limit)
            guard !releases.isEmpty else {
                print("Nothing was published yet (taksi-server publish)")
                return
            }
            var rows = [["release", "bundle", "kind", "at", "by", "screens", "bytes"]]
            for release in releases {
                rows.append([
                    String(release.number), short(release.bundle), release.kind, timestamp(release.at), release.by,
                    String(release.screens), String(release.bytes),
                ])
            }
            print(table(rows) + "\nrelease \(releases[0].number) is current")
        }
    }
}
