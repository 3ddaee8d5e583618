package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where tests write their files: one directory per test process under the system's temporary
/// directory, removed when the process exits, so a run leaves nothing behind (it left about fifty
/// directories a run when each test made its own in `/tmp`).
package enum Scratch {
    /// The process's directory, made on first use and removed at exit.
    package static let root: URL = {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "taksi-tests-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return root
    }()

    /// A fresh path in ``root``, `<label>-<uuid><suffix>`; nothing is made there.
    package static func path(_ label: String, suffix: String = "") -> URL {
        root.appendingPathComponent("\(label)-\(UUID().uuidString)\(suffix)")
    }
}
