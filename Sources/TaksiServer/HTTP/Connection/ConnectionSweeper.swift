import NIOCore

/// The connections of one event loop whose deadlines run, checked a few times a second: each one
/// whose deadline passed is told so (``HTTPConnectionStateMachine/timedOut(now:isWritable:)``).
/// Lives on its event loop and is only touched there.
///
/// A request only moves a deadline; scheduling a timer per request instead cost a fifth of the
/// server's time in the benchmark (NIO's timer heap is not made for one insert and one removal per
/// request on thousands of connections).
final class ConnectionSweeper {
    private var connections: [ObjectIdentifier: HTTPConnectionHandler] = [:]
    private var task: RepeatedTask?

    /// Starts sweeping on `loop` every `interval`.
    static func start(on loop: any EventLoop, interval: TimeAmount) async throws -> NIOLoopBound<ConnectionSweeper> {
        try await loop.submit {
            let bound = NIOLoopBound(ConnectionSweeper(), eventLoop: loop)
            bound.value.task = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                bound.value.sweep(now: .now())
            }
            return bound
        }.get()
    }

    func add(_ connection: HTTPConnectionHandler) {
        connections[ObjectIdentifier(connection)] = connection
    }

    func remove(_ connection: HTTPConnectionHandler) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// Stops sweeping (when the server stops).
    func stop() {
        task?.cancel()
        task = nil
        connections = [:]
    }

    /// Tells every connection whose deadline is `now` or earlier. (Connections that close meanwhile
    /// leave the dictionary; the loop runs over the copy it started with.)
    func sweep(now: NIODeadline) {
        for connection in connections.values {
            if let deadline = connection.nextDeadline, deadline <= now { connection.timedOut(now: now) }
        }
    }
}
