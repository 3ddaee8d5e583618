import NIOCore

/// A request as a connection holds it, from its head to its answer. A class: the machine hands
/// a request on through its states and actions, and a reference is one count where a copy of
/// the value was one for each of its parts (used on the connection's event loop alone).
final class ConnectionRequest {
    let head: RequestHead
    var id: RequestID
    var started: NIODeadline
    /// An answer decided while reading: a limit was exceeded or the request was malformed.
    var rejection: APIError?
    /// Body bytes received so far.
    var bodyBytes = 0
    /// The body of a POST (actions take one, up to the body limit); other methods' bodies are
    /// counted and dropped.
    var body: ByteBuffer?

    /// What a request head alone decides.
    struct Verdict {
        var rejection: APIError?
        /// The rejection is answered now, before any of the body is read (nor asked for with
        /// `100 Continue`).
        var answersBeforeBody = false
        /// A body follows the head.
        var hasBody = false
        /// The client waits for `100 Continue` before it sends the body.
        var expectsContinue = false
    }

    /// Reads a request's head: what the connection needs of it, and what must be refused whatever
    /// the request asks for (a limit, the `Host` rule, a broken length, an unknown expectation).
    static func read(_ head: RequestHead, limits: ConnectionLimits, ids: inout RequestIDs) -> (request: ConnectionRequest, verdict: Verdict)
    {
        let request = ConnectionRequest(head: head, id: ids.id(given: head.text(head.fields.requestID)), started: .now())
        let verdict = verdict(on: head, limits: limits)
        request.rejection = verdict.rejection
        return (request, verdict)
    }

    private init(head: RequestHead, id: RequestID, started: NIODeadline) {
        self.head = head
        self.id = id
        self.started = started
    }

    /// A placeholder for bytes that never made a request (they are answered as one).
    static func placeholder(ids: inout RequestIDs) -> ConnectionRequest {
        ConnectionRequest(head: RequestHead(method: .GET, uri: "-"), id: ids.id(given: nil), started: .now())
    }

    private static func verdict(on head: RequestHead, limits: ConnectionLimits) -> Verdict {
        var verdict = Verdict()
        let fields = head.fields
        // The reader took it as an Int (see `HTTPRequestParser`), or refused the request.
        let length = head.text(fields.contentLength).flatMap { Int($0) }
        verdict.hasBody = (length ?? 0) > 0 || fields.hasTransferEncoding
        if head.target.count > limits.maxURILength {
            verdict.rejection = .uriTooLong(limit: limits.maxURILength)
        } else if fields.bytes > limits.maxHeaderBytes {
            verdict.rejection = .headersTooLarge(limit: limits.maxHeaderBytes)
        } else if fields.hosts > 1 || (fields.hosts == 0 && head.version.minor >= 1) {
            // RFC 9112, 3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0.
            verdict.rejection = .invalidHost
        } else if let length, length > limits.maxBodyBytes {
            // Refused before a byte of it is read.
            verdict.rejection = .bodyTooLarge(limit: limits.maxBodyBytes)
            verdict.answersBeforeBody = true
        } else if let expectation = head.text(fields.expect) {
            if expectation.lowercased() != "100-continue" {
                verdict.rejection = .expectationFailed
                verdict.answersBeforeBody = true
            } else {
                verdict.expectsContinue = verdict.hasBody
            }
        }
        return verdict
    }
}

/// A request's id: the client's, or its connection's prefix and a counter, written into the
/// response without building a string (one is built only for the access log).
enum RequestID {
    case given(String)
    case generated(Int)
}

/// A request's id, made text only when something needs it (a log line, an upstream call).
public struct RequestIDReference: Sendable {
    let given: String?
    let prefix: String
    let number: Int

    /// The id as `X-Request-Id` says it.
    public var text: String { given ?? prefix + String(number) }

    /// For a request made in process (tests, the preview), which has no connection.
    public static let inProcess = RequestIDReference(given: "in-process", prefix: "", number: 0)
}

/// Makes the ids of one connection's requests.
struct RequestIDs {
    private let prefix = String(UInt64.random(in: 0...UInt64.max) | (1 << 63), radix: 16) + "-"
    private var count = 0

    /// The client's `X-Request-Id` when it is safe to echo (1 to 128 visible ASCII characters),
    /// else a new one: a random per-connection prefix and a counter.
    mutating func id(given: String?) -> RequestID {
        if let given, (1...128).contains(given.utf8.count), given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            return .given(given)
        }
        count += 1
        return .generated(count)
    }

    /// The id, for what reads it later as text.
    func reference(_ id: RequestID) -> RequestIDReference {
        switch id {
        case .given(let given): RequestIDReference(given: given, prefix: "", number: 0)
        case .generated(let number): RequestIDReference(given: nil, prefix: prefix, number: number)
        }
    }

    func write(_ id: RequestID, to buffer: inout ByteBuffer) {
        switch id {
        case .given(let id):
            buffer.writeString(id)
        case .generated(let number):
            buffer.writeString(prefix)
            buffer.writeDecimal(number)
        }
    }
}
