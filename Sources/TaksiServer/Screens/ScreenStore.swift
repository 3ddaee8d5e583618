import NIOConcurrencyHelpers

/// Holds the screen set being served. Requests read the current snapshot; a reload replaces it
/// whole, so a request sees either the old set or the new one, never a mix.
public final class ScreenStore: Sendable {
    // A lock, not an actor: the hot path reads the snapshot synchronously on the event loop, and
    // holding the lock only to copy one reference costs nanoseconds.
    private let current: NIOLockedValueBox<ServedScreenSet>

    public init(_ screens: ServedScreenSet) {
        self.current = NIOLockedValueBox(screens)
    }

    /// The screen set to serve this request from.
    public var snapshot: ServedScreenSet {
        current.withLockedValue { $0 }
    }

    /// Replaces the served set atomically.
    public func replace(with screens: ServedScreenSet) {
        current.withLockedValue { $0 = screens }
    }
}
