public import CoreMetrics
public import Foundation
import NIOConcurrencyHelpers
public import TaksiScreens

/// Holds the screen set being served. Requests read the current snapshot; a reload replaces it
/// whole, so a request sees either the old set or the new one, never a mix. A reload that fails
/// leaves the snapshot alone and records its errors for `/readyz`.
public final class ScreenStore: Sendable {
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
        var status: Status
    }

    // A lock, not an actor: the hot path reads the snapshot synchronously on the event loop, and
    // holding the lock only to copy one reference costs nanoseconds.
    private let state: NIOLockedValueBox<State>
    /// How every set this store serves is prepared; kept so a reload prepares the same way.
    private let options: ServedScreenSet.Options
    private let metrics: any MetricsFactory

    /// Prepares `screenSet` for serving and holds it.
    /// - Parameters:
    ///   - options: caching headers of precomputed responses.
    ///   - metrics: where the sets' counters are created.
    public init(_ screenSet: ScreenSet, options: ServedScreenSet.Options = .init(), metrics: any MetricsFactory = MetricsSystem.factory) {
        self.options = options
        self.metrics = metrics
        let screens = ServedScreenSet(screenSet, options: options, metrics: metrics)
        Self.recordSize(screenSet, metrics)
        let status = Status(version: screens.screenSet.version, loadedAt: Date(), lastReloadAt: nil, pendingErrors: [])
        self.state = NIOLockedValueBox(State(screens: screens, status: status))
    }

    /// The screen set to serve this request from.
    public var snapshot: ServedScreenSet {
        state.withLockedValue { $0.screens }
    }

    /// The loaded set's version and the outcome of the last reload.
    public var status: Status {
        state.withLockedValue { $0.status }
    }

    /// Prepares `screenSet`, then replaces the served set with it atomically and clears pending errors.
    public func replace(with screenSet: ScreenSet) {
        let screens = ServedScreenSet(screenSet, options: options, metrics: metrics)
        Self.recordSize(screenSet, metrics)
        let now = Date()
        let status = state.withLockedValue {
            $0.screens = screens
            $0.status = Status(version: screens.screenSet.version, loadedAt: now, lastReloadAt: now, pendingErrors: [])
            return $0.status
        }
        notify(status)
    }

    /// Calls `observer` with the new status after every reload, successful or not (the preview's
    /// event stream listens).
    public func onChange(_ observer: @escaping @Sendable (Status) -> Void) {
        observers.withLockedValue { $0.append(observer) }
    }

    private let observers = NIOLockedValueBox<[@Sendable (Status) -> Void]>([])

    private func notify(_ status: Status) {
        for observer in observers.withLockedValue({ $0 }) { observer(status) }
    }

    /// `taksi_screens_loaded` and `taksi_screen_variants_loaded`: the size of the served set.
    private static func recordSize(_ screenSet: ScreenSet, _ metrics: any MetricsFactory) {
        Gauge(label: "taksi_screens_loaded", factory: metrics).record(screenSet.screens.count)
        Gauge(label: "taksi_screen_variants_loaded", factory: metrics).record(screenSet.screens.values.reduce(0) { $0 + $1.all.count })
    }

    /// Whether the server is shutting down: `/readyz` then answers 503 so load balancers stop
    /// sending new requests while the ones in flight finish.
    public var isDraining: Bool {
        get { draining.withLockedValue { $0 } }
        set { draining.withLockedValue { $0 = newValue } }
    }

    private let draining = NIOLockedValueBox(false)

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
