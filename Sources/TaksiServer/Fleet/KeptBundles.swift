import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import TaksiScreens

/// Published bundles this replica no longer serves, loaded on demand so that it answers a data
/// request or a submit for any kept revision: a skeleton an app fetched from another replica (a
/// rollout under way) or before a publish (cached for minutes) gets its data from the bundle that
/// made it, not `412`. Which bundle holds a revision is recorded in the store at publish.
///
/// Bounded: at most ``capacity`` sets, and at most ``maximumBytes`` of them (as the heap grew to
/// load and prepare each), are held, the least recently used dropped first; a revision that no
/// published bundle holds (or that cannot be loaded here) is still `412`. What clients send
/// costs the store little: a revision that is not a digest is `412` without a query, one the
/// store did not know is remembered for ``unknownFor``, and a bundle is loaded at most once per
/// ``reloadWindow`` (apps asking for more old revisions in turn than are held get `412` for the
/// one dropped, instead of turning each request into a bundle load).
public final class KeptBundles: Sendable {
    /// Sets held at most, beside the ones the screen store keeps.
    public static let capacity = 4
    /// Bytes of sets held at most; the one just loaded is held whatever its size.
    public static let maximumBytes = 256 << 20
    /// How long a revision the store did not know is answered `412` without asking it again.
    static let unknownFor: Duration = .seconds(60)
    /// A bundle dropped is not loaded again within this long of its last load.
    static let reloadWindow: Duration = .seconds(60)
    /// Revisions remembered as unknown, and bundles' last loads, at most.
    static let remembered = 10_000

    let store: any ReleaseStore
    let options: ServedScreenSet.Options
    let upstreams: Set<String>
    let logger: Logger
    let metrics: any MetricsFactory
    private let held = NIOLockedValueBox<[(name: String, set: ServedScreenSet, bytes: Int)]>([])
    /// Loads under way, by revision: the request that asked first loads, in its own task, and
    /// requests for the same revision meanwhile wait for its result.
    private let loading = NIOLockedValueBox<[String: Flight<Bool>]>([:])
    /// Revisions the store did not know, and bundles' last loads, by when.
    private let unknown = NIOLockedValueBox(RecencyDictionary<String, ContinuousClock.Instant>())
    private let loads = NIOLockedValueBox(RecencyDictionary<String, ContinuousClock.Instant>())

    init(store: any ReleaseStore, screens: ScreenStore, upstreams: Set<String>, logger: Logger) {
        self.store = store
        self.options = screens.options
        self.upstreams = upstreams
        self.logger = logger
        self.metrics = screens.metrics
    }

    /// The sets held, most recently used first.
    var sets: [ServedScreenSet] { held.withLockedValue { $0.map(\.set) } }

    /// Makes a set that holds `revision` available to ``sets``: true when one is (already held, or
    /// loaded now from the bundle the store names).
    func load(holding revision: String) async -> Bool {
        if use({ $0.revisions.contains { $0.digest == revision } }) { return true }
        guard SkeletonRevision.isDigest(revision) else {
            count("malformed")
            return false
        }
        let now = ContinuousClock.now
        if let since = unknown.withLockedValue({ $0.peek(revision) }), now - since < Self.unknownFor {
            count("unknown_recent")
            return false
        }
        let (flight, loads) = loading.withLockedValue { loading in
            if let flight = loading[revision] { return (flight, false) }
            let flight = Flight<Bool>()
            loading[revision] = flight
            return (flight, true)
        }
        guard loads else { return await flight.value }
        let found = await fetch(holding: revision)
        loading.withLockedValue { $0[revision] = nil }
        flight.finish(found)
        return found
    }

    private func fetch(holding revision: String) async -> Bool {
        do {
            guard let name = try await store.bundle(holdingRevision: revision) else {
                count("unknown")
                remember(revision, in: unknown)
                return false
            }
            if use({ _ in false }, named: name) { return false }
            if let last = loads.withLockedValue({ $0.peek(name) }), ContinuousClock.now - last < Self.reloadWindow {
                count("reload_deferred")
                return false
            }
            guard let (name, loaded) = try await PublishedScreens.load(named: name, from: store, upstreams: upstreams) else { return false }
            // Read (loaded or refused): not again within the window. A store that failed is asked again.
            remember(name, in: loads)
            guard case .success(let (screenSet, loaded)) = loaded else {
                count("refused")
                logger.warning(
                    "a kept bundle does not load here; its revision is answered 412", metadata: ["bundle": .string(String(name.prefix(12)))]
                )
                return false
            }
            let (served, prepared) = HeapUsage.measuring { ServedScreenSet(screenSet, options: options, metrics: metrics) }
            let bytes = (loaded ?? 0) + (prepared ?? 0)
            var dropped = held.withLockedValue { held in
                var dropped = held.filter { $0.name == name }.map(\.set)
                held.removeAll { $0.name == name }
                held.insert((name, served, bytes), at: 0)
                while held.count > Self.capacity || (held.count > 1 && held.reduce(0, { $0 + $1.bytes }) > Self.maximumBytes) {
                    dropped.append(held.removeLast().set)
                }
                return dropped
            }
            HeapUsage.discard(&dropped)
            count("loaded")
            logger.info(
                "a kept bundle loaded to answer an earlier revision",
                metadata: ["bundle": .string(String(name.prefix(12))), "revision": .string(revision)])
            return served.revisions.contains { $0.digest == revision }
        } catch {
            count("store_unavailable")
            logger.warning(
                "the store did not say which bundle holds a revision; answered 412",
                metadata: ["revision": .string(revision), "cause": .string(String(describing: error))])
            return false
        }
    }

    /// Moves the first held set that `matches` (or is named `name`) to the front; whether there was one.
    private func use(_ matches: (ServedScreenSet) -> Bool, named name: String? = nil) -> Bool {
        held.withLockedValue { held in
            guard let index = held.firstIndex(where: { $0.name == name || matches($0.set) }) else { return false }
            let found = held.remove(at: index)
            held.insert(found, at: 0)
            return true
        }
    }

    /// Notes `key` as of now in `table`, which keeps the most recent ``remembered``.
    private func remember(_ key: String, in table: NIOLockedValueBox<RecencyDictionary<String, ContinuousClock.Instant>>) {
        table.withLockedValue { table in
            _ = table.updateValue(.now, forKey: key)
            while table.count > Self.remembered { _ = table.removeLeastRecent() }
        }
    }

    private func count(_ outcome: String) {
        Counter(label: "taksi_kept_bundle_loads_total", dimensions: [("outcome", outcome)], factory: metrics).increment()
    }
}
