import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a screens directory, found the way a deployment lays them out: symbolic links are
/// followed wherever they point (the directory itself and anything in it), because Kubernetes
/// mounts a ConfigMap as `Screens -> ..data/Screens` with `..data` a link to a timestamped folder.
/// Names starting with `.` are skipped (editor files, and the kubelet's own `..data` and
/// `..2026_11_21_...` entries, which would otherwise list every file twice). A directory reached
/// twice (a link loop, or two links to one folder) is read once.
///
/// A flat directory can say where its files belong: a ConfigMap's keys hold no `/`, so
/// `deploy kubernetes` ships `bikes/stations.yaml` as the key `bikes__stations.yaml` and lists
/// `{"bikes__stations.yaml": "bikes/stations.yaml"}` in ``pathIndexName``. Mounted whole (with no
/// `items:`), a file added to the ConfigMap reaches running pods with no change to their Deployment.
public enum ScreenDirectory {
    /// The file, at the directory's root, that maps names in it to the paths they stand for.
    public static let pathIndexName = ".taksi-paths.json"

    /// A path as a person typing in the working directory would write it: relative when inside
    /// it (`schemas/screen.schema.json`), else as given. For messages and command output.
    public static func shown(_ path: String) -> String {
        let here = FileManager.default.currentDirectoryPath + "/"
        return path.hasPrefix(here) ? String(path.dropFirst(here.count)) : path
    }

    /// One regular file under the directory.
    public struct File: Sendable, Equatable {
        /// The path relative to the directory, with `/` separators: `bikes/stations.yaml`.
        public var relativePath: String
        /// The path to open: the directory as given, joined with ``relativePath``.
        public var path: String
        /// Size in bytes.
        public var size: Int
        /// A token that changes when the file is rewritten or replaced: device, inode, size and
        /// modification time of the file the links lead to.
        public var fingerprint: String
    }

    /// Every regular file under `directory`, sorted by relative path, or nil when `directory` is
    /// not a directory (after following links).
    public static func files(in directory: String) -> [File]? {
        guard let root = status(of: directory), root.isDirectory else { return nil }
        var files: [File] = []
        var visited: Set<DirectoryID> = [root.id]
        walk(directory, relative: "", visited: &visited, into: &files)
        if case .success(let index)? = pathIndex(in: directory) {
            for position in files.indices {
                if let path = index[files[position].relativePath] { files[position].relativePath = path }
            }
        }
        return files.sorted { $0.relativePath < $1.relativePath }
    }

    /// The files of `files` (as ``files(in:)`` found them in `directory`) that are links leading
    /// out of it: what a deployment or a publish ships must be the directory's own, not whatever
    /// file of this machine a link names (the kubelet's own links stay inside the mount).
    public static func linksLeavingDirectory(_ directory: String, among files: [File]) -> [File] {
        let root = realPath(directory) ?? directory
        let inside = root.hasSuffix("/") ? root : root + "/"
        return files.filter { file in
            guard let real = realPath(file.path) else { return false }
            return real != root && !real.hasPrefix(inside)
        }
    }

    /// `path` with every link resolved (realpath(3)); nil when it cannot be.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The directory's ``pathIndexName``: nil when it has none, a failure saying what is wrong
    /// with it (the loader reports it; the files are then listed under their own names).
    public static func pathIndex(in directory: String) -> Result<[String: String], PathIndexError>? {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + pathIndexName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return .failure(
                PathIndexError(message: "not a JSON object of names and paths, like {\"bikes__stations.yaml\": \"bikes/stations.yaml\"}"))
        }
        var index: [String: String] = [:]
        for (name, value) in object {
            guard let target = value as? String, !target.hasPrefix("/"), !target.hasSuffix("/"),
                !target.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
            else {
                return .failure(PathIndexError(message: "\"\(name)\": the path must be relative, inside the directory (no \"..\")"))
            }
            index[name] = target
        }
        guard Set(index.values).count == index.count else {
            return .failure(PathIndexError(message: "two names stand for the same path"))
        }
        return .success(index)
    }

    /// What is wrong with a directory's ``pathIndexName``.
    public struct PathIndexError: Error, Sendable, Equatable {
        public var message: String
    }

    private struct DirectoryID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct Status {
        var id: DirectoryID
        var isDirectory: Bool
        var isRegularFile: Bool
        var size: Int
        var modified: String
    }

    /// stat(2), which follows links; nil for a broken link or an unreadable entry.
    private static func status(of path: String) -> Status? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        #if canImport(Darwin)
        let modified = "\(info.st_mtimespec.tv_sec).\(info.st_mtimespec.tv_nsec)"
        #else
        let modified = "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        #endif
        return Status(
            id: DirectoryID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            isDirectory: type == S_IFDIR, isRegularFile: type == S_IFREG, size: Int(info.st_size), modified: modified
        )
    }

    private static func walk(_ directory: String, relative: String, visited: inout Set<DirectoryID>, into files: inout [File]) {
        // contentsOfDirectory lists names without resolving anything; stat below follows links.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            let relativePath = relative.isEmpty ? name : relative + "/" + name
            guard let entry = status(of: path) else { continue }
            if entry.isDirectory {
                guard visited.insert(entry.id).inserted else { continue }
                walk(path, relative: relativePath, visited: &visited, into: &files)
            } else if entry.isRegularFile {
                let fingerprint = "\(entry.id.device):\(entry.id.inode):\(entry.size)@\(entry.modified)"
                files.append(File(relativePath: relativePath, path: path, size: entry.size, fingerprint: fingerprint))
            }
        }
    }
}
