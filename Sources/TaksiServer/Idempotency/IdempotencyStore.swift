import NIOConcurrencyHelpers
import NIOCore
public import NIOHTTP1

/// Answers of action submits kept by their `Idempotency-Key`, so a retried submit (a phone on a
/// bad network that never saw the first answer) gets the first answer again, without a second
/// upstream call. A retry that arrives while the first is still running waits for it.
///
/// Bounded: an answer is kept for ``Limits/window``, and the answers (with the requests
/// they answered, which a retry must match) take at most ``Limits/maxBytes``; the oldest go first.
/// An answer of 500 or more (the upstream failed or did not answer in time) is not kept once it is
/// given: whether the upstream acted is not known, so a retry runs again (the key travels to the
/// upstream, which can tell a retry); replaying a timeout for a day would make retrying useless.
/// Kept per process: with the fleet's store configured, ``FleetSubmits`` answers keyed submits
/// for every replica instead.
public final class IdempotencyStore: Sendable {
    public struct Limits: Sendable {
        /// How long an answer is replayed for.
        public var window: Duration
        /// Bytes of answers and requests kept at most; 0 keeps none (every submit runs).
        public var maxBytes: Int

        public init(window: Duration = .seconds(86_400), maxBytes: Int = 16 << 20) {
            self.window = window
            self.maxBytes = maxBytes
        }
    }

    /// A kept answer.
    public struct Answer: Sendable {
        public var status: HTTPResponseStatus
        public var headers: [(String, String)]
        public var body: [UInt8]

        public init(status: HTTPResponseStatus, headers: [(String, String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// What to do with a keyed submit.
    package enum Claim: Sendable {
        /// The first with this key: run it (the task is already running, and kept).
        case run(Task<Answer, Never>)
        /// Seen before with the same request: its answer, now or when it is done.
        case replay(Task<Answer, Never>)
        /// Seen before with another request (another body, another identity): refused.
        case mismatch
    }

    private struct Entry {
        var request: String
        /// The submit while it runs, then its answer alone: a finished task kept as well cost
        /// about 1.3 KB more per entry than the bytes counted (115 MB held for a 16 MiB limit).
        var answer: Outcome
        var started: ContinuousClock.Instant
        /// Bytes counted against the limit, once the answer is in.
        var bytes: Int = 0
    }

    private enum Outcome {
        case running(Task<Answer, Never>)
        case done(Answer)
    }

    /// What an entry costs beyond the bytes of its strings: the dictionary's and the order's slots,
    /// the strings' and arrays' headers. Measured (RSS over 20,000 entries): about 290 bytes.
    static let entryOverhead = 320

    private struct State {
        var entries: [String: Entry] = [:]
        /// Keys oldest first: the window is the same for all, so this is also expiry order.
        var order = CircularBuffer<String>()
        var bytes = 0
    }

    let limits: Limits
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = NIOLockedValueBox(State())

    /// - Parameter now: the time on a monotonic clock; tests pass a clock they move by hand.
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.limits = limits
        self.now = now
    }

    var isEnabled: Bool { limits.maxBytes > 0 }

    /// Starts `work` for `key` unless a submit with that key is kept: then its answer, when
    /// `request` (what the submit sent, in full) is the same, or a mismatch.
    package func claim(key: String, request: String, work: @escaping @Sendable () async -> Answer) -> Claim {
        let time = now()
        return state.withLockedValue { state in
            prune(&state, at: time)
            if let entry = state.entries[key] {
                guard entry.request == request else { return .mismatch }
                switch entry.answer {
                case .running(let task): return .replay(task)
                case .done(let answer): return .replay(Task { answer })
                }
            }
            let task = Task { [self] in
                let answer = await work()
                finish(key: key, answer: answer)
                return answer
            }
            state.entries[key] = Entry(request: request, answer: .running(task), started: time)
            state.order.append(key)
            return .run(task)
        }
    }

    /// Waits for every submit still running (shutdown: a submit whose client went away still
    /// finishes, and its answer is kept for the retry).
    public func settle() async {
        while let task = state.withLockedValue({ state in
            state.entries.values.lazy.compactMap { entry -> Task<Answer, Never>? in
                if case .running(let task) = entry.answer { return task }
                return nil
            }.first
        }) {
            _ = await task.value
        }
    }

    /// Submits still running, for tests.
    package var runningCount: Int {
        state.withLockedValue { state in
            state.entries.values.filter { if case .running = $0.answer { true } else { false } }.count
        }
    }

    /// Number of answers kept or running, for tests.
    package var count: Int { state.withLockedValue { $0.entries.count } }

    private func finish(key: String, answer: Answer) {
        let time = now()
        state.withLockedValue { state in
            guard var entry = state.entries[key] else { return }
            guard answer.status.code < 500 else {
                state.entries[key] = nil
                if let index = state.order.lastIndex(of: key) { state.order.remove(at: index) }
                return
            }
            entry.answer = .done(answer)
            entry.bytes =
                key.utf8.count + entry.request.utf8.count + answer.body.count
                + answer.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } + Self.entryOverhead
            state.entries[key] = entry
            state.bytes += entry.bytes
            prune(&state, at: time)
        }
    }

    /// Drops expired answers, then the oldest while over the byte limit. A submit still running
    /// stays (it ends within its call's timeout) and stops the pruning behind it.
    private func prune(_ state: inout State, at time: ContinuousClock.Instant) {
        while let oldest = state.order.first, let entry = state.entries[oldest] {
            let expired = time - entry.started > limits.window
            guard entry.bytes > 0, expired || state.bytes > limits.maxBytes else { break }
            state.order.removeFirst()
            state.entries[oldest] = nil
            state.bytes -= entry.bytes
        }
    }
}
