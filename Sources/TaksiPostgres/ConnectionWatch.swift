import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import TaksiServer

/// Why the store's pool cannot connect, in the database's words, as soon as it fails: the pool
/// itself only retries (a wrong password looked like a store that does not answer, for the whole
/// statement timeout). Told by the pool's background log (``WatchingLogHandler``) that a
/// connection failed, it makes one connection of its own, whose error is typed (`password
/// authentication failed for user "taksi" (SQLSTATE 28P01)`), says it once per cause, and fails
/// at once the statements waiting for a connection when the database refused it for a reason
/// that waiting does not mend (authentication, no such database, TLS required or unsupported).
final class ConnectionWatch: Sendable {
    /// What the last connection attempt met.
    struct Problem: Sendable, Equatable {
        var text: String
        /// The database refused the connection for a reason waiting does not mend.
        var isDefinitive: Bool
    }

    private struct State {
        var problem: Problem?
        /// When the pool last failed to connect for `problem`.
        var problemSeen: ContinuousClock.Instant?
        var probing = false
        var lastProbe: ContinuousClock.Instant?
        /// Statements waiting for the pool, by id: told of a definitive problem.
        var waiting: [UUID: @Sendable (Problem) -> Void] = [:]
        /// The cause last logged, so each is said once.
        var said: String?
    }

    private let state = NIOLockedValueBox(State())
    private let probe: @Sendable () async -> Problem?
    private let logger: Logger
    private let work: BackgroundWork

    /// - Parameters:
    ///   - work: where probes run (the store's).
    ///   - probe: one connection attempt of its own: nil when it connects, else why not.
    init(logger: Logger, work: BackgroundWork, probe: @escaping @Sendable () async -> Problem?) {
        self.logger = logger
        self.work = work
        self.probe = probe
    }

    /// The last connection attempt's problem; nil once one succeeds.
    var problem: Problem? { state.withLockedValue { $0.problem } }

    /// A definitive problem seen this recently fails a statement at once; an older one does not,
    /// so the statement asks the pool, whose attempt finds out whether it still stands (a
    /// password fixed, a database created): failing every statement at once would leave the pool
    /// nothing to try, and the replica stuck.
    static let fresh: Duration = .seconds(2)

    /// Runs `fail` when a definitive problem is found while it waits (at once when one was seen
    /// within ``fresh``).
    func watch(_ id: UUID, _ fail: @escaping @Sendable (Problem) -> Void) {
        let now = ContinuousClock.now
        let known = state.withLockedValue { state -> Problem? in
            if let problem = state.problem, problem.isDefinitive, let seen = state.problemSeen, now - seen < Self.fresh { return problem }
            state.waiting[id] = fail
            return nil
        }
        if let known { fail(known) }
    }

    func unwatch(_ id: UUID) {
        _ = state.withLockedValue { $0.waiting.removeValue(forKey: id) }
    }

    /// The pool says a connection attempt failed: find out why (one probe at a time, at most one a second).
    func connectFailed() {
        let (starts, known, waiting) = state.withLockedValue {
            state -> (Bool, Problem?, [@Sendable (Problem) -> Void]) in
            guard !state.probing, state.lastProbe.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true else {
                // Probed a moment ago: a definitive cause found then is this failure's too.
                guard let problem = state.problem, problem.isDefinitive else { return (false, nil, []) }
                state.problemSeen = .now
                defer { state.waiting = [:] }
                return (false, problem, Array(state.waiting.values))
            }
            state.probing = true
            state.lastProbe = .now
            return (true, nil, [])
        }
        if let known { for fail in waiting { fail(known) } }
        guard starts else { return }
        // In the background: the pool's log call must not wait; the probe ends within the
        // connect timeout, and a replica whose store is away makes one a second at most.
        if !work.start("a probe of the store's connection", { self.found(await self.probe()) }) {
            state.withLockedValue { $0.probing = false }
        }
    }

    /// A statement was answered: the store is reachable (the pool says nothing of a connection
    /// made, so this is what clears a problem).
    func connected() {
        let was = state.withLockedValue { state -> Problem? in
            guard state.problem != nil else { return nil }
            defer {
                state.problem = nil
                state.problemSeen = nil
                state.said = nil
            }
            return state.problem
        }
        if was != nil { logger.notice("store: connected again") }
    }

    private func found(_ problem: Problem?) {
        guard let problem else {
            // The probe connected: as a statement answered does, it clears (and says so).
            state.withLockedValue { $0.probing = false }
            connected()
            return
        }
        let (waiting, say) = state.withLockedValue { state -> ([@Sendable (Problem) -> Void], Bool) in
            state.probing = false
            state.problem = problem
            state.problemSeen = .now
            let say = state.said != problem.text
            state.said = problem.text
            guard problem.isDefinitive else { return ([], say) }
            defer { state.waiting = [:] }
            return (Array(state.waiting.values), say)
        }
        if say {
            logger.error(
                "store: cannot connect: \(problem.text)",
                metadata: [
                    "fix": .string(
                        problem.isDefinitive
                            ? "check the store's URL (TAKSI_STORE): user, password, database, sslmode"
                            : "check that the database is up and reachable")
                ])
        }
        for fail in waiting { fail(problem) }
    }

    /// What a connection error says: the database's own words and SQLSTATE when it answered,
    /// else the connection's failure; and whether waiting could mend it.
    static func problem(of error: any Error) -> Problem {
        let text = PostgresFleetStore.describe(error)
        guard let error = error as? PSQLError else { return Problem(text: text, isDefinitive: false) }
        if [.sslUnsupported, .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError].contains(error.code) {
            return Problem(text: text, isDefinitive: true)
        }
        guard let state = error.serverInfo?[.sqlState] else { return Problem(text: text, isDefinitive: false) }
        // 53300 too many connections, 57P03 starting up or shutting down: they pass.
        return Problem(text: text, isDefinitive: !["53300", "57P03", "57P01"].contains(state))
    }
}

/// The pool's background log handler, watching it for connections that fail (see
/// ``ConnectionWatch``): every message still goes to `inner` at its own level.
struct WatchingLogHandler: LogHandler {
    var inner: any LogHandler
    let watch: ConnectionWatch

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    /// Info (where the pool says a connection failed), whatever `inner` keeps.
    var logLevel: Logger.Level {
        get { min(inner.logLevel, .info) }
        set { inner.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description == "Connection creation failed" { watch.connectFailed() }
        if event.level >= inner.logLevel { inner.log(event: event) }
    }
}
