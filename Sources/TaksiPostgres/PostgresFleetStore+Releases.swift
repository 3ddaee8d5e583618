import Foundation
import Logging
import NIOCore
import PostgresNIO
public import TaksiServer

// Published screens (``ReleaseStore``): tables `taksi_bundles`, `taksi_revisions` and
// `taksi_releases`, with a notification on channel `taksi_releases` for each release.
extension PostgresFleetStore {
    public func publish(
        _ bundle: ScreenBundle, screens: Int, revisions: [String], by: String
    ) async throws -> (release: Release, isNew: Bool) {
        let encoded = try bundle.encodedForStore()
        let content = ByteBuffer(bytes: encoded)
        let size = encoded.count
        // A bundle of some megabytes takes longer than one small statement: a longer deadline.
        return try await statement(timeout: max(timeout, .seconds(30))) { client in
            try await client.withTransaction(logger: self.logger) { connection in
                // Publishes and rollbacks one at a time: the later is current.
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.releaseLock))", logger: self.logger)
                var name = ""
                for try await id in try await connection.query(
                    """
                    INSERT INTO taksi_bundles AS b (id, content, bytes, screens)
                    VALUES (encode(sha256(\(content)), 'hex'), \(content), \(size), \(screens))
                    ON CONFLICT (id) DO UPDATE SET id = b.id
                    RETURNING id
                    """, logger: self.logger
                ).decode(String.self) { name = id }
                try await connection.query(
                    """
                    INSERT INTO taksi_revisions (revision, bundle) SELECT unnest(\(revisions)::text[]), \(name)
                    ON CONFLICT DO NOTHING
                    """, logger: self.logger)
                if let current = try await Self.current(on: connection, logger: self.logger), current.bundle == name {
                    return (current, false)
                }
                return (try await Self.release(name, kind: "publish", by: by, on: connection, logger: self.logger), true)
            }
        }
    }

    public func bundle(holdingRevision revision: String) async throws -> String? {
        try await statement { client in
            let rows = try await client.query(
                """
                SELECT r.bundle FROM taksi_revisions AS r JOIN taksi_releases AS l ON l.bundle = r.bundle
                WHERE r.revision = \(revision) GROUP BY r.bundle ORDER BY max(l.number) DESC LIMIT 1
                """)
            for try await name in rows.decode(String.self) { return name }
            return nil
        }
    }

    public func currentRelease() async throws -> Release? {
        try await statement { client in
            try await client.withConnection { try await Self.current(on: $0, logger: self.logger) }
        }
    }

    public func bundle(named name: String) async throws -> (name: String, bundle: ScreenBundle)? {
        // A row is outside this process: its size is read before its content (a row past the bound
        // costs no replica its memory), and its content is checked against its name.
        enum Found: Sendable {
            case nothing
            case tooLarge(bytes: Int)
            case content(id: String, ByteBuffer, digest: String)
        }
        let found: Found = try await statement(timeout: max(timeout, .seconds(30))) { client in
            var named: [(String, Int)] = []
            let rows = try await client.query(
                "SELECT id, octet_length(content) FROM taksi_bundles WHERE id LIKE \(Self.prefixPattern(name)) ORDER BY id LIMIT 2")
            for try await row in rows.decode((String, Int).self) { named.append(row) }
            guard named.count < 2 else { throw StoreError.ambiguousBundleName(name) }
            guard let (id, bytes) = named.first else { return .nothing }
            guard bytes <= ScreenBundle.maximumBytes else { return .tooLarge(bytes: bytes) }
            let content = try await client.query(
                "SELECT content, encode(sha256(content), 'hex') FROM taksi_bundles WHERE id = \(id)")
            for try await (bytes, digest) in content.decode((ByteBuffer, String).self) { return .content(id: id, bytes, digest: digest) }
            return .nothing
        }
        switch found {
        case .nothing:
            return nil
        case .tooLarge(let bytes):
            throw BundleError(
                "the stored bundle is \(bytes) bytes, more than the limit of \(ScreenBundle.maximumBytes) that publish keeps to; it is not read"
            )
        case .content(let id, let content, let digest):
            guard digest == id else {
                throw BundleError(
                    "the stored bundle's content does not match its name (its SHA-256 starts \(digest.prefix(12))): the row was changed after it was published"
                )
            }
            return (id, try ScreenBundle(decoding: Array(content.readableBytesView)))
        }
    }

    public func history(limit: Int) async throws -> [Release] {
        try await statement { client in
            try await client.withConnection { try await Self.releases(limit: limit, on: $0, logger: self.logger) }
        }
    }

    public func rollback(to name: String?, by: String) async throws -> Release {
        try await statement { client in
            try await client.withTransaction(logger: self.logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.releaseLock))", logger: self.logger)
                guard let current = try await Self.current(on: connection, logger: self.logger) else {
                    throw StoreError.nothingPublished
                }
                var target: String?
                if let name {
                    var found: [String] = []
                    for try await id in try await connection.query(
                        "SELECT id FROM taksi_bundles WHERE id LIKE \(Self.prefixPattern(name)) ORDER BY id LIMIT 2", logger: self.logger
                    ).decode(String.self) { found.append(id) }
                    guard found.count < 2 else { throw StoreError.ambiguousBundleName(name) }
                    guard let id = found.first else {
                        throw StoreError.noBundleNamed(name)
                    }
                    target = id
                } else {
                    for try await id in try await connection.query(
                        """
                        SELECT bundle FROM taksi_releases WHERE bundle <> \(current.bundle) ORDER BY number DESC LIMIT 1
                        """, logger: self.logger
                    ).decode(String.self) { target = id }
                    guard target != nil else { throw StoreError.nothingToRollBackTo }
                }
                guard let target, target != current.bundle else {
                    throw StoreError.alreadyCurrent(current.bundle)
                }
                return try await Self.release(target, kind: "rollback", by: by, on: connection, logger: self.logger)
            }
        }
    }

    public func listenForReleases(_ wake: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled {
            do {
                // One pooled connection held for as long as it listens (release() sends the
                // NOTIFY in its transaction).
                try await client.withConnection { connection in
                    try await connection.listen(on: "taksi_releases") { notifications in
                        wake()
                        for try await _ in notifications { wake() }
                    }
                }
            } catch  where !Task.isCancelled {
                logger.debug(
                    "store: not listening for releases; the look every second goes on", metadata: ["cause": .string(Self.describe(error))])
            } catch {}
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Publishes and rollbacks hold this lock for their transaction.
    static let releaseLock: Int64 = 0x7461_6B73_6900_0002

    /// A `LIKE` pattern for names starting with `prefix` (which holds only what names hold).
    static func prefixPattern(_ prefix: String) -> String {
        ScreenBundle.namePrefix(prefix) + "%"
    }

    /// The latest `limit` releases, newest first, with their bundles' screens and sizes.
    static func releases(limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [Release] {
        let rows = try await connection.query(
            """
            SELECT r.number, r.bundle, r.kind, r.released_at, r.released_by, b.screens, b.bytes
            FROM taksi_releases AS r JOIN taksi_bundles AS b ON b.id = r.bundle
            ORDER BY r.number DESC LIMIT \(limit)
            """, logger: logger)
        var releases: [Release] = []
        for try await row in rows.decode((Int, String, String, Date, String, Int, Int).self) {
            releases.append(Release(number: row.0, bundle: row.1, kind: row.2, at: row.3, by: row.4, screens: row.5, bytes: row.6))
        }
        return releases
    }

    static func current(on connection: PostgresConnection, logger: Logger) async throws -> Release? {
        try await releases(limit: 1, on: connection, logger: logger).first
    }

    /// Records a release of `bundle` and wakes the replicas listening.
    static func release(
        _ bundle: String, kind: String, by: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Release {
        try await connection.query(
            "INSERT INTO taksi_releases (bundle, kind, released_by) VALUES (\(bundle), \(kind), \(by))", logger: logger)
        try await connection.query("SELECT pg_notify('taksi_releases', \(bundle))", logger: logger)
        guard let release = try await current(on: connection, logger: logger) else { throw StoreError("the release was not recorded") }
        return release
    }
}
