import CTaksiBuild

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The release of taksi-server this code is: printed by `taksi-server --version`, answered by
/// `GET /healthz`, and logged at start-up. Follows Semantic Versioning; see CHANGELOG.md.
///
/// This is also the one place that names what a release is made of (docs/development.md,
/// "Making a release"): the tag, the tarball `scripts/release.sh` makes and its checksum, where
/// they are published, and the image the Dockerfile builds. `taksi-server version --json` prints
/// them for scripts; `taksi-server init` writes them into a team's project.
public enum TaksiServerVersion {
    /// The version, like `1.0.0`.
    public static let current = "1.0.0"

    /// The git commit this binary was built from (40 lower-case hex digits), when the build said
    /// so (scripts/install.sh and scripts/release.sh do, from a clone with no uncommitted change);
    /// nil otherwise. `taksi-server init` pins a project's server to it.
    public static let commit: String? = sourceCommit(String(cString: taksi_source_commit()))

    /// The version with the commit as SemVer build metadata, as `--version` prints it:
    /// `1.0.0+9fb4902e1c3a` (the commit's first 12 digits), or `1.0.0` without a commit.
    public static var described: String {
        commit.map { "\(current)+\($0.prefix(12))" } ?? current
    }

    /// `text` when it is a full commit id, else nil (a build flag is outside input).
    package static func sourceCommit(_ text: String) -> String? {
        text.utf8.count == 40
            && text.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
            ? text : nil
    }

    /// The repository the source is published in, and whose releases carry the tarballs.
    public static let repository = "https://github.com/taksi-br/taksi-server"

    /// The git tag of a version: `v1.0.0`.
    public static func tag(_ version: String = current) -> String { "v\(version)" }

    /// The release tarball of a version for an operating system and machine as `uname -s` and
    /// `uname -m` name them (lower-cased): `taksi-server-1.0.0-linux-x86_64.tar.gz`. Its checksum
    /// is the same name plus `.sha256`.
    public static func tarball(
        version: String = current, system: String = Platform.system, machine: String = Platform.machine
    )
        -> String
    {
        "taksi-server-\(version)-\(system.lowercased())-\(machine).tar.gz"
    }

    /// Where the release of a version keeps its files: `<repository>/releases/download/v1.0.0`.
    public static func releaseDownloads(_ version: String = current) -> String {
        "\(repository)/releases/download/\(tag(version))"
    }

    /// The image the repository's Dockerfile builds (`docker build -t taksi-server:1.0.0 .`), and
    /// the name the release pushes to a registry under.
    public static func image(_ version: String = current) -> String { "taksi-server:\(version)" }

    /// This machine, as `uname` names it.
    public enum Platform {
        /// `Linux`, `Darwin`.
        public static var system: String { field(\.sysname) }
        /// `x86_64`, `aarch64`, `arm64`.
        public static var machine: String { field(\.machine) }

        private static func field<T>(_ path: KeyPath<utsname, T>) -> String {
            var names = utsname()
            guard uname(&names) == 0 else { return "unknown" }
            return withUnsafeBytes(of: names[keyPath: path]) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
    }
}
