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
