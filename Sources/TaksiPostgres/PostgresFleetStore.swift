import Foundation
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
    let schema: SchemaGate
    /// Why connections fail, in the database's words (see ``ConnectionWatch``).
    let connections: ConnectionWatch
    /// Where statements run (a caller whose time is up is answered at once, while its statement
    /// ends as it ends), with the migrations and the connection probes: run by ``run()``, which
    /// drains them at graceful shutdown before the pool closes.
    let work: BackgroundWork
    /// The exposure window the recorder last gave (``recordExposures(_:window:)``): past it, a
    /// user's window row decides nothing, and the housekeeping deletes it.
    let exposureWindow = NIOLockedValueBox<Duration?>(nil)

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
        let work = BackgroundWork("store's statements", logger: logger)
        let connections = ConnectionWatch(logger: logger, work: work) { [probeConfiguration, background] in
            do {
                let probe = try await PostgresConnection.connect(configuration: probeConfiguration, id: 0, logger: background)
                try? await probe.close()
                return nil
            } catch {
                return ConnectionWatch.problem(of: error)
            }
        }
        self.work = work
        self.connections = connections
        var watched = background
        watched.handler = WatchingLogHandler(inner: background.handler, watch: connections)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: watched)
        self.logger = logger
        self.timeout = .milliseconds(Int64(settings.timeout * 1000))
        self.window = window
        self.schema = SchemaGate(work: work)
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

    /// Runs the pool, the statements (``work``) and the housekeeping until graceful shutdown;
    /// then drains the statements under way, and closes the pool.
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask { await cancelWhenGracefulShutdown { await self.housekeeping() } }
            defer { group.cancelAll() }
            try await work.run()
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
                    DELETE FROM taksi_exposure_windows WHERE last_at < now() - make_interval(secs => \(window.timeInterval))
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
            let seconds = self.window.timeInterval
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

    // MARK: Statements

    /// Runs `body` once the schema is current, within the timeout; errors become ``StoreError``s
    /// that say what failed without a statement's values.
    func statement<Result: Sendable>(
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
    /// cancellation): `body` runs in ``work``, not in the caller's task.
    func withDeadline<Result: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let outcome = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
        let abandoned = Wakeup()
        let finish = { @Sendable (result: Swift.Result<Result, any Error>) in
            outcome.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let seconds = limit.timeInterval
        let id = UUID()
        defer { connections.unwatch(id) }
        return try await withThrowingTaskGroup(of: Void.self) { timer in
            timer.addTask { [connections] in
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                let last = connections.problem.map { "; the last connection attempt: \($0.text)" } ?? ""
                finish(.failure(StoreError("no answer within store_timeout (\(seconds) s)\(last)")))
                abandoned.signal()
            }
            defer { timer.cancelAll() }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                    outcome.withLockedValue { $0 = continuation }
                    let started = work.start("a statement") { [connections] in
                        // Cancelled when the caller is answered without it (its time is up, the
                        // database refused the connection).
                        await withTaskGroup(of: Void.self) { running in
                            running.addTask {
                                do {
                                    let answer = try await body()
                                    connections.connected()
                                    finish(.success(answer))
                                } catch {
                                    finish(.failure(error))
                                }
                            }
                            running.addTask { await abandoned.wait() }
                            await running.next()
                            running.cancelAll()
                        }
                    }
                    guard started else {
                        finish(.failure(StoreError("the server is shutting down; the store takes no more statements")))
                        return
                    }
                    // A connection the database refuses for good fails the statement now, saying why.
                    connections.watch(id) { problem in
                        finish(.failure(StoreError("cannot connect: \(problem.text)")))
                        abandoned.signal()
                    }
                }
            } onCancel: {
                finish(.failure(CancellationError()))
                abandoned.signal()
            }
        }
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
}

/// Runs the migrations once per process, before the first statement; again after a failure
/// (the store was down at start). They run in the store's ``PostgresFleetStore/work``, so a
/// statement whose time is up does not cancel them for the statements after it.
final class SchemaGate: Sendable {
    private let work: BackgroundWork
    private let state = NIOLockedValueBox<Flight<Swift.Result<Void, any Error>>?>(nil)

    init(work: BackgroundWork) {
        self.work = work
    }

    func ensure(_ migrate: @escaping @Sendable () async throws -> Void) async throws {
        let (flight, starts) = state.withLockedValue { state in
            if let flight = state { return (flight, false) }
            let flight = Flight<Swift.Result<Void, any Error>>()
            state = flight
            return (flight, true)
        }
        if starts {
            let started = work.start("the store's migrations") {
                let result: Swift.Result<Void, any Error>
                do {
                    try await migrate()
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                flight.finish(result)
            }
            if !started { flight.finish(.failure(StoreError("the server is shutting down; the store's migrations did not run"))) }
        }
        let result = await flight.value
        if case .failure(let error) = result {
            state.withLockedValue { if $0 === flight { $0 = nil } }
            throw error
        }
    }
}
