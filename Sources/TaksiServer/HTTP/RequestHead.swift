import NIOCore
public import NIOHTTP1

/// A request's head, read once: its bytes as they arrived (the request line and the field lines),
/// where its target lies in them, and the fields the server acts on (``RequestFields``), found in
/// one pass as the head was read. Nothing of it is made text until something needs text:
/// ``uri`` and ``headers`` are made when asked for, and an answer the endpoints keep is found
/// from the bytes alone.
public struct RequestHead: Sendable {
    public var method: HTTPMethod { storage.method }
    public var version: HTTPVersion { storage.version }
    /// The head's bytes; the ranges here are offsets from their first byte.
    var bytes: ByteBuffer { storage.bytes }
    /// The request target (`/screens/home?x=1`).
    var target: Range<Int> { storage.target }
    var fields: RequestFields { storage.fields }
    /// The headers a head made in process was made from (a value with a line break in it would
    /// not read back from the bytes as it was); nil for one read from a connection.
    private var given: HTTPHeaders? { storage.given }
    /// One reference: a request is handed on many times on its way, and a copy is one count.
    private let storage: Storage

    private final class Storage: Sendable {
        let method: HTTPMethod
        let version: HTTPVersion
        let bytes: ByteBuffer
        let target: Range<Int>
        let fields: RequestFields
        let given: HTTPHeaders?

        init(method: HTTPMethod, version: HTTPVersion, bytes: ByteBuffer, target: Range<Int>, fields: RequestFields, given: HTTPHeaders?) {
            self.method = method
            self.version = version
            self.bytes = bytes
            self.target = target
            self.fields = fields
            self.given = given
        }
    }

    /// The head the reader read: `bytes` are `buffer`'s readable bytes (a slice of what arrived,
    /// kept without a copy), as ``HTTPRequestParser`` handed them with `parsed`.
    init(_ parsed: HTTPRequestParser.Head, bytes raw: UnsafeRawBufferPointer, in buffer: ByteBuffer) {
        var fields = RequestFields()
        let bytes = UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count)
        for field in parsed.fields { fields.read(name: field.name, value: field.value, in: bytes) }
        storage = Storage(
            method: Self.method(parsed.method), version: HTTPVersion(major: 1, minor: parsed.minorVersion), bytes: buffer,
            target: parsed.target, fields: fields, given: nil)
    }

    /// A head made in process (tests, the preview, embedding), read as a connection's is.
    public init(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1) {
        var buffer = ByteBuffer()
        buffer.writeString(method.rawValue)
        buffer.writeStaticString(" ")
        let targetStart = buffer.writerIndex
        buffer.writeString(uri)
        let target = targetStart..<buffer.writerIndex
        buffer.writeStaticString(" HTTP/1.1\r\n")
        var ranges: [(name: Range<Int>, value: Range<Int>)] = []
        for (name, value) in headers {
            let nameStart = buffer.writerIndex
            buffer.writeString(name)
            let nameEnd = buffer.writerIndex
            buffer.writeStaticString(": ")
            let valueStart = buffer.writerIndex
            buffer.writeString(String(value.trimmingOptionalWhitespace))
            ranges.append((nameStart..<nameEnd, valueStart..<buffer.writerIndex))
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        var fields = RequestFields()
        buffer.withUnsafeReadableBytes { raw in
            let bytes = UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count)
            for (name, value) in ranges { fields.read(name: name, value: value, in: bytes) }
        }
        storage = Storage(method: method, version: version, bytes: buffer, target: target, fields: fields, given: headers)
    }

    /// Calls `body` with the head's bytes.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeReadableBytes { raw in
            try body(UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count))
        }
    }

    /// The text at `range` of the bytes; nil for nil.
    func text(_ range: Range<Int>?) -> String? {
        guard let range else { return nil }
        return withBytes { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// The request target, as text.
    public var uri: String { text(target) ?? "" }

    /// Every field, as text, in the order sent: made when asked for (the answers the endpoints
    /// keep need none; see ``RequestFields``).
    public var headers: HTTPHeaders {
        if let given { return given }
        var headers = HTTPHeaders()
        _ = forEachField { name, value in
            headers.add(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
            return false
        }
        return headers
    }

    /// This request with its ``headers`` made once and kept, for what reads them many times.
    func keepingHeaders() -> RequestHead {
        guard given == nil else { return self }
        return RequestHead(method: method, version: version, bytes: bytes, target: target, fields: fields, given: headers)
    }

    private init(
        method: HTTPMethod, version: HTTPVersion, bytes: ByteBuffer, target: Range<Int>, fields: RequestFields, given: HTTPHeaders?
    ) {
        storage = Storage(method: method, version: version, bytes: bytes, target: target, fields: fields, given: given)
    }

    /// Calls `body` with each field's name and value (without the whitespace around it), in the
    /// order sent, until it returns true; says whether it did.
    func forEachField(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        withBytes { bytes in
            // The reader checked the lines (`name ":" OWS value OWS CRLF`, after the request line),
            // and a head made in process is written so.
            var start = (bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count) + 1
            while start < bytes.count, let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")), end - 1 > start {
                let line = UnsafeBufferPointer(rebasing: bytes[start..<(end - 1)])
                start = end + 1
                let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.count
                let value = HeaderList.trimmed(UnsafeBufferPointer(rebasing: line[min(colon + 1, line.count)...]))
                if body(UnsafeBufferPointer(rebasing: line[..<colon]), value) { return true }
            }
            return false
        }
    }

    /// Whether the bytes at `range` are `text`'s; false for nil.
    func field(_ range: Range<Int>?, equals text: String) -> Bool {
        guard let range else { return false }
        var text = text
        return text.withUTF8 { text in withBytes { bytes in HeaderList.equals(UnsafeBufferPointer(rebasing: bytes[range]), text) } }
    }

    /// Whether this is `OPTIONS *`, which asks about the server.
    var isAsterisk: Bool {
        guard case .OPTIONS = method, target.count == 1 else { return false }
        return withBytes { $0[target.lowerBound] == UInt8(ascii: "*") }
    }

    /// Whether the connection stays open after this request: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive` (RFC 9112, 9.3).
    var isKeepAlive: Bool {
        if fields.connection.closes { return false }
        return version.minor >= 1 || fields.connection.keepsAlive
    }

    /// Whether the client accepts the gzip form (``ContentCoding``).
    var acceptsGzip: Bool { fields.acceptance.acceptsGzip }

    /// Whether an `If-None-Match` of the request names `etag` (or is `*`); weak comparison, as
    /// RFC 9110 asks for it, as bytes.
    func isNotModified(etag: [UInt8]) -> Bool {
        guard fields.ifNoneMatch > 0 else { return false }
        return forEachField { name, value in
            KnownField(name: name) == .ifNoneMatch && Representations.matches(value, etag: etag)
        }
    }

    /// ``isNotModified(etag:)`` for a tag made for this response alone: its bytes are copied only
    /// when the request has an `If-None-Match` to compare them with.
    func isNotModified(etag: EntityTag) -> Bool {
        fields.ifNoneMatch > 0 && isNotModified(etag: Array(etag.text.utf8))
    }

    private static func method(_ method: HTTPRequestParser.Method) -> HTTPMethod {
        switch method {
        case .GET: .GET
        case .HEAD: .HEAD
        case .POST: .POST
        case .OPTIONS: .OPTIONS
        // NIO spells it without its hyphen.
        case .MSEARCH: .MSEARCH
        default: HTTPMethod(rawValue: method.rawValue)
        }
    }
}

/// The fields of a request head the server acts on, read once as the head is read, name by name
/// (``KnownField``): the one reader of a request's fields, for the connection (its limits, the
/// `Host` rule, framing, expectations) and the endpoints (the variant's inputs, the gzip form,
/// the conditional request). Values are ranges into the head's bytes (``RequestHead``); where a
/// field may be sent twice, the first is the one read.
struct RequestFields: Sendable {
    var hosts = 0
    /// Bytes of the field lines, as the limit counts them: name, value and 4 for each.
    var bytes = 0
    var acceptance = ContentCoding.Acceptance()
    /// How many `If-None-Match` fields were sent.
    var ifNoneMatch = 0
    /// How many `traceparent` fields were sent (with tracing on, the client's trace context is
    /// read from the fields as text only when there is one).
    var traceParents = 0
    var version: Range<Int>?
    var language: Range<Int>?
    /// `X-Taksi-Skeleton`: the skeleton a data request's or a submit's app holds.
    var revision: Range<Int>?
    var alternative: Range<Int>?
    var requestID: Range<Int>?
    var contentLength: Range<Int>?
    var expect: Range<Int>?
    var hasTransferEncoding = false
    var hasUpgrade = false
    var connection = ConnectionOptions()

    /// What `Connection` says of the connection.
    struct ConnectionOptions: Sendable {
        var closes = false
        var keepsAlive = false
        /// Another option (`upgrade`, a hop-by-hop field's name).
        var other = false
    }

    mutating func read(name: Range<Int>, value range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) {
        let name = UnsafeBufferPointer(rebasing: bytes[name])
        let value = UnsafeBufferPointer(rebasing: bytes[range])
        self.bytes += name.count + value.count + 4
        switch KnownField(name: name) {
        case .host: hosts += 1
        case .ifNoneMatch: ifNoneMatch += 1
        case .traceParent: traceParents += 1
        case .acceptEncoding: acceptance.read(value)
        case .skeletonRevision: revision = revision ?? range
        case .taksiVersion: version = version ?? range
        case .acceptLanguage: language = language ?? range
        case .taksiAlternative: alternative = alternative ?? range
        case .requestID: requestID = requestID ?? range
        case .contentLength: contentLength = contentLength ?? range
        case .expect: expect = expect ?? range
        case .transferEncoding: hasTransferEncoding = true
        case .upgrade: hasUpgrade = true
        case .connection:
            _ = HeaderList.containsElement(in: value) { option in
                if HeaderList.equalsIgnoringCase(option, "close") {
                    connection.closes = true
                } else if HeaderList.equalsIgnoringCase(option, "keep-alive") {
                    connection.keepsAlive = true
                } else {
                    connection.other = true
                }
                return false
            }
        case nil: break
        }
    }
}
