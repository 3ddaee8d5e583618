public import Foundation

/// A screen set as `publish` stores it: every definition file of the screens directory, by its
/// path relative to it, in one immutable blob named by its content. The encoding is stable (a
/// JSON object with sorted keys), so the same files are always the same bytes and the same name.
///
/// ```json
/// {"files": {"home.yaml": "<base64>", "components/card.json": "<base64>"}, "format": 1}
/// ```
public struct ScreenBundle: Sendable, Equatable {
    /// The encoding this build writes and reads; a bundle of a later format is refused with why
    /// (a replica older than the one that published it).
    public static let format = 1
    /// Encoded bundles larger than this are refused by `publish`: a screen set that size belongs
    /// behind an upstream, and every replica holds its bundle in memory while it loads it.
    public static let maximumBytes = 32 << 20

    public var files: [String: [UInt8]]

    public init(files: [String: [UInt8]]) { self.files = files }

    /// The stored bytes.
    public var encoded: [UInt8] {
        let object: [String: Any] = [
            "format": Self.format, "files": files.mapValues { Data($0).base64EncodedString() },
        ]
        // Only strings and an integer: this cannot fail.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Array(data)
    }

    /// Reads stored bytes.
    /// - Throws: ``BundleError`` when they are not a bundle this build can read.
    public init(decoding bytes: [UInt8]) throws(BundleError) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], let format = object["format"] as? Int
        else { throw BundleError("the bundle is not in the format taksi-server stores") }
        guard format <= Self.format else {
            throw BundleError(
                "the bundle is in format \(format), newer than this server reads (\(Self.format)); upgrade this replica to the version that published it"
            )
        }
        guard let encodedFiles = object["files"] as? [String: String] else { throw BundleError("the bundle holds no files") }
        var files: [String: [UInt8]] = [:]
        for (path, text) in encodedFiles {
            guard let data = Data(base64Encoded: text) else { throw BundleError("the bundle's file \(path) is not base64") }
            files[path] = Array(data)
        }
        self.files = files
    }
}

/// A bundle that cannot be read.
public struct BundleError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// One move of the fleet's current bundle: a publish or a rollback.
public struct Release: Sendable, Equatable {
    /// Counts up from 1, one per move.
    public var number: Int
    /// The bundle served from then on.
    public var bundle: String
    /// `publish` or `rollback`.
    public var kind: String
    public var at: Date
    /// Who moved it (the user and host `publish` ran as, or what the caller said).
    public var by: String
    /// The bundle's screens and encoded bytes.
    public var screens: Int
    public var bytes: Int

    public init(number: Int, bundle: String, kind: String, at: Date, by: String, screens: Int, bytes: Int) {
        self.number = number
        self.bundle = bundle
        self.kind = kind
        self.at = at
        self.by = by
        self.screens = screens
        self.bytes = bytes
    }
}

/// What one replica said of itself in the store.
public struct ReplicaReport: Sendable, Equatable {
    /// The replica's name: the pod's (`HOSTNAME`) and its process.
    public var replica: String
    /// The bundle it serves, and since when; nil while it serves none (it is not ready).
    public var bundle: String?
    public var since: Date?
    /// A bundle it refused, and why (the diagnostics of the load).
    public var refusedBundle: String?
    public var refusal: String?
    /// When it last said it was alive.
    public var seen: Date

    public init(replica: String, bundle: String?, since: Date?, refusedBundle: String?, refusal: String?, seen: Date) {
        self.replica = replica
        self.bundle = bundle
        self.since = since
        self.refusedBundle = refusedBundle
        self.refusal = refusal
        self.seen = seen
    }
}
