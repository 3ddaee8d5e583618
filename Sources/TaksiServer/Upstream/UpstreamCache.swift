public import NIOCore
public import TaksiSchema

/// A parsed upstream response and what it weighs.
public struct UpstreamValue: Sendable, Equatable {
    public var value: JSONValue
    /// The size of the body it was parsed from, charged against the cache's byte limit.
    public var bytes: Int

    public init(value: JSONValue, bytes: Int) {
        self.value = value
        self.bytes = bytes
    }
}

/// Caches upstream responses by final URL and forwarded headers.
///
/// - One call per key at a time (single flight): concurrent requests for the same key share it.
/// - Fresh for `ttl`; then, for `staleWhileRevalidate`, the stale value is served at once while
///   one refresh runs; when a call fails, a value up to `staleIfError` past its expiry stands in.
/// - Bounded in entries and bytes; the least recently used entries go first.
///
/// An actor: requests on every event loop share it, and each lookup is a few dictionary operations.
public actor UpstreamCache {
    /// How long a key's value is used.
    public struct Policy: Sendable {
        public var ttl: Double
        public var staleWhileRevalidate: Double
        public var staleIfError: Double

        public init(ttl: Double, staleWhileRevalidate: Double, staleIfError: Double) {
            self.ttl = ttl
            self.staleWhileRevalidate = staleWhileRevalidate
            self.staleIfError = staleIfError
        }
    }

    /// Where a lookup's value came from.
    public enum Lookup: Sendable, Equatable {
        /// Cached and fresh.
        case hit(JSONValue)
        /// Just fetched (this request's call, or one it joined).
        case fetched(JSONValue)
        /// Expired but within stale-while-revalidate; a refresh is running.
        case stale(JSONValue)
        /// The call failed; a stale value within stale-if-error stands in.
        case staleOnError(JSONValue, UpstreamFailure)
        /// The call failed and nothing may stand in.
        case failed(UpstreamFailure)

        /// The value to use, if any.
        public var value: JSONValue? {
            switch self {
            case .hit(let value), .fetched(let value), .stale(let value), .staleOnError(let value, _): value
            case .failed: nil
            }
        }
    }

    public typealias Fetch = @Sendable () async -> Result<UpstreamValue, UpstreamFailure>

    private struct Entry {
        var value: UpstreamValue
        var fetchedAt: Double
        var lastUsed: Double
    }

    private let maxEntries: Int
    private let maxBytes: Int
    private let now: @Sendable () -> Double
    private var entries: [String: Entry] = [:]
    private var bytes = 0
    /// Calls in progress, foreground and refreshes alike; tracked so none is fire-and-forget.
    private var inFlight: [String: Task<Result<UpstreamValue, UpstreamFailure>, Never>] = [:]

    /// - Parameters:
    ///   - maxEntries: responses kept at most.
    ///   - maxBytes: total body bytes kept at most.
    ///   - now: seconds on a monotonic clock; tests pass a clock they move by hand.
    public init(
        maxEntries: Int = 1_000, maxBytes: Int = 64 << 20,
        now: @escaping @Sendable () -> Double = { Double(NIODeadline.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.now = now
    }

    /// The value for `key`: cached, shared with a call in flight, or fetched now.
    public func value(for key: String, policy: Policy, fetch: @escaping Fetch) async -> Lookup {
        let time = now()
        if var entry = entries[key] {
            entry.lastUsed = time
            entries[key] = entry
            let age = time - entry.fetchedAt
            if age < policy.ttl { return .hit(entry.value.value) }
            if age < policy.ttl + policy.staleWhileRevalidate {
                if inFlight[key] == nil { _ = start(key, fetch) }
                return .stale(entry.value.value)
            }
        }
        let call = inFlight[key] ?? start(key, fetch)
        switch await call.value {
        case .success(let fetched):
            return .fetched(fetched.value)
        case .failure(let failure):
            if let entry = entries[key], now() - entry.fetchedAt < policy.ttl + policy.staleIfError {
                return .staleOnError(entry.value.value, failure)
            }
            return .failed(failure)
        }
    }

    /// Waits for every call in flight, refreshes included (tests, shutdown).
    public func settle() async {
        while let call = inFlight.values.first {
            _ = await call.value
        }
    }

    /// The number of cached responses and their bytes.
    public var size: (entries: Int, bytes: Int) { (entries.count, bytes) }

    private func start(_ key: String, _ fetch: @escaping Fetch) -> Task<Result<UpstreamValue, UpstreamFailure>, Never> {
        let call = Task {
            let result = await fetch()
            self.finish(key, result)
            return result
        }
        inFlight[key] = call
        return call
    }

    private func finish(_ key: String, _ result: Result<UpstreamValue, UpstreamFailure>) {
        inFlight[key] = nil
        guard case .success(let fetched) = result else { return }
        if let old = entries.removeValue(forKey: key) { bytes -= old.value.bytes }
        guard fetched.bytes <= maxBytes else { return }
        let time = now()
        entries[key] = Entry(value: fetched, fetchedAt: time, lastUsed: time)
        bytes += fetched.bytes
        while entries.count > maxEntries || bytes > maxBytes {
            guard let oldest = entries.min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { break }
            entries[oldest.key] = nil
            bytes -= oldest.value.value.bytes
        }
    }
}
