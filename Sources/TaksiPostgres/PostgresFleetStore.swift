public import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import TaksiScreens
public import TaksiServer

/// The fleet's store on PostgreSQL: keyed submits claimed and answered in table `taksi_submits`,
/// published screens, replicas' reports and exposure records (`taksi_exposures`; see docs/fleet.md
/// and docs/experiments.md). Its tables are made and changed by versioned migrations, each run once,
/// by whichever replica gets there first, under an advisory lock (``migrations``).
///
/// Every statement is bounded by the configured timeout, waiting for a pooled connection
/// included: a store that is down or slow fails the call within it, never holds it.
public final class PostgresFleetStore: FleetStore {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration
    /// How long an answer is kept, for the housekeeping that deletes older ones.
    let window: Duration
    private let schema: SchemaGate
    /// Why connections fail, in the database's words (see ``ConnectionWatch``).
    let connections: ConnectionWatch
    /// The exposure window the recorder last gave (``recordExposures(_:window:)``): past it, a
    /// user's window row decides nothing, and the housekeeping deletes it.
    private let exposureWindow = NIOLockedValueBox<Duration?>(nil)

    /// - Parameters:
    ///   - settings: where the store is, its pool size and statement timeout.
    ///   - window: how long submits' answers are kept (`idempotency_window`).
    ///   - logger: the pool's own messages (never a password or a statement's values).
    public init(settings: ServerConfiguration.StoreSettings, window: Duration, logger: Logger) throws(StoreError) {
        guard let connection = settings.connection else { throw StoreError("no store is configured") }
        var configuration = PostgresClient.Configuration(
            host: connection.host, port: connection.port, username: connection.user, password: connection.password,
            database: connection.database, tls: Self.tls(connection.tls))
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .milliseconds(Int64(settings.timeout * 1000))
        // The pool's own messages (each failed connection attempt, at info) only when debugging:
        // a store that is down is said by the statements that fail, once each.
        var background = logger
        if background.logLevel > .debug { background.logLevel = max(background.logLevel, .warning) }
        var probeConfiguration = PostgresConnection.Configuration(
            host: connection.host, port: connection.port, username: connection.user, password: connection.password,
            database: connection.database, tls: Self.connectionTLS(connection.tls))
        probeConfiguration.options.connectTimeout = .milliseconds(Int64(settings.timeout * 1000))
        let connections = ConnectionWatch(logger: logger) { [probeConfiguration, background] in
            do {
                let probe = try await PostgresConnection.connect(configuration: probeConfiguration, id: 0, logger: background)
                try? await probe.close()
                return nil
            } catch {
                return ConnectionWatch.problem(of: error)
            }
        }
        self.connections = connections
        var watched = background
        watched.handler = WatchingLogHandler(inner: background.handler, watch: connections)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: watched)
        self.logger = logger
        self.timeout = .milliseconds(Int64(settings.timeout * 1000))
        self.window = window
        self.schema = SchemaGate()
    }

    /// The TLS `mode` asks for: nil for none, else its configuration and whether it is required
    /// (libpq's `sslmode`: `prefer` and `require` check no certificate, `verify-ca` the
    /// authority, `verify-full` the host name too).
    private static func tlsConfiguration(
        _ mode: ServerConfiguration.StoreSettings.Connection.TLSMode
    ) -> (configuration: TLSConfiguration, required: Bool)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return nil
        case .prefer, .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: break
        }
        return (configuration, mode != .prefer)
    }

    /// The pool's TLS.
    private static func tls(_ mode: ServerConfiguration.StoreSettings.Connection.TLSMode) -> PostgresClient.Configuration.TLS {
        guard let (configuration, required) = tlsConfiguration(mode) else { return .disable }
        return required ? .require(configuration) : .prefer(configuration)
    }

    /// The same TLS for a connection of the store's own (``ConnectionWatch``'s probe).
    private static func connectionTLS(_ mode: ServerConfiguration.StoreSettings.Connection.TLSMode) -> PostgresConnection.Configuration.TLS
    {
        guard let (configuration, required) = tlsConfiguration(mode), let context = try? NIOSSLContext(configuration: configuration)
        else { return .disable }
        return required ? .require(context) : .prefer(context)
    }

    // MARK: Running

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.client.run() }
                group.addTask { await self.housekeeping() }
            }
        }
    }

    /// Deletes answers older than the window, once a minute (every replica does: a delete that
    /// finds nothing costs an index scan).
    private func housekeeping() async {
        while !Task.isCancelled {
            do {
                let deleted = try await pruneSubmits()
                if deleted > 0 { logger.debug("store: expired submit answers deleted", metadata: ["count": "\(deleted)"]) }
                let windows = try await pruneExposureWindows()
                if windows > 0 { logger.debug("store: exposure windows past exposure_window deleted", metadata: ["count": "\(windows)"]) }
            } catch  where !Task.isCancelled {
                logger.warning("store: expired rows not deleted", metadata: ["cause": .string(Self.describe(error))])
            } catch {}
            try? await Task.sleep(for: .seconds(60))
        }
    }

    /// Deletes users' exposure windows that ended (older than the exposure window last given to
    /// ``recordExposures(_:window:)``; nothing before one is): such a row decides nothing, and
    /// one is made for every user an experiment ever showed an alternative to.
    @discardableResult
    func pruneExposureWindows() async throws -> Int {
        guard let window = exposureWindow.withLockedValue({ $0 }) else { return 0 }
        return try await statement { client in
            let rows = try await client.query(
                """
                WITH deleted AS (
                    DELETE FROM taksi_exposure_windows WHERE last_at < now() - make_interval(secs => \(Self.seconds(window)))
                    RETURNING 1)
                SELECT count(*)::bigint FROM deleted
                """)
            var count = 0
            for try await deleted in rows.decode(Int64.self) { count = Int(deleted) }
            return count
        }
    }

    /// Deletes answers older than the window and claims whose lease ran out that long ago.
    @discardableResult
    func pruneSubmits() async throws -> Int {
        try await statement { client in
            let seconds = Self.seconds(self.window)
            let rows = try await client.query(
                """
                WITH deleted AS (
                    DELETE FROM taksi_submits
                    WHERE created_at < now() - make_interval(secs => \(seconds))
                      AND (status IS NOT NULL OR lease_until < now())
                    RETURNING 1),
                gone AS (DELETE FROM taksi_replicas WHERE seen < now() - interval '1 day'),
                purged AS (DELETE FROM taksi_purges WHERE recorded_at < now() - interval '1 day')
                SELECT count(*)::bigint FROM deleted
                """)
            var count = 0
            for try await (deleted) in rows.decode(Int64.self) { count = Int(deleted) }
            return count
        }
    }

    // MARK: Submits

    public func claimSubmit(key: String, fingerprint: [UInt8], lease: Duration, window: Duration) async throws -> SubmitClaim {
        let token = UUID()
        let print = ByteBuffer(bytes: fingerprint)
        let leaseSeconds = Self.seconds(lease)
        let windowSeconds = Self.seconds(window)
        return try await statement { client in
            // One statement decides: a new key is inserted; an answer older than the window, or a
            // claim whose lease ran out with the same request, is taken over; anything else
            // stays, and the row as it is says what to do.
            let rows = try await client.query(
                """
                WITH claim AS (
                    INSERT INTO taksi_submits AS s (key, fingerprint, claim, lease_until, created_at)
                    VALUES (\(key), sha256(\(print)), \(token), now() + make_interval(secs => \(leaseSeconds)), now())
                    ON CONFLICT (key) DO UPDATE
                        SET fingerprint = excluded.fingerprint, claim = excluded.claim, lease_until = excluded.lease_until,
                            created_at = excluded.created_at, status = NULL, headers = NULL, body = NULL
                        WHERE s.created_at < now() - make_interval(secs => \(windowSeconds))
                           OR (s.status IS NULL AND s.lease_until < now() AND s.fingerprint = excluded.fingerprint)
                    RETURNING claim)
                SELECT (SELECT claim FROM claim) IS NOT NULL, s.fingerprint = sha256(\(print)), s.status, s.headers, s.body
                FROM (SELECT 1) AS one LEFT JOIN taksi_submits AS s ON s.key = \(key)
                """)
            for try await (won, same, status, headers, body) in rows.decode((Bool, Bool?, Int?, String?, ByteBuffer?).self) {
                if won { return .claimed(token: token) }
                guard let same else { break }
                guard same else { return .mismatch }
                guard let status, let headers else { return .running }
                // A row is outside the process: a status no HTTP answer has is refused, not replayed
                // (and never reaches NIO's status, which traps on a negative one).
                guard Self.replayableStatuses.contains(status) else {
                    throw StoreError("the answer stored for this key has status \(status), which is no HTTP status; it is not replayed")
                }
                return .answered(
                    IdempotencyStore.Answer(
                        status: HTTPResponseStatus(statusCode: status), headers: Self.decodeHeaders(headers),
                        body: body.map { Array($0.readableBytesView) } ?? []))
            }
            // Not seen by this statement's snapshot: a claim committed while the insert waited on it
            // (or a row pruned since). Running, for now; the caller asks again.
            return .running
        }
    }

    public func finishSubmit(key: String, token: UUID, answer: IdempotencyStore.Answer?) async throws -> Bool {
        try await statement { client in
            let rows: PostgresRowSequence
            if let answer {
                let body = ByteBuffer(bytes: answer.body)
                // The claim stays on the answered row: a retry of this statement (its first run
                // committed, but its answer was lost) finds it and writes the same answer again,
                // so an answer recorded is never counted as one that was not.
                rows = try await client.query(
                    """
                    UPDATE taksi_submits SET status = \(Int(answer.status.code)), headers = \(Self.encodeHeaders(answer.headers)),
                        body = \(body), lease_until = NULL
                    WHERE key = \(key) AND claim = \(token)
                    RETURNING 1
                    """)
            } else {
                // Forgetting is done once the key is not claimed with this token, whoever deleted it.
                _ = try await client.query("DELETE FROM taksi_submits WHERE key = \(key) AND claim = \(token) AND status IS NULL")
                return true
            }
            var found = false
            for try await _ in rows { found = true }
            return found
        }
    }

    // MARK: CDN purges

    public func recordPurge(bundle: String, screens: [String]) async throws {
        _ = try await statement { client in
            // A replica that adds a screen the others did not find makes the purge unsent again.
            try await client.query(
                """
                INSERT INTO taksi_purges AS p (bundle, screens) VALUES (\(bundle), \(screens)::text[])
                ON CONFLICT (bundle) DO UPDATE
                    SET screens = ARRAY(SELECT DISTINCT s FROM unnest(p.screens || excluded.screens) AS s ORDER BY s),
                        sent_at = CASE WHEN excluded.screens <@ p.screens THEN p.sent_at END
                """)
        }
    }

    public func unsentPurges(recordedWithin window: Duration, before age: Duration) async throws -> [(bundle: String, screens: [String])] {
        try await statement { client in
            let rows = try await client.query(
                """
                SELECT bundle, screens FROM taksi_purges
                WHERE sent_at IS NULL AND recorded_at < now() - make_interval(secs => \(Self.seconds(age)))
                  AND recorded_at > now() - make_interval(secs => \(Self.seconds(window)))
                ORDER BY recorded_at
                """)
            var found: [(bundle: String, screens: [String])] = []
            for try await (bundle, screens) in rows.decode((String, [String]).self) { found.append((bundle, screens)) }
            return found
        }
    }

    public func purgeSent(bundle: String, screens: [String]) async throws {
        _ = try await statement { client in
            try await client.query(
                "UPDATE taksi_purges SET sent_at = now() WHERE bundle = \(bundle) AND sent_at IS NULL AND screens <@ \(screens)::text[]")
        }
    }

    // MARK: Exposures

    public func recordExposures(_ records: [ExposureRecorder.Record], window: Duration) async throws -> [ExposureRecorder.Record] {
        guard !records.isEmpty else { return [] }
        exposureWindow.withLockedValue { $0 = window }
        let seconds = Self.seconds(window)
        let experiments = records.map(\.experiment)
        let users = records.map(\.user)
        let alternatives = records.map(\.alternative)
        let versions = records.map { $0.appVersion ?? "" }
        let platforms = records.map { $0.platform ?? "" }
        let screens = records.map(\.screen)
        let variants = records.map(\.variant)
        let times = records.map(\.time)
        let requests = records.map(\.requestID)
        let positions = records.indices.map { Int64($0) }
        return try await statement { client in
            // One statement decides for the fleet: the first of the batch's records of a user and
            // experiment claims the pair's window row (new, or past the window); only a claimed
            // pair's record is inserted, and only those are returned. Rows are claimed in the
            // order of their keys, so two replicas' batches over the same users wait for each
            // other instead of deadlocking.
            let rows = try await client.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(
                        \(experiments)::text[], \(users)::text[], \(alternatives)::text[], \(versions)::text[], \(platforms)::text[],
                        \(screens)::text[], \(variants)::text[], \(times)::bigint[], \(requests)::text[], \(positions)::bigint[])
                    AS i (experiment, user_id, alternative, app_version, platform, screen, variant, time_ms, request_id, position)),
                firsts AS (SELECT DISTINCT ON (experiment, user_id) * FROM input ORDER BY experiment, user_id, position),
                claimed AS (
                    INSERT INTO taksi_exposure_windows AS w (experiment, user_id, last_at)
                    SELECT experiment, user_id, now() FROM firsts ORDER BY experiment, user_id
                    ON CONFLICT (experiment, user_id) DO UPDATE SET last_at = excluded.last_at
                        WHERE w.last_at < now() - make_interval(secs => \(seconds))
                    RETURNING experiment, user_id),
                kept AS (
                    INSERT INTO taksi_exposures
                        (experiment, user_id, alternative, app_version, platform, screen, variant, exposed_at, request_id)
                    SELECT f.experiment, f.user_id, f.alternative, NULLIF(f.app_version, ''), NULLIF(f.platform, ''), f.screen,
                        f.variant, to_timestamp(f.time_ms / 1000.0), f.request_id
                    FROM firsts AS f JOIN claimed AS c USING (experiment, user_id)
                    RETURNING experiment, user_id)
                SELECT f.position FROM firsts AS f JOIN kept AS k USING (experiment, user_id) ORDER BY f.position
                """)
            var kept: [ExposureRecorder.Record] = []
            for try await position in rows.decode(Int64.self) {
                // One of the positions sent, unless the store is not the one this code wrote for.
                guard let index = Int(exactly: position), records.indices.contains(index) else {
                    throw StoreError("the store answered position \(position) for a batch of \(records.count) exposures")
                }
                kept.append(records[index])
            }
            return kept
        }
    }

    // MARK: Published screens

    public func publish(
        _ bundle: ScreenBundle, screens: Int, revisions: [String], by: String
    ) async throws -> (release: Release, isNew: Bool) {
        let encoded = bundle.encoded
        guard encoded.count <= ScreenBundle.maximumBytes else {
            throw StoreError(
                "the screen set is \(encoded.count) bytes as a bundle, more than the limit of \(ScreenBundle.maximumBytes); move data to an upstream"
            )
        }
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
            guard named.count < 2 else { throw StoreError("more than one bundle's name starts with \(name); give more of it") }
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
                    throw StoreError("nothing was published yet; publish a screen set first")
                }
                var target: String?
                if let name {
                    var found: [String] = []
                    for try await id in try await connection.query(
                        "SELECT id FROM taksi_bundles WHERE id LIKE \(Self.prefixPattern(name)) ORDER BY id LIMIT 2", logger: self.logger
                    ).decode(String.self) { found.append(id) }
                    guard found.count < 2 else { throw StoreError("more than one bundle's name starts with \(name); give more of it") }
                    guard let id = found.first else {
                        throw StoreError("no published bundle is named \(name); `taksi-server history` lists them")
                    }
                    target = id
                } else {
                    for try await id in try await connection.query(
                        """
                        SELECT bundle FROM taksi_releases WHERE bundle <> \(current.bundle) ORDER BY number DESC LIMIT 1
                        """, logger: self.logger
                    ).decode(String.self) { target = id }
                    guard target != nil else { throw StoreError("only one bundle was ever published; there is nothing to roll back to") }
                }
                guard let target, target != current.bundle else {
                    throw StoreError("bundle \(current.bundle.prefix(12)) is already current")
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

    public func report(_ report: ReplicaReport) async throws {
        _ = try await statement { client in
            try await client.query(
                """
                INSERT INTO taksi_replicas (replica, bundle, since, refused_bundle, refusal, seen)
                VALUES (\(report.replica), \(report.bundle), \(report.since), \(report.refusedBundle), \(report.refusal), now())
                ON CONFLICT (replica) DO UPDATE SET bundle = excluded.bundle, since = excluded.since,
                    refused_bundle = excluded.refused_bundle, refusal = excluded.refusal, seen = now()
                """)
        }
    }

    public func replicas(seenWithin alive: Duration) async throws -> [ReplicaReport] {
        let seconds = Self.seconds(alive)
        return try await statement { client in
            let rows = try await client.query(
                """
                SELECT replica, bundle, since, refused_bundle, refusal, seen FROM taksi_replicas
                WHERE seen > now() - make_interval(secs => \(seconds)) ORDER BY replica
                """)
            var reports: [ReplicaReport] = []
            for try await (replica, bundle, since, refusedBundle, refusal, seen) in rows.decode(
                (String, String?, Date?, String?, String?, Date).self)
            {
                reports.append(
                    ReplicaReport(
                        replica: replica, bundle: bundle, since: since, refusedBundle: refusedBundle, refusal: refusal, seen: seen))
            }
            return reports
        }
    }

    /// Publishes and rollbacks hold this lock for their transaction.
    static let releaseLock: Int64 = 0x7461_6B73_6900_0002

    /// A `LIKE` pattern for names starting with `prefix` (which holds only what names hold).
    static func prefixPattern(_ prefix: String) -> String {
        String(prefix.lowercased().filter { $0.isHexDigit }) + "%"
    }

    /// The latest `limit` releases, newest first, with their bundles' screens and sizes.
    private static func releases(limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [Release] {
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

    private static func current(on connection: PostgresConnection, logger: Logger) async throws -> Release? {
        try await releases(limit: 1, on: connection, logger: logger).first
    }

    /// Records a release of `bundle` and wakes the replicas listening.
    private static func release(
        _ bundle: String, kind: String, by: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Release {
        try await connection.query(
            "INSERT INTO taksi_releases (bundle, kind, released_by) VALUES (\(bundle), \(kind), \(by))", logger: logger)
        try await connection.query("SELECT pg_notify('taksi_releases', \(bundle))", logger: logger)
        guard let release = try await current(on: connection, logger: logger) else { throw StoreError("the release was not recorded") }
        return release
    }

    // MARK: Statements

    /// Runs `body` once the schema is current, within the timeout; errors become ``StoreError``s
    /// that say what failed without a statement's values.
    private func statement<Result: Sendable>(
        timeout: Duration? = nil, _ body: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        do {
            return try await withDeadline(timeout ?? self.timeout) { [self] in
                try await schema.ensure { try await self.migrate() }
                return try await body(client)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresTransactionError where error.closureError is StoreError {
            throw error.closureError as! StoreError
        } catch {
            throw StoreError(Self.describe(error))
        }
    }

    /// `body`'s result, or ``StoreError`` when it takes longer than `limit`: then `body` is
    /// cancelled (a connection it waits for is no longer wanted), and the caller is answered at
    /// once, not when `body` notices (waiting for the migrations, say, does not end on
    /// cancellation).
    private func withDeadline<Result: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let outcome = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
        let finish = { @Sendable (result: Swift.Result<Result, any Error>) in
            outcome.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let seconds = Self.seconds(limit)
        var tasks: [Task<Void, Never>] = []
        let id = UUID()
        defer { connections.unwatch(id) }
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                outcome.withLockedValue { $0 = continuation }
                let work = Task { [connections] in
                    do {
                        let answer = try await body()
                        connections.connected()
                        finish(.success(answer))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task { [connections] in
                    try? await Task.sleep(for: limit)
                    let last = connections.problem.map { "; the last connection attempt: \($0.text)" } ?? ""
                    finish(.failure(StoreError("no answer within store_timeout (\(seconds) s)\(last)")))
                    work.cancel()
                }
                tasks = [work, timer]
                // A connection the database refuses for good fails the statement now, saying why.
                connections.watch(id) { problem in
                    finish(.failure(StoreError("cannot connect: \(problem.text)")))
                    work.cancel()
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
        tasks.forEach { $0.cancel() }
        return result
    }

    /// What went wrong, in words that name no password and no statement's values.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            if let cause = error.closureError ?? error.beginError ?? error.commitError { return describe(cause) }
        }
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] {
            return "the database refused: \(message)" + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Headers as a JSON array of pairs (names repeat, order matters).
    static func encodeHeaders(_ headers: [(String, String)]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: headers.map { [$0.0, $0.1] })) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The headers of a stored answer; a pair that is no header line (a name that is not a
    /// token, a value with a line break or another control character) is dropped, so a row never
    /// writes a line of its own into a response.
    static func decodeHeaders(_ text: String) -> [(String, String)] {
        guard let pairs = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]] else { return [] }
        return pairs.compactMap { pair in
            guard pair.count == 2, HTTPSource.isHeaderName(pair[0]),
                !pair[1].unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
            else { return nil }
            return (pair[0], pair[1])
        }
    }

    /// The statuses a stored answer is replayed with.
    static let replayableStatuses = 100...599

    // MARK: Migrations

    /// The store's schema, one step per version, in order; a step is never changed once
    /// released, only followed by another.
    static let migrations: [(version: Int, name: String, sql: String)] = [
        (
            1, "submits",
            """
            CREATE TABLE taksi_submits (
                key text PRIMARY KEY,
                fingerprint bytea NOT NULL,
                claim uuid,
                lease_until timestamptz,
                status integer,
                headers text,
                body bytea,
                created_at timestamptz NOT NULL
            );
            CREATE INDEX taksi_submits_created_at ON taksi_submits (created_at)
            """
        ),
        (
            2, "published screens",
            """
            CREATE TABLE taksi_bundles (
                id text PRIMARY KEY,
                content bytea NOT NULL,
                bytes integer NOT NULL,
                screens integer NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE taksi_releases (
                number bigserial PRIMARY KEY,
                bundle text NOT NULL REFERENCES taksi_bundles (id),
                kind text NOT NULL,
                released_at timestamptz NOT NULL DEFAULT now(),
                released_by text NOT NULL
            );
            CREATE TABLE taksi_replicas (
                replica text PRIMARY KEY,
                bundle text,
                since timestamptz,
                refused_bundle text,
                refusal text,
                seen timestamptz NOT NULL
            )
            """
        ),
        (
            3, "revisions of bundles",
            """
            CREATE TABLE taksi_revisions (
                revision text NOT NULL,
                bundle text NOT NULL REFERENCES taksi_bundles (id),
                PRIMARY KEY (revision, bundle)
            )
            """
        ),
        (
            4, "exposures",
            """
            CREATE TABLE taksi_exposures (
                experiment text NOT NULL,
                user_id text NOT NULL,
                alternative text NOT NULL,
                app_version text,
                platform text,
                screen text NOT NULL,
                variant text NOT NULL,
                exposed_at timestamptz NOT NULL,
                request_id text NOT NULL
            );
            CREATE INDEX taksi_exposures_experiment ON taksi_exposures (experiment, exposed_at);
            CREATE INDEX taksi_exposures_user ON taksi_exposures (user_id);
            CREATE TABLE taksi_exposure_windows (
                experiment text NOT NULL,
                user_id text NOT NULL,
                last_at timestamptz NOT NULL,
                PRIMARY KEY (experiment, user_id)
            )
            """
        ),
        (
            5, "cdn purges",
            """
            CREATE TABLE taksi_purges (
                bundle text PRIMARY KEY,
                screens text[] NOT NULL,
                recorded_at timestamptz NOT NULL DEFAULT now(),
                sent_at timestamptz
            )
            """
        ),
    ]

    /// The advisory lock migrations hold: one replica migrates, the others wait and find it done.
    static let migrationLock: Int64 = 0x7461_6B73_6900_0001

    /// Brings the schema to the newest version this build knows, in one transaction under the lock.
    func migrate() async throws {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: self.logger)
            do {
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS taksi_migrations (
                        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                    """, logger: self.logger)
                var applied = 0
                for try await version in try await connection.query(
                    "SELECT coalesce(max(version), 0) FROM taksi_migrations", logger: self.logger
                ).decode(Int.self) { applied = version }
                for migration in Self.migrations where migration.version > applied {
                    for part in migration.sql.components(separatedBy: ";\n") {
                        try await connection.query(PostgresQuery(unsafeSQL: part), logger: self.logger)
                    }
                    try await connection.query(
                        "INSERT INTO taksi_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: self.logger
                    )
                    self.logger.info("store: migrated", metadata: ["version": "\(migration.version)", "name": .string(migration.name)])
                }
                try await connection.query("COMMIT", logger: self.logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: self.logger)
                throw error
            }
        }
    }
}

/// Runs the migrations once per process, before the first statement; again after a failure
/// (the store was down at start).
final class SchemaGate: Sendable {
    private let state = NIOLockedValueBox<Task<Void, any Error>?>(nil)

    func ensure(_ migrate: @escaping @Sendable () async throws -> Void) async throws {
        let task = state.withLockedValue { state in
            if let task = state { return task }
            let task = Task { try await migrate() }
            state = task
            return task
        }
        do {
            try await task.value
        } catch {
            state.withLockedValue { if $0 == task { $0 = nil } }
            throw error
        }
    }
}

/// The store failed: what happened, in words safe to log.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
