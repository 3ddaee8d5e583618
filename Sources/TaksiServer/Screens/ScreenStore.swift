public import CoreMetrics
public import Foundation
import NIOConcurrencyHelpers
public import TaksiScreens

/// Holds the screen set being served. Requests read the current snapshot; a reload replaces it
/// whole, so a request sees either the old set or the new one, never a mix. A reload that fails
/// leaves the snapshot alone and records its errors for `/readyz`.
///
/// The sets served before are kept for as long as a skeleton from them may still be cached (the
/// skeletons' `max-age` plus `stale-while-revalidate`), so the data and actions of a skeleton an
/// app holds are answered from the set that made it (``earlierSets``), bounded in number and bytes.
public final class ScreenStore: Sendable {
    /// How many earlier sets are kept, and for how long.
    public struct Retention: Sendable, Equatable {
        /// How long a set is kept after it stops being current: as long as its skeletons may be cached.
        public var duration: Duration
        /// Sets kept at most; the oldest go first.
        public var maxSets: Int
        /// Bytes of kept sets at most, as the heap grew to load and prepare each (where the C
        /// library says; else an estimate of its precomputed responses); the oldest go first.
        public var maxBytes: Int

        /// Bytes of kept sets at most unless told otherwise (what `deploy kubernetes` leaves them).
        public static let defaultMaxBytes = 256 << 20

        public init(for duration: Duration, maxSets: Int = 16, maxBytes: Int = defaultMaxBytes) {
            self.duration = duration
            self.maxSets = maxSets
            self.maxBytes = maxBytes
        }

        /// As long as a skeleton served with `options` may be cached, fresh or stale.
        public init(for options: ServedScreenSet.Options) {
            self.init(for: .seconds(options.skeletonMaxAge + options.skeletonStaleWhileRevalidate))
        }
    }

    /// What `/readyz` reports about the loaded set and the last reload.
    public struct Status: Sendable {
        /// The served set's version (a digest of its files).
        public var version: String
        /// When the served set was loaded.
        public var loadedAt: Date
        /// When the directory was last checked after a change, successfully or not.
        public var lastReloadAt: Date?
        /// The errors of the last reload attempt, when it failed; empty when the served set is current.
        public var pendingErrors: [Diagnostic]
    }

    private struct State {
        var screens: ServedScreenSet
        /// What the served set costs in memory (``cost(of:loaded:prepared:)``).
        var bytes: Int
        var status: Status
        /// Sets served before, newest first, with what each costs and when it stopped being served.
        var earlier: [(screens: ServedScreenSet, bytes: Int, replacedAt: ContinuousClock.Instant)] = []
    }

    // A lock, not an actor: replacing a set is synchronous, and short.
    private let state: NIOLockedValueBox<State>
    /// The served set, as requests read it: without a lock once a thread has read it (``ReadMostly``).
    private let served: ReadMostly<ServedScreenSet>
    /// How every set this store serves is prepared; kept so a reload prepares the same way.
    let options: ServedScreenSet.Options
    let metrics: any MetricsFactory
    /// How earlier sets are kept.
    public let retention: Retention
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Prepares `screenSet` for serving and holds it.
    /// - Parameters:
    ///   - options: caching headers of precomputed responses.
    ///   - metrics: where the sets' counters are created.
    ///   - retention: how long and how many earlier sets are kept; by default as long as `options`
    ///     lets a skeleton be cached.
    ///   - now: the time on a monotonic clock; tests pass a clock they move by hand.
    ///   - loadedBytes: how much the heap grew while `screenSet` was loaded, when measured
    ///     (``HeapUsage/measuring(_:)``): with what preparing it adds, the set's cost in memory.
    public init(
        _ screenSet: ScreenSet, options: ServedScreenSet.Options = .init(), retention: Retention? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, loadedBytes: Int? = nil
    ) {
        self.options = options
        self.metrics = metrics
        self.retention = retention ?? Retention(for: options)
        self.now = now
        let (screens, prepared) = HeapUsage.measuring { ServedScreenSet(screenSet, options: options, metrics: metrics) }
        Self.recordSize(screenSet, metrics)
        let status = Status(version: screens.screenSet.version, loadedAt: Date(), lastReloadAt: nil, pendingErrors: [])
        let bytes = Self.cost(of: screens, loaded: loadedBytes, prepared: prepared)
        self.state = NIOLockedValueBox(State(screens: screens, bytes: bytes, status: status))
        self.served = ReadMostly(screens)
    }

    /// What a set costs in memory: how much the heap grew while it was loaded and prepared, when
    /// both were measured (its compiled screens, sources and responses: 5 to 6 times the estimate
    /// of its responses alone, measured on a generated set of 300 screens); else that estimate.
    private static func cost(of screens: ServedScreenSet, loaded: Int?, prepared: Int?) -> Int {
        guard let loaded, let prepared else { return screens.approximateBytes }
        return max(loaded + prepared, screens.approximateBytes)
    }

    /// The screen set to serve this request from.
    public var snapshot: ServedScreenSet {
        served.value
    }

    /// The loaded set's version and the outcome of the last reload.
    public var status: Status {
        state.withLockedValue { $0.status }
    }

    /// Prepares `screenSet`, then replaces the served set with it atomically and clears pending errors.
    /// The one it replaces is kept (see ``earlierSets``) while a skeleton of it could need it.
    /// - Parameter loadedBytes: how much the heap grew while `screenSet` was loaded, when measured.
    public func replace(with screenSet: ScreenSet, loadedBytes: Int? = nil) {
        let (screens, prepared) = HeapUsage.measuring { ServedScreenSet(screenSet, options: options, metrics: metrics) }
        let bytes = Self.cost(of: screens, loaded: loadedBytes, prepared: prepared)
        Self.recordSize(screenSet, metrics)
        let date = Date()
        let time = now()
        var (status, kept, replaced, dropped) = state.withLockedValue { state in
            let replaced = state.screens
            state.earlier.insert((state.screens, state.bytes, time), at: 0)
            state.screens = screens
            served.store(screens)
            state.bytes = bytes
            var dropped = Self.dropUnneeded(&state)
            state.status = Status(version: screens.screenSet.version, loadedAt: date, lastReloadAt: date, pendingErrors: [])
            let kept = prune(&state, at: time, dropping: &dropped)
            return (state.status, kept, replaced, dropped)
        }
        recordKept(kept)
        notify(status)
        for observer in replaceObservers.withLockedValue({ $0 }) { observer(replaced, screens) }
        HeapUsage.discard(&dropped)
    }

    /// The sets served before the current one whose skeletons may still be cached somewhere,
    /// newest first: what the data and actions of such a skeleton are answered from.
    public var earlierSets: [ServedScreenSet] {
        let time = now()
        var dropped: [ServedScreenSet] = []
        let (sets, kept) = state.withLockedValue { state in
            let kept = prune(&state, at: time, dropping: &dropped)
            return (state.earlier.map(\.screens), kept)
        }
        if !dropped.isEmpty {
            recordKept(kept)
            HeapUsage.discard(&dropped)
        }
        return sets
    }

    /// Drops the earlier sets past their time, then the oldest beyond the count and byte bounds,
    /// adding them to `dropped` (freed by ``HeapUsage/discard(_:)``, not under the lock).
    /// - Returns: the number and bytes kept.
    private func prune(
        _ state: inout State, at time: ContinuousClock.Instant, dropping dropped: inout [ServedScreenSet]
    ) -> (sets: Int, bytes: Int) {
        // Newest first: the first past its time, the count or the bytes ends what is kept, so
        // what goes is the oldest ones, a suffix.
        var bytes = 0
        var cut = 0
        while cut < state.earlier.count, cut < retention.maxSets {
            let earlier = state.earlier[cut]
            guard time - earlier.replacedAt <= retention.duration, bytes + earlier.bytes <= retention.maxBytes else { break }
            bytes += earlier.bytes
            cut += 1
        }
        if cut < state.earlier.count {
            dropped += state.earlier[cut...].map(\.screens)
            state.earlier.removeSubrange(cut...)
        }
        return (cut, bytes)
    }

    /// Drops the earlier sets no skeleton could be answered from: a data request or submit is
    /// answered from the newest set that has a variant of its screen with the revision it names,
    /// so a set whose every revision a newer one has (after a copy edit, which changes no shape;
    /// after an edit reverted) would only cost memory.
    /// - Returns: the sets dropped.
    private static func dropUnneeded(_ state: inout State) -> [ServedScreenSet] {
        var covered = state.screens.revisions
        var dropped: [ServedScreenSet] = []
        state.earlier.removeAll { earlier in
            if earlier.screens.revisions.isSubset(of: covered) {
                dropped.append(earlier.screens)
                return true
            }
            covered.formUnion(earlier.screens.revisions)
            return false
        }
        return dropped
    }

    /// `taksi_screen_sets_kept` and `taksi_screen_sets_kept_bytes`: the earlier sets kept.
    private func recordKept(_ kept: (sets: Int, bytes: Int)) {
        Gauge(label: "taksi_screen_sets_kept", factory: metrics).record(kept.sets)
        Gauge(label: "taksi_screen_sets_kept_bytes", factory: metrics).record(kept.bytes)
    }

    /// Calls `observer` with the new status after every reload, successful or not (the preview's
    /// event stream listens).
    public func onChange(_ observer: @escaping @Sendable (Status) -> Void) {
        observers.withLockedValue { $0.append(observer) }
    }

    private let observers = NIOLockedValueBox<[@Sendable (Status) -> Void]>([])

    /// Calls `observer` with the set replaced and the one now served, after each replace.
    public func onReplace(_ observer: @escaping @Sendable (ServedScreenSet, ServedScreenSet) -> Void) {
        replaceObservers.withLockedValue { $0.append(observer) }
    }

    private let replaceObservers = NIOLockedValueBox<[@Sendable (ServedScreenSet, ServedScreenSet) -> Void]>([])

    private func notify(_ status: Status) {
        for observer in observers.withLockedValue({ $0 }) { observer(status) }
    }

    /// `taksi_screens_loaded` and `taksi_screen_variants_loaded`: the size of the served set.
    private static func recordSize(_ screenSet: ScreenSet, _ metrics: any MetricsFactory) {
        Gauge(label: "taksi_screens_loaded", factory: metrics).record(screenSet.screens.count)
        Gauge(label: "taksi_screen_variants_loaded", factory: metrics).record(screenSet.screens.values.reduce(0) { $0 + $1.all.count })
    }

    /// Records a failed reload: the served set stays; its errors are reported until a reload succeeds.
    public func recordFailedReload(_ diagnostics: [Diagnostic]) {
        let now = Date()
        let status = state.withLockedValue {
            $0.status.lastReloadAt = now
            $0.status.pendingErrors = diagnostics.filter { $0.severity == .error }
            return $0.status
        }
        notify(status)
    }
}
