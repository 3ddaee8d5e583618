public import Logging
import NIOConcurrencyHelpers
public import ServiceLifecycle

/// Work that a request or a reload starts and that goes on after it: a refresh behind a stale
/// answer, a CDN purge, the writes of exposure records, a submit's answer recorded again, a token
/// fetch every waiting call shares. Each job runs as a child task of this service's ``run()`` in
/// the application's service group, never as a task of its own: the group's shutdown order is
/// its order, and shutdown waits for it.
///
/// At graceful shutdown the service drains: it runs every job started so far, and those they
/// start, and ends when none is left (within the group's grace: past it, the jobs still running
/// are cancelled). A job started after that is not run, and the log says so.
///
/// Jobs started while nothing runs them wait for a run: ``whileRunning(_:)`` runs them beside a
/// body (a program that serves without the service group, the application's test door), and
/// ``runUntilIdle()`` runs those started so far (tests). Runs may overlap (two doors of one
/// application, two applications sharing a cache): each takes jobs while it runs.
public final class BackgroundWork: BackgroundService, Sendable, CustomStringConvertible {
    public typealias Job = @Sendable () async -> Void

    /// What its jobs are, for the service group's log and this one's.
    public let description: String
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// Started, waiting for a run to take them, in the order started.
        var queue: [(what: String, job: Job)] = []
        /// Started and not finished: queued or running.
        var unfinished = 0
        /// The runs under way, by number.
        var runs: [Int: Run] = [:]
        var nextRun = 0
        /// Whether the service ran and drained at shutdown, and no other run is under way: what
        /// is started now is refused (until it runs again).
        var closed = false
        /// Tasks waiting until nothing is unfinished (``idle()``).
        var idleWaiting: [CheckedContinuation<Void, Never>] = []

        /// The tasks waiting for idleness, taken, when nothing is unfinished; else none.
        mutating func takeIdleWaiting() -> [CheckedContinuation<Void, Never>] {
            guard unfinished == 0 else { return [] }
            defer { idleWaiting = [] }
            return idleWaiting
        }

        /// Takes a waiting run to give it a job (or its end): the first, else nil.
        mutating func takeWaiting(where condition: (Run) -> Bool = { _ in true }) -> CheckedContinuation<Job?, Never>? {
            guard let (number, run) = runs.first(where: { $0.value.waiting != nil && condition($0.value) }) else { return nil }
            runs[number]?.waiting = nil
            return run.waiting
        }
    }

    /// One run: whether it ends once nothing is unfinished, and where it waits for a job.
    private struct Run {
        var endsWhenIdle: Bool
        var waiting: CheckedContinuation<Job?, Never>?
    }

    /// - Parameter description: what its jobs are ("upstream refreshes").
    public init(_ description: String, logger: Logger) {
        self.description = description
        self.logger = logger
    }

    /// Starts `job` in the background; `what` names it in the log if it never runs. False when the
    /// service has drained at shutdown, and `job` will not run.
    @discardableResult
    public func start(_ what: String, _ job: @escaping Job) -> Bool {
        let (accepted, waiting) = state.withLockedValue { state -> (Bool, CheckedContinuation<Job?, Never>?) in
            guard !state.closed else { return (false, nil) }
            state.unfinished += 1
            guard let waiting = state.takeWaiting() else {
                state.queue.append((what, job))
                return (true, nil)
            }
            return (true, waiting)
        }
        waiting?.resume(returning: job)
        if !accepted {
            logger.warning("\(what) was started after shutdown drained the \(description); it does not run")
        }
        return accepted
    }

    /// The number of jobs started and not finished.
    public var unfinished: Int { state.withLockedValue { $0.unfinished } }

    /// Returns once every job started so far, and every job they started, has finished, as the
    /// runs under way take them (tests); at once when none is unfinished.
    public func idle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLockedValue { state in
                guard state.unfinished > 0 else { return true }
                state.idleWaiting.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Runs the jobs until graceful shutdown, then drains them (see ``BackgroundWork``) and, unless
    /// another run is under way, refuses any started after.
    public func run() async throws {
        let number = begin(endingWhenIdle: false)
        await serve(number, endsAtShutdown: true)
        let (dropped, idle) = state.withLockedValue { state -> ([String], [CheckedContinuation<Void, Never>]) in
            guard state.runs.isEmpty else { return ([], []) }
            state.closed = true
            let dropped = state.queue.map(\.what)
            state.unfinished -= dropped.count
            state.queue = []
            return (dropped, state.takeIdleWaiting())
        }
        for waiting in idle { waiting.resume() }
        if !dropped.isEmpty {
            logger.warning(
                "shutdown's grace ended before the \(description) did: \(dropped.count) did not run",
                metadata: ["not_run": .array(dropped.map { .string($0) })])
        }
    }

    /// Runs the jobs started so far, and those they start, and returns when none is left (tests).
    /// The service can run again after.
    public func runUntilIdle() async {
        await serve(begin(endingWhenIdle: true), endsAtShutdown: false)
    }

    /// Runs the jobs while `body` runs, then those left and those they start, and returns `body`'s
    /// result once none is left (a program that serves with ``Application/start(on:)``, a test
    /// door). Unlike ``run()``, it refuses nothing after: the service can run again.
    public func whileRunning<Value>(_ body: () async throws -> Value) async rethrows -> Value {
        let number = begin(endingWhenIdle: false)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // Not ended by a graceful shutdown around it: by the body's end, which may come after
            // (a server draining its requests), with jobs of its own.
            group.addTask { await self.serve(number, endsAtShutdown: false) }
            defer { endWhenIdle(number) }
            return try await body()
        }
    }

    /// A run under way from now; its number.
    private func begin(endingWhenIdle: Bool) -> Int {
        state.withLockedValue { state in
            defer { state.nextRun += 1 }
            state.runs[state.nextRun] = Run(endsWhenIdle: endingWhenIdle)
            state.closed = false
            return state.nextRun
        }
    }

    /// Takes jobs and runs each as a child task until run `number` ends: when idle once it is told
    /// to end (by graceful shutdown, when `endsAtShutdown`), or when the task is cancelled.
    private func serve(_ number: Int, endsAtShutdown: Bool) async {
        await withDiscardingTaskGroup { group in
            func take() async {
                while let job = await next(for: number) {
                    group.addTask {
                        await job()
                        self.finished()
                    }
                }
            }
            if endsAtShutdown {
                await withGracefulShutdownHandler {
                    await take()
                } onGracefulShutdown: {
                    self.endWhenIdle(number)
                }
            } else {
                await take()
            }
        }
        state.withLockedValue { _ = $0.runs.removeValue(forKey: number) }
    }

    /// The next job for run `number`, waiting for one; nil when the run ends.
    private func next(for number: Int) async -> Job? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Job?, Never>) in
                let answer: Job?? = state.withLockedValue { state in
                    if Task.isCancelled || (state.runs[number]?.endsWhenIdle == true && state.unfinished == 0) { return .some(nil) }
                    if !state.queue.isEmpty { return .some(state.queue.removeFirst().job) }
                    state.runs[number]?.waiting = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLockedValue { state in
                defer { state.runs[number]?.waiting = nil }
                return state.runs[number]?.waiting
            }?.resume(returning: nil)
        }
    }

    private func finished() {
        let (ending, idle) = state.withLockedValue { state -> ([CheckedContinuation<Job?, Never>], [CheckedContinuation<Void, Never>]) in
            state.unfinished -= 1
            guard state.unfinished == 0 else { return ([], []) }
            var ending: [CheckedContinuation<Job?, Never>] = []
            while let waiting = state.takeWaiting(where: \.endsWhenIdle) { ending.append(waiting) }
            return (ending, state.takeIdleWaiting())
        }
        for run in ending { run.resume(returning: nil) }
        for waiting in idle { waiting.resume() }
    }

    private func endWhenIdle(_ number: Int) {
        state.withLockedValue { state -> CheckedContinuation<Job?, Never>? in
            state.runs[number]?.endsWhenIdle = true
            guard state.unfinished == 0, let waiting = state.runs[number]?.waiting else { return nil }
            state.runs[number]?.waiting = nil
            return waiting
        }?.resume(returning: nil)
    }
}

/// A service of what requests and reloads leave running, which can also run beside a body
/// instead of in the service group (``Application/withBackgroundServices(_:)``).
public protocol BackgroundService: Service {
    /// Runs its work while `body` runs, then what `body` left, and returns `body`'s result.
    func whileRunning<Value>(_ body: () async throws -> Value) async rethrows -> Value
}
