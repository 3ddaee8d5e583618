import Crypto
public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TaksiScreens

/// The fleet's store kept in this process's memory: what ``FleetStore`` promises, held for one
/// process only. For a server that runs alone, tests and embedding programs; a fleet of
/// replicas shares PostgreSQL's (`TaksiPostgres`), and both pass the same contract tests.
///
/// Bundles are named by their content (SHA-256), releases count up from 1, and every time is
/// read from `now`, so a test moves it. Nothing is written anywhere: a restart forgets it all.
///
/// Keyed submits' answers are bounded in bytes too (``maxSubmitBytes``): a server that runs
/// alone answers its keyed submits through this store (``FleetSubmits``), and one process's
/// memory is all it has. Answers past the window go first, then the oldest while over the bound,
/// at every claim and answer; a claim still running stays, and the answers behind it wait.
public final class MemoryFleetStore: FleetStore, Sendable {
    private let now: @Sendable () -> Date
    /// How long submits' answers are kept, for the housekeeping that forgets older ones.
    private let window: Duration
    /// Bytes of submits' answers and requests kept at most.
    let maxSubmitBytes: Int

    private struct Submit {
        var fingerprint: [UInt8]
        var claim: UUID
        var leaseUntil: Date?
        var createdAt: Date
        var answer: SubmitAnswer?
        /// Bytes counted against ``maxSubmitBytes``, once the answer is in.
        var bytes = 0
    }

    /// What a submit costs beyond the bytes of its strings: the dictionary's and the order's
    /// slots, the strings' and arrays' headers. Measured (RSS over 20,000 entries): about 290 bytes.
    static let submitOverhead = 320

    private struct StoredBundle {
        var content: [UInt8]
        var screens: Int
    }

    private struct Purge {
        var screens: [String]
        var recordedAt: Date
        var sentAt: Date?
    }

    private struct ExposureKey: Hashable {
        var experiment: String
        var user: String
    }

    private struct State {
        var submits: [String: Submit] = [:]
        /// Keys by their claims' times, oldest first (a key claimed again is found again, later).
        var submitOrder = CircularBuffer<(key: String, claim: UUID)>()
        var submitBytes = 0
        var bundles: [String: StoredBundle] = [:]
        /// By revision: the bundles whose screens have it.
        var revisions: [String: Set<String>] = [:]
        /// Oldest first; a release's number is its place, from 1.
        var releases: [Release] = []
        var replicas: [String: ReplicaReport] = [:]
        var purges: [String: Purge] = [:]
        /// When each user's window of each experiment began.
        var exposureWindows: [ExposureKey: Date] = [:]
        /// The exposure window last given, for the housekeeping.
        var exposureWindow: Duration?
        var listeners: [UUID: @Sendable () -> Void] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// - Parameters:
    ///   - window: how long submits' answers are kept (`idempotency_window`).
    ///   - maxSubmitBytes: bytes of submits' answers and requests kept at most (`idempotency_max_bytes`).
    ///   - now: the clock every time is read from.
    public init(
        window: Duration = .seconds(86_400), maxSubmitBytes: Int = 16 << 20, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.window = window
        self.maxSubmitBytes = maxSubmitBytes
        self.now = now
    }

    // MARK: Running

    /// Forgets answers past the window, ended exposure windows, replicas and purges a day old,
    /// once a minute, until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                self.prune()
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }

    /// What the housekeeping forgets, now; how many answers and claims it forgot.
    @discardableResult
    func prune() -> Int {
        let now = now()
        return state.withLockedValue { state in
            let before = state.submits.count
            state.submits = state.submits.filter { _, submit in
                !(submit.createdAt < now - window.timeInterval && (submit.answer != nil || submit.leaseUntil.map { $0 < now } == true))
            }
            state.submitBytes = state.submits.values.reduce(0) { $0 + $1.bytes }
            if let exposureWindow = state.exposureWindow {
                state.exposureWindows = state.exposureWindows.filter { $0.value >= now - exposureWindow.timeInterval }
            }
            state.replicas = state.replicas.filter { $0.value.seen >= now - 86_400 }
            state.purges = state.purges.filter { $0.value.recordedAt >= now - 86_400 }
            return before - state.submits.count
        }
    }

    // MARK: Submits

    public func claimSubmit(key: String, fingerprint: [UInt8], lease: Duration, window: Duration) async throws -> SubmitClaim {
        let now = now()
        return state.withLockedValue { state in
            pruneSubmits(&state, at: now, window: window)
            let claim = Submit(
                fingerprint: fingerprint, claim: UUID(), leaseUntil: now + lease.timeInterval, createdAt: now, answer: nil)
            guard let found = state.submits[key] else {
                Self.enter(claim, for: key, into: &state)
                return .claimed(token: claim.claim)
            }
            let pastWindow = found.createdAt < now - window.timeInterval
            let leaseRanOut = found.answer == nil && (found.leaseUntil.map { $0 < now } ?? false) && found.fingerprint == fingerprint
            if pastWindow || leaseRanOut {
                Self.enter(claim, for: key, into: &state)
                return .claimed(token: claim.claim)
            }
            guard found.fingerprint == fingerprint else { return .mismatch }
            guard let answer = found.answer else { return .running }
            return .answered(answer)
        }
    }

    public func finishSubmit(key: String, token: UUID, answer: SubmitAnswer?) async throws -> Bool {
        let now = now()
        return state.withLockedValue { state in
            guard let answer else {
                if let found = state.submits[key], found.claim == token, found.answer == nil { state.submits[key] = nil }
                return true
            }
            // The claim stays on the answered row: the same answer recorded again is found.
            guard var found = state.submits[key], found.claim == token else { return false }
            if found.answer == nil {
                found.bytes =
                    key.utf8.count + found.fingerprint.count + answer.body.count
                    + answer.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } + Self.submitOverhead
                state.submitBytes += found.bytes
            }
            found.answer = answer
            found.leaseUntil = nil
            state.submits[key] = found
            pruneSubmits(&state, at: now, window: window)
            return true
        }
    }

    /// Bytes of submits' answers kept now, for tests.
    package var submitBytes: Int { state.withLockedValue { $0.submitBytes } }

    /// A claim, in the place of any earlier one for its key (whose bytes are no longer counted).
    private static func enter(_ claim: Submit, for key: String, into state: inout State) {
        if let replaced = state.submits.updateValue(claim, forKey: key) { state.submitBytes -= replaced.bytes }
        state.submitOrder.append((key, claim.claim))
    }

    /// Forgets answers past `window`, then the oldest while over ``maxSubmitBytes``, oldest first;
    /// a claim still running stops it (it ends within its call's timeout, and its lease).
    private func pruneSubmits(_ state: inout State, at now: Date, window: Duration) {
        while let (key, claim) = state.submitOrder.first {
            guard let submit = state.submits[key], submit.claim == claim else {
                // Claimed again, forgotten or pruned by the housekeeping: nothing of it is here.
                state.submitOrder.removeFirst()
                continue
            }
            let expired = submit.createdAt < now - window.timeInterval
            guard submit.answer != nil, expired || state.submitBytes > maxSubmitBytes else { break }
            state.submitOrder.removeFirst()
            state.submits[key] = nil
            state.submitBytes -= submit.bytes
        }
    }

    // MARK: Published screens

    public func publish(
        _ bundle: ScreenBundle, screens: Int, revisions: [String], by: String
    ) async throws -> (release: Release, isNew: Bool) {
        let encoded = try bundle.encodedForStore()
        let name = Self.name(of: encoded)
        let now = now()
        let (release, isNew, listeners) = state.withLockedValue { state in
            if state.bundles[name] == nil { state.bundles[name] = StoredBundle(content: encoded, screens: screens) }
            for revision in revisions { state.revisions[revision, default: []].insert(name) }
            if let current = state.releases.last, current.bundle == name { return (current, false, [@Sendable () -> Void]()) }
            return (Self.release(name, kind: "publish", by: by, at: now, in: &state), true, Array(state.listeners.values))
        }
        for wake in listeners { wake() }
        return (release, isNew)
    }

    public func bundle(holdingRevision revision: String) async throws -> String? {
        state.withLockedValue { state in
            let holding = state.revisions[revision] ?? []
            return state.releases.last { holding.contains($0.bundle) }?.bundle
        }
    }

    public func currentRelease() async throws -> Release? {
        state.withLockedValue { $0.releases.last }
    }

    public func bundle(named name: String) async throws -> (name: String, bundle: ScreenBundle)? {
        let found = try state.withLockedValue { state -> (String, [UInt8])? in
            guard let id = try Self.bundleName(startingWith: name, in: state) else { return nil }
            return state.bundles[id].map { (id, $0.content) }
        }
        guard let (id, content) = found else { return nil }
        return (id, try ScreenBundle(decoding: content))
    }

    public func history(limit: Int) async throws -> [Release] {
        state.withLockedValue { Array($0.releases.suffix(max(limit, 0)).reversed()) }
    }

    public func rollback(to name: String?, by: String) async throws -> Release {
        let now = now()
        let (release, listeners) = try state.withLockedValue { state in
            guard let current = state.releases.last else { throw StoreError.nothingPublished }
            let target: String
            if let name {
                guard let id = try Self.bundleName(startingWith: name, in: state) else {
                    throw StoreError.noBundleNamed(name)
                }
                target = id
            } else {
                guard let earlier = state.releases.last(where: { $0.bundle != current.bundle }) else {
                    throw StoreError.nothingToRollBackTo
                }
                target = earlier.bundle
            }
            guard target != current.bundle else { throw StoreError.alreadyCurrent(current.bundle) }
            return (Self.release(target, kind: "rollback", by: by, at: now, in: &state), Array(state.listeners.values))
        }
        for wake in listeners { wake() }
        return release
    }

    public func listenForReleases(_ wake: @escaping @Sendable () -> Void) async {
        let id = UUID()
        state.withLockedValue { $0.listeners[id] = wake }
        wake()
        // Until cancelled: a sleep that long ends only so.
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
        _ = state.withLockedValue { $0.listeners.removeValue(forKey: id) }
    }

    /// The one bundle whose name starts with `prefix` (its hexadecimal digits, in lower case).
    private static func bundleName(startingWith prefix: String, in state: State) throws -> String? {
        let digits = ScreenBundle.namePrefix(prefix)
        let named = state.bundles.keys.filter { $0.hasPrefix(digits) }.sorted().prefix(2)
        guard named.count < 2 else { throw StoreError.ambiguousBundleName(prefix) }
        return named.first
    }

    /// A bundle's name: the SHA-256 of its encoded bytes, in hexadecimal.
    static func name(of encoded: [UInt8]) -> String {
        SHA256.hash(data: encoded).map { String(format: "%02x", $0) }.joined()
    }

    private static func release(_ bundle: String, kind: String, by: String, at now: Date, in state: inout State) -> Release {
        let stored = state.bundles[bundle]
        let release = Release(
            number: state.releases.count + 1, bundle: bundle, kind: kind, at: now, by: by, screens: stored?.screens ?? 0,
            bytes: stored?.content.count ?? 0)
        state.releases.append(release)
        return release
    }

    // MARK: Replicas

    public func report(_ report: ReplicaReport) async throws {
        var report = report
        report.seen = now()
        state.withLockedValue { [report] in $0.replicas[report.replica] = report }
    }

    public func replicas(seenWithin alive: Duration) async throws -> [ReplicaReport] {
        let since = now() - alive.timeInterval
        return state.withLockedValue { state in
            state.replicas.values.filter { $0.seen > since }.sorted { $0.replica < $1.replica }
        }
    }

    // MARK: CDN purges

    public func recordPurge(bundle: String, screens: [String]) async throws {
        let now = now()
        state.withLockedValue { state in
            guard var purge = state.purges[bundle] else {
                state.purges[bundle] = Purge(screens: Array(Set(screens)).sorted(), recordedAt: now)
                return
            }
            // A replica that adds a screen the others did not find makes the purge unsent again.
            if !Set(screens).isSubset(of: purge.screens) { purge.sentAt = nil }
            purge.screens = Array(Set(purge.screens + screens)).sorted()
            state.purges[bundle] = purge
        }
    }

    public func unsentPurges(recordedWithin window: Duration, before age: Duration) async throws -> [(bundle: String, screens: [String])] {
        let now = now()
        return state.withLockedValue { state in
            state.purges.filter { _, purge in
                purge.sentAt == nil && purge.recordedAt < now - age.timeInterval && purge.recordedAt > now - window.timeInterval
            }
            .sorted { ($0.value.recordedAt, $0.key) < ($1.value.recordedAt, $1.key) }
            .map { ($0.key, $0.value.screens) }
        }
    }

    public func purgeSent(bundle: String, screens: [String]) async throws {
        let now = now()
        state.withLockedValue { state in
            guard var purge = state.purges[bundle], purge.sentAt == nil, Set(purge.screens).isSubset(of: screens) else { return }
            purge.sentAt = now
            state.purges[bundle] = purge
        }
    }

    // MARK: Exposures

    public func recordExposures(_ records: [ExposureRecorder.Record], window: Duration) async throws -> [ExposureRecorder.Record] {
        let now = now()
        return state.withLockedValue { state in
            state.exposureWindow = window
            var seen: Set<ExposureKey> = []
            var kept: [ExposureRecorder.Record] = []
            for record in records {
                let key = ExposureKey(experiment: record.experiment, user: record.user)
                // The first of the batch's records of a user and experiment decides for the pair.
                guard seen.insert(key).inserted else { continue }
                if let began = state.exposureWindows[key], began >= now - window.timeInterval { continue }
                state.exposureWindows[key] = now
                kept.append(record)
            }
            return kept
        }
    }
}
