import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// Prints the version, and for scripts what its release is made of.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract:
            "Print the version (as --version does, with the commit it was built from when known); --json: the release's tag, tarball, checksum, downloads, image and commit.",
        discussion: "scripts/release.sh names the tarball it makes from this, and taksi-server init writes the same names into a project."
    )

    @Flag(
        help:
            "Print an object: version, tag, repository, tarball (for this machine), checksum, downloads, image, commit (null when unknown)."
    )
    var json = false

    func run() {
        guard json else {
            print(TaksiServerVersion.described)
            return
        }
        let tarball = TaksiServerVersion.tarball()
        let release: JSONValue = .object([
            "version": .string(TaksiServerVersion.current), "tag": .string(TaksiServerVersion.tag()),
            "repository": .string(TaksiServerVersion.repository), "tarball": .string(tarball), "checksum": .string(tarball + ".sha256"),
            "downloads": .string(TaksiServerVersion.releaseDownloads()), "image": .string(TaksiServerVersion.image()),
            "commit": TaksiServerVersion.commit.map(JSONValue.string) ?? .null,
        ])
        print(JSONWriter.string(release, pretty: true), terminator: "")
    }
}
