public import Foundation

/// Where a ``ScreenServer`` keeps the last good screen of each path, so a load that cannot reach
/// the server shows what it showed before (marked ``LoadedScreen/keptAt``) instead of nothing.
///
/// ```swift
/// let server = ScreenServer(
///     baseURL: URL(string: "https://screens.example.com")!, userID: installID,
///     keeping: .inCaches(maxBytes: 8 << 20, timeout: 6))
/// ```
///
/// What is kept is one skeleton with the data made for it, as one pair from one revision (never a
/// skeleton with another revision's data), written atomically, one file per screen path and the
/// inputs that chose its variant (app version, alternative, platform, languages), under a folder
/// of the user id's: one user's screens are never shown to another, and
/// ``ScreenServer/forgetKeptScreens()`` (at sign-out) removes that user's. Bounded in bytes: the
/// least recently used pairs go first.
public struct ScreenKeeping: Sendable, Equatable {
    /// The folder the pairs are kept in (created when missing).
    public var directory: URL
    /// The bytes kept at most, every user's together.
    public var maxBytes: Int
    /// Seconds a load may take before it shows the kept screen instead (each request's time
    /// limit); nil keeps `URLSession`'s own.
    public var timeout: TimeInterval?
    /// The skeletons shipped with the app (`taksi-server bundle --app-version V --output FILE`):
    /// the floor under what is kept, so a first launch with no network shows those screens with
    /// placeholders where data goes; nil ships none.
    public var bundle: URL?

    public init(directory: URL, maxBytes: Int = 4 << 20, timeout: TimeInterval? = nil, bundle: URL? = nil) {
        self.directory = directory
        self.maxBytes = max(0, maxBytes)
        self.timeout = timeout.map { max(0.1, $0) }
        self.bundle = bundle
    }

    /// A folder in the app's caches directory (`Library/Caches/taksi-screens` on iOS): the system
    /// may empty it when space runs short, which costs a network load, nothing else.
    public static func inCaches(maxBytes: Int = 4 << 20, timeout: TimeInterval? = nil, bundle: URL? = nil) -> ScreenKeeping {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return ScreenKeeping(
            directory: caches.appendingPathComponent("taksi-screens"), maxBytes: maxBytes, timeout: timeout, bundle: bundle)
    }
}

/// The pairs on disk (``ScreenKeeping``): an index of every user's files (size and last use) kept
/// in memory, read from the folder once, so a load costs one file written, not a walk of them all.
final class KeptScreens: @unchecked Sendable {
    let keeping: ScreenKeeping
    private let lock = NSLock()
    /// Each file's size and last use, by path; nil until the folder is read.
    private var index: [String: (bytes: Int, used: Date)]?
    /// The bundle's skeletons and the file's date, read when first needed.
    private var bundled: (skeletons: [Bundled], madeAt: Date)?

    /// One skeleton of the bundle shipped with the app.
    struct Bundled {
        var path: String
        var alternative: String
        var language: String?
        var variant: String?
        var revision: String?
        var etag: String?
        var skeleton: Data
    }

    init(_ keeping: ScreenKeeping) {
        self.keeping = keeping
    }

    /// One kept pair, as written.
    struct Pair: Codable, Equatable {
        /// The whole key, checked on reading (the file name is its digest).
        var key: String
        var skeleton: Data
        var revision: String?
        var variant: String?
        var language: String?
        /// The skeleton's `ETag`, sent as `If-None-Match` to revalidate it.
        var etag: String?
        var data: Data
        var keptAt: Date
    }

    /// The folder of a user's pairs (`none` without a user id).
    func folder(user: String?) -> URL {
        keeping.directory.appendingPathComponent(user.map { "user-" + Self.digest($0) } ?? "none", isDirectory: true)
    }

    private func file(for key: String, user: String?) -> URL {
        folder(user: user).appendingPathComponent(Self.digest(key) + ".json")
    }

    /// The pair kept for `key`, marked as used; nil when there is none (or it cannot be read).
    func pair(for key: String, user: String?) -> Pair? {
        let url = file(for: key, user: user)
        guard let bytes = try? Data(contentsOf: url), let pair = try? JSONDecoder().decode(Pair.self, from: bytes), pair.key == key else {
            return nil
        }
        lock.lock()
        defer { lock.unlock() }
        if index?[url.path] != nil { index?[url.path]?.used = Date() }
        return pair
    }

    /// Keeps `pair` in place of the one before (written whole, then renamed over it), then drops
    /// the least recently used pairs past the bound. A pair larger than the bound is not kept.
    func keep(_ pair: Pair, user: String?) {
        guard let bytes = try? JSONEncoder().encode(pair), bytes.count <= keeping.maxBytes else { return }
        let url = file(for: pair.key, user: user)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try bytes.write(to: url, options: .atomic)
        } catch {
            return  // a full disk or a read-only folder: the screen is shown, just not kept
        }
        lock.lock()
        var index = self.index ?? readIndex()
        index[url.path] = (bytes.count, Date())
        var total = index.values.reduce(0) { $0 + $1.bytes }
        var evicted: [String] = []
        if total > keeping.maxBytes {
            for (path, entry) in index.sorted(by: { $0.value.used < $1.value.used }) where total > keeping.maxBytes {
                guard path != url.path else { continue }
                total -= entry.bytes
                index[path] = nil
                evicted.append(path)
            }
        }
        self.index = index
        lock.unlock()
        for path in evicted { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The shipped skeleton of screen `path` for `alternative` (else the default's), in the first
    /// of `languages` it has (else its first); nil when the bundle has none, or there is no bundle.
    func bundled(_ path: String, alternative: String?, languages: [String]) -> (skeleton: Bundled, madeAt: Date)? {
        guard let url = keeping.bundle else { return nil }
        lock.lock()
        if bundled == nil {
            let madeAt = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? .distantPast
            bundled = (Self.read(bundle: url), madeAt)
        }
        let (all, madeAt) = bundled ?? ([], .distantPast)
        lock.unlock()
        let wanted = alternative ?? "default"
        var candidates = all.filter { $0.path == path && $0.alternative == wanted }
        if candidates.isEmpty { candidates = all.filter { $0.path == path && $0.alternative == "default" } }
        let chosen =
            languages.lazy.compactMap { language in
                candidates.first { ($0.language ?? "").lowercased() == language.lowercased() }
                    ?? candidates.first { ($0.language ?? "").lowercased().hasPrefix(language.lowercased().prefix { $0 != "-" }) }
            }.first ?? candidates.first
        guard let chosen else { return nil }
        return (chosen, madeAt)
    }

    /// The skeletons of a bundle file; none when it cannot be read.
    private static func read(bundle url: URL) -> [Bundled] {
        guard let bytes = try? Data(contentsOf: url), let object = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any],
            let screens = object["screens"] as? [[String: Any]]
        else { return [] }
        return screens.compactMap { screen in
            guard let path = screen["path"] as? String, let skeleton = screen["skeleton"],
                let body = try? JSONSerialization.data(withJSONObject: skeleton)
            else { return nil }
            return Bundled(
                path: path, alternative: screen["alternative"] as? String ?? "default", language: screen["language"] as? String,
                variant: screen["variant"] as? String, revision: screen["revision"] as? String, etag: screen["etag"] as? String,
                skeleton: body)
        }
    }

    /// Removes a user's pairs.
    func forget(user: String?) {
        let folder = folder(user: user)
        lock.lock()
        index = index?.filter { !$0.key.hasPrefix(folder.path + "/") }
        lock.unlock()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The bytes kept now, every user's together (for tests and an app's settings screen).
    var bytes: Int {
        lock.lock()
        defer { lock.unlock() }
        if index == nil { index = readIndex() }
        return index?.values.reduce(0) { $0 + $1.bytes } ?? 0
    }

    /// Every pair file under the folder, with its size and modification time as its last use.
    private func readIndex() -> [String: (bytes: Int, used: Date)] {
        var found: [String: (bytes: Int, used: Date)] = [:]
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
        guard let walker = FileManager.default.enumerator(at: keeping.directory, includingPropertiesForKeys: keys) else { return [:] }
        for case let url as URL in walker where url.pathExtension == "json" {
            guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            found[url.path] = (values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
        }
        return found
    }

    /// FNV-1a, 64 bits, in hexadecimal: a file name for any key (the key itself is checked on reading).
    static func digest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
