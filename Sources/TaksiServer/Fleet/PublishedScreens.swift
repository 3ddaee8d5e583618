public import CoreMetrics
import Foundation
public import Logging
import NIOConcurrencyHelpers
public import ServiceLifecycle
public import TaksiScreens

/// Follows the fleet's current bundle (`taksi-server publish`) when the screens come from the
/// store (`screens_source` `store`): looks at the store when it tells of a release, and every
/// ``interval`` or a little sooner in case a notification was missed, loads a new current
/// bundle and swaps it in as a reload of the directory would, and records in the store what
/// this replica serves and that it is alive. A bundle that does not load here (a later format, a
/// check this version makes that the publisher's did not) is refused and recorded, once; the
/// replica keeps serving what it had. A store that cannot be reached changes nothing served.
///
/// A replica starts serving nothing (``ScreenSet/none``) and listens once the first look is done
/// (``State/firstLook(upTo:)``): with the current bundle loaded, as a rule; else it answers
/// `/healthz`, `/metrics` and `/readyz` (not ready, saying why) while this service waits for a
/// bundle it can load.
public struct PublishedScreens: Service, CustomStringConvertible {
    /// Its name alone, for the service group's log (see `HTTPService`).
    public var description: String { "PublishedScreens" }

    let store: any ReleaseStore & ReplicaRegistry
    let screens: ScreenStore
    let upstreams: Set<String>
    let interval: Duration
    let logger: Logger
    let metrics: any MetricsFactory
    let state: State

    /// What this replica serves and refused, shared by the copies of the service.
    public final class State: Sendable {
        struct Values {
            var report: ReplicaReport
            /// Whether the last look at the store failed (logged once per outage).
            var storeFailing = false
            /// Why nothing is served yet, while nothing is (logged when it changes); nil once a
            /// bundle is.
            var waiting: String?
        }

        let values: NIOLockedValueBox<Values>
        /// Signalled after each look at the store; the first is what the HTTP server waits for.
        let looked = Wakeup()

        /// - Parameters:
        ///   - replica: this replica's name in the store.
        ///   - serving: the bundle loaded at start.
        public init(replica: String, serving bundle: String?) {
            values = NIOLockedValueBox(
                Values(
                    report: ReplicaReport(
                        replica: replica, bundle: bundle, since: bundle.map { _ in Date() }, refusedBundle: nil, refusal: nil,
                        seen: Date())))
        }

        /// What this replica reports.
        public var report: ReplicaReport { values.withLockedValue { $0.report } }

        /// Returns once the follower has looked at the store once (or after `duration`, or when the
        /// task is cancelled): a replica that starts serving nothing listens with the current
        /// bundle loaded, unless the look found none it can load.
        public func firstLook(upTo duration: Duration) async {
            await looked.wait(upTo: duration)
        }
    }

    public init(
        store: any ReleaseStore & ReplicaRegistry, screens: ScreenStore, upstreams: Set<String>, interval: Duration, state: State,
        logger: Logger,
        metrics: any MetricsFactory
    ) {
        self.store = store
        self.screens = screens
        self.upstreams = upstreams
        self.interval = interval
        self.state = state
        self.logger = logger
        self.metrics = metrics
    }

    /// How often the store is asked for the current bundle: a publish reaches every replica
    /// within about this long.
    public static let interval = Duration.seconds(1)

    /// This replica's name in the store: the host's (a pod's name) and the process's.
    public static var replicaName: String {
        let host = ProcessInfo.processInfo.environment["HOSTNAME"] ?? ProcessInfo.processInfo.hostName
        return "\(host)/\(ProcessInfo.processInfo.processIdentifier)"
    }

    public func run() async throws {
        let wakeup = Wakeup()
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                // The store says when a release happens; the look every interval is for a
                // notification missed (a connection lost at that moment).
                group.addTask { await store.listenForReleases { wakeup.signal() } }
                group.addTask {
                    while !Task.isCancelled {
                        await follow()
                        // Between half and all of the interval: replicas started together do not
                        // ask the store in step.
                        await wakeup.wait(upTo: interval * Double.random(in: 0.5...1))
                    }
                }
            }
        }
    }

    /// One look at the store: loads the current bundle when it is new here, then reports.
    public func follow() async {
        defer { state.looked.signal() }
        do {
            let release = try await store.currentRelease()
            let report = state.report
            if let release, release.bundle != report.bundle, release.bundle != report.refusedBundle {
                try await load(release.bundle)
            } else if report.bundle == nil {
                if let release, release.bundle == report.refusedBundle, let refusal = report.refusal {
                    waitFor(Self.refusedMessage, bundle: release.bundle, cause: refusal)
                } else if release == nil {
                    waitFor("nothing is published yet; waiting for taksi-server publish")
                }
            }
            try await store.report(state.report)
            Gauge(label: "taksi_store_reachable", factory: metrics).record(1)
            if state.values.withLockedValue({ $0.storeFailing }) {
                state.values.withLockedValue { $0.storeFailing = false }
                logger.notice("store: reachable again; following the published screens")
            }
        } catch {
            Gauge(label: "taksi_store_reachable", factory: metrics).record(0)
            let first = state.values.withLockedValue { values in
                defer { values.storeFailing = true }
                return !values.storeFailing
            }
            if state.report.bundle == nil {
                waitFor(
                    "store: cannot be reached; waiting for it to load the published screens", cause: String(describing: error))
            } else if first {
                logger.warning(
                    "store: cannot look for published screens; still serving what this replica has",
                    metadata: ["cause": .string(String(describing: error))])
            }
        }
    }

    private func load(_ name: String) async throws {
        guard let (name, loaded) = try await Self.load(named: name, from: store, upstreams: upstreams) else { return }
        switch loaded {
        case .success(let (screenSet, bytes)):
            // Reported as served from the moment it is: what the swap's observers (a CDN purge
            // waiting for the fleet) read is already this bundle.
            let previous = state.values.withLockedValue { values in
                defer {
                    values.report.bundle = name
                    values.report.since = Date()
                }
                return values.report.bundle
            }
            state.values.withLockedValue { $0.waiting = nil }
            screens.replace(with: screenSet, loadedBytes: bytes)
            Self.recordServed(name, previous: previous, metrics: metrics)
            // A replica's first bundle is its start, not a reload.
            if previous != nil {
                Counter(label: "taksi_screen_reloads_total", dimensions: [("result", "ok")], factory: metrics).increment()
            }
            logger.info(
                "published screens loaded",
                metadata: ["bundle": .string(String(name.prefix(12))), "screens": .stringConvertible(screenSet.screens.count)])
        case .failure(let refusal):
            state.values.withLockedValue { values in
                values.report.refusedBundle = name
                values.report.refusal = refusal.description
            }
            Counter(label: "taksi_screen_reloads_total", dimensions: [("result", "failed")], factory: metrics).increment()
            Counter(label: "taksi_published_bundles_refused_total", factory: metrics).increment()
            guard state.report.bundle != nil else {
                waitFor(Self.refusedMessage, bundle: name, cause: refusal.description)
                return
            }
            logger.error(
                "published screens refused; still serving the last good set",
                metadata: ["bundle": .string(String(name.prefix(12))), "cause": .string(refusal.description)])
        }
    }

    static let refusedMessage = "the current published bundle does not load here; not serving until one does"

    /// While nothing is served: records why (``State/Values/waiting``, for `/readyz`) and logs it
    /// when it changes, an error for a refused bundle, a warning otherwise.
    private func waitFor(_ reason: String, bundle: String? = nil, cause: String? = nil) {
        let changed = state.values.withLockedValue { values in
            defer { values.waiting = reason }
            return values.waiting != reason
        }
        guard changed else { return }
        var metadata: Logger.Metadata = [:]
        if let bundle { metadata["bundle"] = .string(String(bundle.prefix(12))) }
        if let cause { metadata["cause"] = .string(cause) }
        if bundle != nil {
            logger.error("\(reason)", metadata: metadata)
        } else {
            logger.warning("\(reason)", metadata: metadata)
        }
    }

    /// `taksi_published_bundle{bundle}`: 1 for the bundle served (its first 12 characters), 0 for
    /// the one it replaced, so a dashboard shows which replica serves what.
    public static func recordServed(_ name: String, previous: String?, metrics: any MetricsFactory) {
        if let previous, previous != name {
            Gauge(label: "taksi_published_bundle", dimensions: [("bundle", String(previous.prefix(12)))], factory: metrics).record(0)
        }
        Gauge(label: "taksi_published_bundle", dimensions: [("bundle", String(name.prefix(12)))], factory: metrics).record(1)
    }

    /// The skeleton revisions of `screenSet`'s screens (what `X-Taksi-Skeleton` names), for
    /// ``FleetStore/publish(_:screens:revisions:by:)``.
    public static func revisions(of screenSet: ScreenSet) -> [String] {
        ServedScreenSet(screenSet).revisions.map(\.digest).sorted()
    }

    /// The store's bundle `name`, loaded as this build loads it (see ``load(_:named:upstreams:)``),
    /// under its whole name; nil when the store has no such bundle. A bundle that cannot be read
    /// here (a later format, bytes that are not a bundle, content that does not match its name) is
    /// a failure like one that does not load: refused, not taken for a store that is away.
    /// - Throws: only what the store throws when it cannot be reached.
    public static func load(
        named name: String, from store: any ReleaseStore, upstreams: Set<String>
    ) async throws -> (name: String, loaded: Result<(ScreenSet, Int?), BundleError>)? {
        let found: (name: String, bundle: ScreenBundle)?
        do {
            found = try await store.bundle(named: name)
        } catch let error as BundleError {
            return (name, .failure(error))
        }
        guard let found else { return nil }
        return (found.name, load(found.bundle, named: found.name, upstreams: upstreams))
    }

    /// The screen set of a bundle, as this build loads it, with what loading it cost; or why not.
    public static func load(
        _ bundle: ScreenBundle, named name: String, upstreams: Set<String>
    ) -> Result<(ScreenSet, Int?), BundleError> {
        let (load, bytes) = HeapUsage.measuring {
            ScreenSetLoader.load(files: bundle.files, root: "bundle \(name.prefix(12))", upstreams: upstreams)
        }
        guard let screenSet = load.screenSet else {
            let errors = load.diagnostics.filter { $0.severity == .error }
            return .failure(
                BundleError(
                    "\(errors.count) error\(errors.count == 1 ? "" : "s") loading it here: "
                        + errors.prefix(5).map(\.description).joined(separator: "; ")))
        }
        return .success((screenSet, bytes))
    }
}

/// Wakes a waiting task early: a signal before the wait ends it at once; one while nobody waits
/// is kept for the next wait. One task waits at a time.
package final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    package func signal() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Whether a signal waits for the next wait (tests).
    var hasPendingSignal: Bool { state.withLockedValue { $0.pending } }

    /// Returns at the first signal, after `duration`, or when the task is cancelled: whichever of
    /// the two child tasks ends first ends the other.
    func wait(upTo duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the first signal (one already given, at once), or when the task is cancelled.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLockedValue { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }
}
