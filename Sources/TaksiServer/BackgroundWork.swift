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
/// Jobs started while no run is under way wait for the next one: a test runs them with
/// ``runUntilIdle()``, or through the application's test door, which runs the service beside
/// the test.
public final class BackgroundWork: Service, Sendable, CustomStringConvertible {
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
        /// The run waiting for the next job, when none is queued.
        var waiting: CheckedContinuation<Job?, Never>?
        /// Whether a run is under way (one at a time).
        var running = false
        /// Whether the run under way ends once nothing is unfinished.
        var endsWhenIdle = false
        /// Whether the service ran and drained at shutdown: what is started now is refused
        /// (until it runs again).
        var closed = false
        /// Tasks waiting until nothing is unfinished (``idle()``).
        var idleWaiting: [CheckedContinuation<Void, Never>] = []
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
            guard let waiting = state.waiting else {
                state.queue.append((what, job))
                return (true, nil)
            }
            state.waiting = nil
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
    /// run under way takes them (tests); at once when none is unfinished.
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

    /// Runs the jobs until graceful shutdown, then drains them (see ``BackgroundWork``) and refuses
    /// any started after.
    /// - Throws: ``BackgroundWorkError/alreadyRunning`` while another run is under way.
    public func run() async throws {
        try await serve(endingWhenIdle: false)
        let (dropped, idle) = state.withLockedValue { state -> ([String], [CheckedContinuation<Void, Never>]) in
            state.closed = true
            let dropped = state.queue.map(\.what)
            state.unfinished -= dropped.count
            state.queue = []
            guard state.unfinished == 0 else { return (dropped, []) }
            defer { state.idleWaiting = [] }
            return (dropped, state.idleWaiting)
        }
        for waiting in idle { waiting.resume() }
        if !dropped.isEmpty {
            logger.warning(
                "shutdown's grace ended before the \(description) did: \(dropped.count) did not run",
                metadata: ["not_run": .array(dropped.map { .string($0) })])
        }
    }

    /// Runs the jobs started so far, and those they start, and returns when none is left (tests,
    /// and a test door's end). The service can run again after.
    /// - Throws: ``BackgroundWorkError/alreadyRunning`` while another run is under way.
    public func runUntilIdle() async throws {
        try await serve(endingWhenIdle: true)
    }

    /// Takes jobs and runs each as a child task until the run ends: when idle after graceful
    /// shutdown (or at once, with `endingWhenIdle`), or when the task is cancelled.
    private func serve(endingWhenIdle: Bool) async throws {
        try state.withLockedValue { state in
            guard !state.running else { throw BackgroundWorkError.alreadyRunning(description) }
            state.running = true
            state.endsWhenIdle = endingWhenIdle
            state.closed = false
        }
        defer {
            state.withLockedValue { state in
                state.running = false
                state.endsWhenIdle = false
            }
        }
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                while let job = await next() {
                    group.addTask {
                        await job()
                        self.finished()
                    }
                }
            } onGracefulShutdown: {
                self.endWhenIdle()
            }
        }
    }

    /// The next job, waiting for one; nil when the run ends.
    private func next() async -> Job? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Job?, Never>) in
                let answer: Job?? = state.withLockedValue { state in
                    if Task.isCancelled || (state.endsWhenIdle && state.unfinished == 0) { return .some(nil) }
                    if !state.queue.isEmpty { return .some(state.queue.removeFirst().job) }
                    state.waiting = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLockedValue { state in
                defer { state.waiting = nil }
                return state.waiting
            }?.resume(returning: nil)
        }
    }

    private func finished() {
        let (run, idle) = state.withLockedValue { state -> (CheckedContinuation<Job?, Never>?, [CheckedContinuation<Void, Never>]) in
            state.unfinished -= 1
            guard state.unfinished == 0 else { return (nil, []) }
            defer { state.idleWaiting = [] }
            guard state.endsWhenIdle, let waiting = state.waiting else { return (nil, state.idleWaiting) }
            state.waiting = nil
            return (waiting, state.idleWaiting)
        }
        run?.resume(returning: nil)
        for waiting in idle { waiting.resume() }
    }

    private func endWhenIdle() {
        state.withLockedValue { state -> CheckedContinuation<Job?, Never>? in
            state.endsWhenIdle = true
            guard state.unfinished == 0, let waiting = state.waiting else { return nil }
            state.waiting = nil
            return waiting
        }?.resume(returning: nil)
    }
}

/// Why background work could not run.
public enum BackgroundWorkError: Error, CustomStringConvertible {
    /// A run of this work was already under way; the work runs in one place at a time.
    case alreadyRunning(String)

    public var description: String {
        switch self {
        case .alreadyRunning(let what): "the \(what) already run in another task; they run in one place at a time"
        }
    }
}
