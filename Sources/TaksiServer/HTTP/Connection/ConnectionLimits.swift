public import NIOCore

/// Limits that keep one client, or many, from exhausting the server. The defaults follow nginx's
/// spirit: generous for real apps, tight enough that abuse costs a bounded amount of memory.
public struct ConnectionLimits: Sendable, Equatable {
    /// Open client connections at most; beyond it new connections wait in the listen backlog.
    public var maxConnections: Int = 10_000
    /// A keep-alive connection with no request in progress is closed after this long.
    public var idleTimeout: TimeAmount = .seconds(60)
    /// A request's head must arrive whole within this long of its first byte.
    public var headerTimeout: TimeAmount = .seconds(10)
    /// Requests read ahead of their responses; past it, the connection is not read until the
    /// client reads its responses.
    public var maxPipelinedRequests: Int = 16
    /// Requests answered on one connection at most; the last answer says `Connection: close`
    /// (nginx's `keepalive_requests`, 1000). It bounds what one connection can make the server
    /// do: a client that pipelines without reading made the server fill its socket buffers (megabytes
    /// each) with responses, and 300 of them kept everyone else waiting for seconds.
    public var maxRequestsPerConnection: Int = 1000
    /// Longest request target (path and query), in bytes; longer ones get 414.
    public var maxURILength: Int = 8 * 1024
    /// Largest total of header names and values, in bytes; larger ones get 431.
    public var maxHeaderBytes: Int = 16 * 1024
    /// Largest request body, in bytes; a larger one gets 413 and the connection closes, without
    /// the body being read into memory. Only actions (POST) read a body; other requests' bodies
    /// are counted and dropped.
    public var maxBodyBytes: Int = 64 * 1024
    /// A request body must arrive whole within this long of its head; else 408 and a close.
    public var bodyTimeout: TimeAmount = .seconds(10)
    /// A client that takes none of its responses for this long is disconnected: while the server
    /// holds unsent response bytes for it (the socket's send buffer is full and more waits), the
    /// clock runs, and each time the client reads enough for writing to go on, it starts again
    /// (nginx's `send_timeout`, 60 s). Without it, clients that pipeline and never read would hold
    /// their connections, and so the connection cap, forever.
    public var writeTimeout: TimeAmount = .seconds(60)
    /// A streamed response (the preview's events) ends after this long, and the browser
    /// reconnects by itself a second later. Its few bytes a minute never fill a socket's buffer,
    /// so a client that stopped reading one is found by no write timeout; this frees its slot.
    public var maxStreamDuration: TimeAmount = .minutes(5)
    /// After an error that closes the connection, how long what the client still sends is read
    /// and dropped, so the error reaches it instead of a reset (nginx's lingering close).
    public var lingerTimeout: TimeAmount = .seconds(2)

    public init() {}
}
