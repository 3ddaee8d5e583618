import NIOConcurrencyHelpers

/// Whether the server is shutting down. The HTTP service begins it when graceful shutdown starts;
/// `/readyz` reads it and answers 503, so load balancers stop sending new requests while the ones
/// in flight finish.
public final class Draining: Sendable {
    private let state = NIOLockedValueBox(false)

    public init() {}

    public var isDraining: Bool { state.withLockedValue { $0 } }

    /// Shutdown began: from now on the server is not ready.
    public func begin() {
        state.withLockedValue { $0 = true }
    }
}
