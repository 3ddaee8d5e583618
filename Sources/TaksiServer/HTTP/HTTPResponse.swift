public import NIOCore
public import NIOHTTP1
import TaksiSchema

/// A response ready to write: status, headers and body. For `HEAD` the body is not written but
/// `Content-Length` still describes it.
///
/// Precomputed responses (skeletons, fixture data, their 304s) and data rendered for one request
/// carry ``encodedHead``: the status line and headers already encoded, so writing one formats
/// nothing. A data response's head is made from its representation's ``HeadTemplate`` with no
/// header list at all; ``headers`` reads it back for whoever asks (tests, the preview).
public struct HTTPResponse: Sendable {
    public var status: HTTPResponseStatus
    /// The header fields. Setting them drops a precomputed head, which no longer says the same.
    public var headers: HTTPHeaders {
        get { fields ?? encodedHead.map(Self.fields(ofHead:)) ?? HTTPHeaders() }
        set {
            fields = newValue
            encodedHead = nil
        }
    }
    public var body: ByteBuffer
    /// The header fields as a list; nil for a response made from its encoded head alone.
    private var fields: HTTPHeaders?
    /// `HTTP/1.1 <status>\r\n` and every header line of ``headers``, without the blank line that
    /// ends the head (the connection adds `Date`, `X-Request-Id` and `Connection` before it).
    private(set) var encodedHead: ByteBuffer?
    /// What the response is counted as in metrics, traces and the access log.
    var metricsLabel = MetricsLabel.other
    /// The variant served, for the access log.
    var variant: String?
    /// The request's span, with tracing on: ended when the response is written, and named in
    /// its `traceparent` header.
    var trace: RequestTrace?
    /// Set for a streamed body (the preview's events): ``body`` is its first bytes, then the
    /// connection stays open and writes each part the stream produces.
    var stream: (any StreamedBody)?

    /// The `Content-Type` of JSON bodies.
    static let jsonType = "application/json; charset=utf-8"

    init(status: HTTPResponseStatus = .ok, json body: ByteBuffer, headers extra: [(String, String)] = []) {
        self.init(status: status, body: body, type: Self.jsonType, headers: extra)
    }

    /// A body of this `Content-Type`, its `Content-Length`, then `extra` headers.
    init(status: HTTPResponseStatus = .ok, body: ByteBuffer, type: String, headers extra: [(String, String)] = []) {
        self.status = status
        var headers = HTTPHeaders()
        headers.reserveCapacity(4 + extra.count)
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        for (name, value) in extra { headers.add(name: name, value: value) }
        self.fields = headers
        self.body = body
    }

    /// A response with exactly these headers (`Content-Length` included by the caller).
    init(status: HTTPResponseStatus, headers: [(String, String)], body: ByteBuffer) {
        self.init(status: status, fields: HTTPHeaders(headers), body: body)
    }

    /// A response with exactly these fields (`Content-Length` included by the caller).
    init(status: HTTPResponseStatus, fields: HTTPHeaders, body: ByteBuffer) {
        self.status = status
        self.fields = fields
        self.body = body
    }

    /// A response whose status line and header lines are already encoded (``HeadTemplate``).
    init(status: HTTPResponseStatus, encodedHead: ByteBuffer, body: ByteBuffer) {
        self.status = status
        self.encodedHead = encodedHead
        self.body = body
    }

    /// `304 Not Modified`: the validators and caching headers of the full response, no body.
    init(notModified headers: [(String, String)]) {
        self.status = .notModified
        self.fields = HTTPHeaders(headers)
        self.body = ByteBuffer()
    }

    /// An error's JSON body. Never stored by a shared cache (`Cache-Control: no-store` unless
    /// the error sets its own): one client's bad header must not become everyone's answer.
    init(error: APIError) {
        let caching = error.headers.contains { $0.0 == "Cache-Control" } ? [] : [("Cache-Control", "no-store")]
        self.init(status: error.status, json: ByteBuffer(bytes: JSONWriter.bytes(error.body)), headers: error.headers + caching)
        metricsLabel = .error
    }

    /// Adds `names` to the `Vary` header of `headers`, or adds the header.
    static func addVary(_ names: String, to headers: inout [(String, String)]) {
        if let index = headers.firstIndex(where: { $0.0 == "Vary" }) {
            headers[index].1 += ", " + names
        } else {
            headers.append(("Vary", names))
        }
    }

    /// The bytes of the precomputed head, if there is one (what a kept response is charged).
    var encodedHeadBytes: Int { encodedHead?.readableBytes ?? 0 }

    /// The same response with its head encoded once, for responses served many times.
    func precomputed() -> HTTPResponse {
        guard encodedHead == nil, let fields else { return self }
        var copy = self
        copy.encodedHead = Self.encodeHead(status: status, headers: fields)
        return copy
    }

    /// The header fields of an encoded head (what ``writeHead(status:headers:to:)`` writes): its
    /// lines after the status line, each split at its first colon.
    private static func fields(ofHead head: ByteBuffer) -> HTTPHeaders {
        var fields = HTTPHeaders()
        let lines = String(decoding: head.readableBytesView, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: true)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.add(name: String(line[..<colon]), value: String(line[line.index(after: colon)...].trimmingOptionalWhitespace))
        }
        return fields
    }

    /// The status line and header lines of a response (no terminating blank line).
    static func encodeHead(status: HTTPResponseStatus, headers: HTTPHeaders) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(64 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        writeHead(status: status, headers: headers, to: &buffer)
        return buffer
    }

    /// Writes its status line and header lines (no terminating blank line) into `buffer`: the
    /// encoded head when it has one, else its fields encoded now.
    func writeHead(to buffer: inout ByteBuffer) {
        if let encodedHead {
            buffer.writeImmutableBuffer(encodedHead)
        } else {
            Self.writeHead(status: status, headers: fields ?? HTTPHeaders(), to: &buffer)
        }
    }

    /// Writes the status line and header lines of a response (no terminating blank line) into
    /// `buffer`: for a response made for one request, straight into the bytes sent.
    static func writeHead(status: HTTPResponseStatus, headers: HTTPHeaders, to buffer: inout ByteBuffer) {
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeDecimal(Int(status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        // The header lines are copied into free space made once for all of them: a write to the
        // buffer for each piece checked its capacity and uniqueness four times a header.
        var size = 0
        for (name, value) in headers { size += name.utf8.count + value.utf8.count + 4 }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { free in
            var count = 0
            func append(_ text: String) {
                var text = text
                text.withUTF8 { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: free[count..<(count + bytes.count)]).copyMemory(
                        from: UnsafeRawBufferPointer(bytes))
                    count += bytes.count
                }
            }
            func append(_ first: UInt8, _ second: UInt8) {
                free[count] = first
                free[count + 1] = second
                count += 2
            }
            for (name, value) in headers {
                append(name)
                append(UInt8(ascii: ":"), UInt8(ascii: " "))
                append(value)
                append(UInt8(ascii: "\r"), UInt8(ascii: "\n"))
            }
            return count
        }
    }
}
