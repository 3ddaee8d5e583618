import ArgumentParser
import Foundation
import Logging
import Subprocess
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

/// Reads the files of a screens directory, now or at a git revision.
enum RevisionFiles {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every file under `directory`, by its path relative to it.
    static func read(directory: String) -> [String: [UInt8]]? {
        guard let found = ScreenDirectory.files(in: directory) else { return nil }
        var files: [String: [UInt8]] = [:]
        for file in found {
            if let data = FileManager.default.contents(atPath: file.path) { files[file.relativePath] = Array(data) }
        }
        return files
    }

    /// The base's files and the name they are shown by: a directory's, or those of the screens
    /// directory at a git revision (`HEAD~1:Screens`).
    static func base(_ base: String, screens: String) async throws -> (files: [String: [UInt8]], root: String) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: base, isDirectory: &isDirectory), isDirectory.boolValue {
            guard let files = read(directory: base) else { throw Failure(description: "\(base): cannot be read") }
            return (files, base)
        }
        let prefix = try await git(["rev-parse", "--show-prefix"], in: screens).trimmingCharacters(in: .whitespacesAndNewlines)
        let top = try await git(["rev-parse", "--show-toplevel"], in: screens).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await git(
            ["rev-parse", "--verify", "--quiet", base + "^{commit}"], in: screens,
            failure: "\(base) is neither a directory nor a git revision of the repository \(screens) is in")
        let listing = try await git(["ls-tree", "-r", "-z", "--name-only", base, "--", prefix.isEmpty ? "." : prefix], in: top)
        var files: [String: [UInt8]] = [:]
        for path in listing.split(separator: "\0").map(String.init) where !path.isEmpty {
            let relative = prefix.isEmpty ? path : String(path.dropFirst(prefix.count))
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
            files[relative] = try await gitOutput(["show", "\(base):\(path)"], in: top)
        }
        let name = prefix.isEmpty ? URL(fileURLWithPath: screens).lastPathComponent : String(prefix.dropLast())
        return (files, "\(base):\(name)")
    }

    private static func git(_ arguments: [String], in directory: String, failure: String? = nil) async throws -> String {
        String(decoding: try await gitOutput(arguments, in: directory, failure: failure), as: UTF8.self)
    }

    /// Larger than any screen file (the loader refuses those long before) or listing.
    private static let outputLimit = 256 << 20

    /// What `git -C directory arguments` writes, or a ``Failure`` with `failure` (else git's own
    /// message). Its output and its errors are read as they come, so neither can fill its pipe
    /// and stall git.
    ///
    /// The repository is read whoever owns it: a CI job in a container runs as root over a
    /// checkout the runner's user owns, and git refuses such a repository ("detected dubious
    /// ownership") unless it is named in `safe.directory`. These calls name the one repository
    /// `directory` is in, for themselves only; they read objects (`rev-parse`, `ls-tree`, `show`)
    /// and run none of its hooks or filters.
    private static func gitOutput(_ arguments: [String], in directory: String, failure: String? = nil) async throws -> [UInt8] {
        let trusted = repositoryRoot(of: directory).map { ["-c", "safe.directory=\($0)"] } ?? []
        let executed: (status: TerminationStatus, output: [UInt8], errors: String?)
        do {
            let result = try await run(
                .name("git"), arguments: Arguments(trusted + ["-C", directory] + arguments), output: .bytes(limit: outputLimit),
                error: .string(limit: 64 << 10))
            executed = (result.terminationStatus, result.standardOutput, result.standardError)
        } catch {
            throw Failure(description: "git cannot be run (\(error)); give the base as a directory")
        }
        guard executed.status.isSuccess else {
            let message = (executed.errors ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            throw Failure(description: failure ?? "git \(arguments.joined(separator: " ")): \(message)")
        }
        return executed.output
    }

    /// The working tree `directory` is in: the nearest folder, `directory` or above it, with a
    /// `.git` (a folder, or a worktree's file); nil outside one.
    static func repositoryRoot(of directory: String) -> String? {
        var folder = URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath()
        while true {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(".git").path) { return folder.path }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { return nil }
            folder = parent
        }
    }
}
