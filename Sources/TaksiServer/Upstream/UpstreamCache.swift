public import Logging
import NIOConcurrencyHelpers
import NIOCore
public import TaksiSchema
public import Tracing

/// A parsed upstream response and what it weighs.
public struct UpstreamValue: Sendable, Equatable {
    public var value: JSONValue
    /// The size of the body it was parsed from, charged against the cache's byte limit.
    public var bytes: Int
    /// The status, when it is one the source answers (``HTTPSource/StatusAnswer``), not a 2xx;
    /// `value` is then its body when that is JSON, else null.
    public var answered: Int?
    /// How long it stays fresh, when not the source's `ttl` (an answer's own).
    public var ttl: Duration?
    /// The next page's path and query from the upstream's base, as its `Link` header named it with
    /// `rel="next"`: read only for a source that pages that way (``HTTPSource/Paging/Next/link``).
    public var nextLink: String?
    /// When the upstream answered it, in seconds since 1970, when a data request's call fetched
    /// it: what its page tokens' time is counted from, so every response rendered from this value
    /// holds the same tokens (and bytes, and ETag).
    public var fetchedAt: Int?

    public init(
        value: JSONValue, bytes: Int, answered: Int? = nil, ttl: Duration? = nil, nextLink: String? = nil, fetchedAt: Int? = nil
    ) {
        self.value = value
        self.bytes = bytes
        self.answered = answered
        self.ttl = ttl
        self.nextLink = nextLink
        self.fetchedAt = fetchedAt
    }
}

/// Caches upstream responses by final URL and forwarded headers.
///
/// - One call per key at a time (single flight): concurrent requests for the same key share it.
///   The request that asked first makes it, in its own task.
/// - Fresh for `ttl`; then, for `staleWhileRevalidate`, the stale value is served at once while
///   one refresh runs, in ``refreshes`` (a service of the application's group); when a call
///   fails, a value up to `staleIfError` past its expiry stands in.
/// - Bounded in entries and bytes; the least recently used entries go first.
/// - Each stored value has a generation, unique in this cache, so a response rendered from it
///   can be kept until the value is replaced (see ``ResponseMemo``); `onChange` tells of replacements.
///
/// A lock, not an actor: a data request whose sources are all fresh asks ``freshValue(for:ttl:)``
/// on the event loop and is answered there, without a hop; each lookup is a few dictionary
/// operations under the lock, and nothing is awaited while it is held.
public final class UpstreamCache: Sendable {
    /// How long a key's value is used.
    public struct Policy: Sendable {
        public var ttl: Duration
        public var staleWhileRevalidate: Duration
        public var staleIfError: Duration

        public init(ttl: Duration, staleWhileRevalidate: Duration, staleIfError: Duration) {
            self.ttl = ttl
            self.staleWhileRevalidate = staleWhileRevalidate
            self.staleIfError = staleIfError
        }
    }

    /// Where a lookup's value came from.
    public enum Lookup: Sendable, Equatable {
        /// Cached and fresh.
        case hit(UpstreamValue)
        /// Just fetched (this request's call, or one it joined).
        case fetched(UpstreamValue)
        /// Expired but within stale-while-revalidate; a refresh is running.
        case stale(UpstreamValue)
        /// The call failed; a stale value within stale-if-error stands in.
        case staleOnError(UpstreamValue, UpstreamFailure)
        /// The call failed and nothing may stand in.
        case failed(UpstreamFailure)

        /// What was found, if anything.
        public var found: UpstreamValue? {
            switch self {
            case .hit(let found), .fetched(let found), .stale(let found), .staleOnError(let found, _): found
            case .failed: nil
            }
        }

        /// The value to use, if any.
        public var value: JSONValue? { found?.value }
    }

    /// A fresh cached value and the generation that names it.
    public struct Fresh: Sendable {
        public var found: UpstreamValue
        public var generation: UInt64
        /// When the value stops being fresh, on the cache's clock (``now``).
        public var expires: ContinuousClock.Instant
        public var value: JSONValue { found.value }
    }

    public typealias Fetch = @Sendable (Call) async -> Result<UpstreamValue, UpstreamFailure>

    /// One call to an upstream, as the request that makes it and the requests that join it see it.
    public final class Call: Sendable {
        /// Whether it refreshes a stale value already served (stale-while-revalidate), rather than
        /// one a request waits for.
        public let isRefresh: Bool
        private let state = NIOLockedValueBox<(context: ServiceContext?, joiners: Int)>((nil, 0))

        init(isRefresh: Bool) { self.isRefresh = isRefresh }

        /// The context of the call's span, noted by the request that makes it, so a request that
        /// joins it can link to it (nil with tracing off).
        public var context: ServiceContext? {
            get { state.withLockedValue { $0.context } }
            set { state.withLockedValue { $0.context = newValue } }
        }

        /// The lookups that joined it so far, waiting for its answer instead of calling again.
        public var joiners: Int { state.withLockedValue { $0.joiners } }

        fileprivate func join() { state.withLockedValue { $0.joiners += 1 } }
    }

    /// A lookup, and the call it joined when another request had started it (single flight).
    public struct Joined: Sendable {
        public var lookup: Lookup
        /// The call this lookup waited for without making it; nil when it made its own or none.
        public var call: Call?
    }

    private struct Entry {
        var value: UpstreamValue
        var fetchedAt: ContinuousClock.Instant
        var generation: UInt64
    }

    private struct State {
        /// In the order they were last used, so the least recently used goes first at no search.
        var entries = RecencyDictionary<String, Entry>()
        var bytes = 0
        var generations: UInt64 = 0
        /// Calls in progress, foreground and refreshes alike, which a lookup of their key joins.
        var inFlight: [String: InFlight] = [:]
    }

    private struct InFlight {
        var call: Call
        var result: Flight<Result<UpstreamValue, UpstreamFailure>>
    }

    private let maxEntries: Int
    private let maxBytes: Int
    /// The cache's clock (tests move one by hand).
    let now: @Sendable () -> ContinuousClock.Instant
    private let state = NIOLockedValueBox(State())
    private let changeObserver = NIOLockedValueBox<ChangeObserver?>(nil)
    /// Where refreshes behind a stale answer run: a service of the application's group, so
    /// shutdown waits for them.
    public let refreshes: BackgroundWork

    /// The observer in a struct: a closure kept as the box's value itself is converted to the
    /// box's generic form and back around each `inout` access, and every read through
    /// `withLockedValue` stored it back wrapped in one more thunk, so the N-th eviction called
    /// through N of them (and the wrappers were never freed).
    private struct ChangeObserver {
        let changed: @Sendable (String) -> Void
    }

    /// Body bytes kept at most by default.
    public static let defaultMaxBytes = 64 << 20

    /// - Parameters:
    ///   - maxEntries: responses kept at most.
    ///   - maxBytes: total body bytes kept at most.
    ///   - now: the time on a monotonic clock; tests pass a clock they move by hand.
    ///   - logger: where a refresh started after shutdown is said not to run.
    public init(
        maxEntries: Int = 1_000, maxBytes: Int = defaultMaxBytes,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, logger: Logger = Logger(label: "taksi")
    ) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.now = now
        self.refreshes = BackgroundWork("upstream refreshes", logger: logger)
    }

    /// Called with a key whenever its stored value is replaced or evicted (outside the lock).
    public func onChange(_ observer: @escaping @Sendable (String) -> Void) {
        changeObserver.withLockedValue { $0 = ChangeObserver(changed: observer) }
    }

    /// The value for `key` if it is cached and younger than `ttl`, without waiting for anything.
    public func freshValue(for key: String, ttl: Duration) -> Fresh? {
        fresh(key, ttl: ttl) { Fresh(found: $0.value, generation: $0.generation, expires: $0.fetchedAt + ($0.value.ttl ?? ttl)) }
    }

    /// Whether `key` holds a fresh value of `generation`, which is marked used: what a response
    /// kept from that value checks before it is answered again (no copy of the value is made).
    func isFresh(_ key: String, ttl: Duration, generation: UInt64) -> Bool {
        fresh(key, ttl: ttl) { $0.generation == generation } ?? false
    }

    /// What `read` makes of `key`'s entry when it is younger than its value's `ttl` (else
    /// `ttl`); the entry is marked used either way.
    private func fresh<Result>(_ key: String, ttl: Duration, _ read: (Entry) -> Result) -> Result? {
        let time = now()
        return state.withLockedValue { state in
            state.entries.use(key) { entry in time - entry.fetchedAt < entry.value.ttl ?? ttl ? read(entry) : nil } ?? nil
        }
    }

    /// The value for `key`: cached, shared with a call in flight, or fetched now.
    public func value(for key: String, policy: Policy, fetch: @escaping Fetch) async -> Lookup {
        await lookUp(key, policy: policy, fetch: fetch).lookup
    }

    /// The value for `key`, and the call it joined if it waited for one another request started.
    public func lookUp(_ key: String, policy: Policy, fetch: @escaping Fetch) async -> Joined {
        enum Step {
            case answer(Lookup)
            case refresh(Lookup, InFlight)
            case make(InFlight)
            case join(InFlight)
        }
        let time = now()
        let step: Step = state.withLockedValue { state in
            if let entry = state.entries.use(key) {
                let age = time - entry.fetchedAt
                let ttl = entry.value.ttl ?? policy.ttl
                if age < ttl { return .answer(.hit(entry.value)) }
                if age < ttl + policy.staleWhileRevalidate {
                    guard state.inFlight[key] == nil else { return .answer(.stale(entry.value)) }
                    return .refresh(.stale(entry.value), Self.begin(key, refresh: true, in: &state))
                }
            }
            if let running = state.inFlight[key] {
                running.call.join()
                return .join(running)
            }
            return .make(Self.begin(key, refresh: false, in: &state))
        }
        let result: Result<UpstreamValue, UpstreamFailure>
        switch step {
        case .answer(let lookup):
            return Joined(lookup: lookup)
        case .refresh(let lookup, let call):
            if !refreshes.start("a refresh of a stale upstream value", { _ = await self.make(call, key, fetch) }) {
                // Past shutdown's drain: no refresh, and nothing left in flight for a lookup to join.
                state.withLockedValue { if $0.inFlight[key]?.result === call.result { $0.inFlight[key] = nil } }
                call.result.finish(.failure(.connection("not refreshed: the server is shutting down")))
            }
            return Joined(lookup: lookup)
        case .make(let call):
            result = await make(call, key, fetch)
        case .join(let call):
            result = await call.result.value
        }
        let lookup: Lookup
        switch result {
        case .success(let fetched):
            lookup = .fetched(fetched)
        case .failure(let failure):
            let time = now()
            let stale = state.withLockedValue { state in
                state.entries.peek(key).flatMap {
                    time - $0.fetchedAt < ($0.value.ttl ?? policy.ttl) + policy.staleIfError ? $0.value : nil
                }
            }
            lookup = stale.map { .staleOnError($0, failure) } ?? .failed(failure)
        }
        if case .join(let call) = step { return Joined(lookup: lookup, call: call.call) }
        return Joined(lookup: lookup)
    }

    /// The call in flight for `key`, if there is one.
    public func call(for key: String) -> Call? {
        state.withLockedValue { $0.inFlight[key]?.call }
    }

    /// The number of cached responses and their bytes.
    public var size: (entries: Int, bytes: Int) {
        state.withLockedValue { ($0.entries.count, $0.bytes) }
    }

    /// A call for `key` in flight from now, which lookups of the key join until it ends.
    private static func begin(_ key: String, refresh: Bool, in state: inout State) -> InFlight {
        let running = InFlight(call: Call(isRefresh: refresh), result: Flight())
        state.inFlight[key] = running
        return running
    }

    /// Makes `call`: fetches, stores what came, and hands the result to the lookups that joined.
    private func make(_ call: InFlight, _ key: String, _ fetch: Fetch) async -> Result<UpstreamValue, UpstreamFailure> {
        let result = await fetch(call.call)
        finish(key, result)
        call.result.finish(result)
        return result
    }

    private func finish(_ key: String, _ result: Result<UpstreamValue, UpstreamFailure>) {
        let time = now()
        let changed: [String] = state.withLockedValue { state in
            state.inFlight[key] = nil
            guard case .success(let fetched) = result else { return [] }
            var changed: [String] = []
            if let old = state.entries.removeValue(forKey: key) {
                state.bytes -= old.value.bytes
                changed.append(key)
            }
            guard fetched.bytes <= maxBytes else { return changed }
            state.generations += 1
            state.entries.updateValue(Entry(value: fetched, fetchedAt: time, generation: state.generations), forKey: key)
            state.bytes += fetched.bytes
            while state.entries.count > maxEntries || state.bytes > maxBytes, let oldest = state.entries.removeLeastRecent() {
                state.bytes -= oldest.value.value.bytes
                changed.append(oldest.key)
            }
            return changed
        }
        guard !changed.isEmpty, let observer = changeObserver.withLockedValue({ $0 }) else { return }
        for key in changed { observer.changed(key) }
    }
}
