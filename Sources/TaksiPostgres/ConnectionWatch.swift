import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

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

    /// - Parameter probe: one connection attempt of its own: nil when it connects, else why not.
    init(logger: Logger, probe: @escaping @Sendable () async -> Problem?) {
        self.logger = logger
        self.probe = probe
    }

    /// The last connection attempt's problem; nil once one succeeds.
    var problem: Problem? { state.withLockedValue { $0.problem } }

    /// Runs `fail` when a definitive problem is found while it waits (at once when one is known).
    func watch(_ id: UUID, _ fail: @escaping @Sendable (Problem) -> Void) {
        let known = state.withLockedValue { state -> Problem? in
            if let problem = state.problem, problem.isDefinitive { return problem }
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
        let starts = state.withLockedValue { state -> Bool in
            guard !state.probing, state.lastProbe.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true else { return false }
            state.probing = true
            state.lastProbe = .now
            return true
        }
        guard starts else { return }
        // Unstructured on purpose: the pool's log call must not wait; the probe ends within the
        // connect timeout, and a replica whose store is away makes one a second at most.
        Task { self.found(await self.probe()) }
    }

    /// The pool says a connection was made.
    func connected() {
        let was = state.withLockedValue { state -> Problem? in
            defer {
                state.problem = nil
                state.said = nil
            }
            return state.problem
        }
        if was != nil { logger.notice("store: connected again") }
    }

    private func found(_ problem: Problem?) {
        let (waiting, say) = state.withLockedValue { state -> ([@Sendable (Problem) -> Void], Bool) in
            state.probing = false
            state.problem = problem
            guard let problem else { return ([], false) }
            let say = state.said != problem.text
            state.said = problem.text
            guard problem.isDefinitive else { return ([], say) }
            defer { state.waiting = [:] }
            return (Array(state.waiting.values), say)
        }
        guard let problem else { return }
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

/// The pool's background log handler, watching it for connections that fail or succeed (see
/// ``ConnectionWatch``): every message still goes to `inner` at its own level.
struct WatchingLogHandler: LogHandler {
    var inner: any LogHandler
    let watch: ConnectionWatch

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    /// Debug, so the pool's "Connection established" reaches the watch whatever `inner` keeps.
    var logLevel: Logger.Level {
        get { .debug }
        set { inner.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        switch event.message.description {
        case "Connection creation failed": watch.connectFailed()
        case "Connection established": watch.connected()
        default: break
        }
        if event.level >= inner.logLevel { inner.log(event: event) }
    }
}
