import NIOConcurrencyHelpers
import NIOCore
import TaksiSchema

/// The preview's server-sent events (`GET /preview/events.stream`): one `screens` event each time
/// the served set or its pending errors change, so open previews redraw by themselves.
///
/// An event's data is what `/readyz` says of the set: its version and the errors of a reload
/// that failed (the set served stays the last good one):
///
/// ```text
/// id: 5f0c2a91d3e4b7a8
/// event: screens
/// data: {"pending_errors":[],"screens_version":"5f0c2a91d3e4b7a8"}
/// ```
///
/// Each subscriber is a connection on its own event loop; an event is handed to each loop and
/// written there. Streams are few (people's browsers), so the number open is bounded.
public final class PreviewEvents: StreamedBody {
    private struct Subscriber: Sendable {
        let loop: any EventLoop
        let send: @Sendable (ByteBuffer) -> Void
    }

    private struct State {
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
        /// The last event published, sent first to a new subscriber and never published twice.
        var current: ByteBuffer
    }

    private let state: NIOLockedValueBox<State>
    /// Streams open at most; more are answered 503 (each holds a connection).
    public let maxSubscribers: Int

    /// - Parameters:
    ///   - status: the served set as the first event describes it.
    ///   - maxSubscribers: streams open at once at most.
    public init(status: ScreenStore.Status, maxSubscribers: Int = 32) {
        self.maxSubscribers = maxSubscribers
        self.state = NIOLockedValueBox(State(current: Self.event(for: status)))
    }

    /// Whether another stream may open.
    var hasRoom: Bool { state.withLockedValue { $0.subscribers.count < maxSubscribers } }

    /// Streams open now.
    public var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }

    /// The event describing the set served now (the first a stream sends).
    var current: ByteBuffer { state.withLockedValue { $0.current } }

    /// Starts sending events to a stream: `send` runs on `loop` with each event's bytes, until
    /// ``stop(_:)``.
    /// - Returns: the subscription's id, and the current event (written first, so a page that
    ///   connects after a reload learns of it).
    func start(on loop: any EventLoop, send: @escaping @Sendable (ByteBuffer) -> Void) -> (id: Int, first: ByteBuffer) {
        state.withLockedValue { state in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(loop: loop, send: send)
            return (state.nextID, state.current)
        }
    }

    func stop(_ id: Int) {
        _ = state.withLockedValue { $0.subscribers.removeValue(forKey: id) }
    }

    /// Tells every open stream about the set served now; nothing when that is what they were last told.
    public func publish(_ status: ScreenStore.Status) {
        let event = Self.event(for: status)
        let subscribers: [Subscriber]? = state.withLockedValue { state in
            guard state.current != event else { return nil }
            state.current = event
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers ?? [] {
            subscriber.loop.execute { subscriber.send(event) }
        }
    }

    /// A `screens` event: `id` the set's version, `data` one line of JSON.
    static func event(for status: ScreenStore.Status) -> ByteBuffer {
        let data: JSONValue = [
            "screens_version": .string(status.version),
            "pending_errors": .array(status.pendingErrors.map(Preview.diagnosticEntry)),
        ]
        var buffer = ByteBuffer()
        buffer.writeStaticString("id: ")
        buffer.writeString(status.version)
        buffer.writeStaticString("\nevent: screens\ndata: ")
        // JSONWriter escapes control characters, so the data is one line as the format requires.
        buffer.writeBytes(JSONWriter.bytes(data))
        buffer.writeStaticString("\n\n")
        return buffer
    }

    /// Sent every ``heartbeatInterval`` on an idle stream: a comment, ignored by browsers, that
    /// keeps proxies from closing the connection and finds clients that went away.
    var heartbeat: ByteBuffer { ByteBuffer(string: ": keep-alive\n\n") }
    var heartbeatInterval: TimeAmount { .seconds(15) }
    /// The first bytes of a stream: how long a browser waits before it reconnects after the
    /// server went away (a restart), in milliseconds.
    static let preamble = ByteBuffer(string: "retry: 1000\n\n")
}
