import Atomics
import NIOCore
import NIOHTTP1
import TaksiScreens

/// The head of a JSON representation encoded once, but for what each response of it has of its
/// own: its `Content-Length` and its `ETag` (and `Content-Encoding`). Every representation's
/// responses are made from one (``Representations``, the data memo's entries, data rendered for
/// one request), so a response made per request copies three runs of bytes and writes a number
/// and a tag, with no header list built and none encoded.
///
/// The fields, in the order every representation's head has them: `Content-Type` and
/// `Content-Length` (not in a `304`), the representation's headers with `vary` added to their
/// `Vary` (or after them), the `ETag`, then the `Content-Encoding` (not in a `304`).
final class HeadTemplate: Sendable {
    /// `HTTP/1.1 200 OK` and the fields up to the length's value.
    private let beforeLength: [UInt8]
    /// The end of the length's line and the fields after it, up to the tag's value.
    private let afterLength: [UInt8]
    /// `HTTP/1.1 304 Not Modified` and its fields up to the tag's value.
    private let notModified: [UInt8]

    /// - Parameters:
    ///   - headers: the representation's headers (variant, set version, `Cache-Control`, ...).
    ///   - vary: request headers to name in `Vary` besides those `headers` name (added to its
    ///     value, or as the header after them).
    init(headers: [(String, String)], vary: String? = nil) {
        var fields = headers
        if let vary { HTTPResponse.addVary(vary, to: &fields) }
        func lines(_ fields: some Sequence<(String, String)>) -> [UInt8] {
            fields.reduce(into: []) { bytes, field in
                bytes += field.0.utf8
                bytes += ": ".utf8
                bytes += field.1.utf8
                bytes += "\r\n".utf8
            }
        }
        beforeLength = Array("HTTP/1.1 200 OK\r\nContent-Type: \(HTTPResponse.jsonType)\r\nContent-Length: ".utf8)
        afterLength = Array("\r\n".utf8) + lines(fields) + Array("ETag: ".utf8)
        notModified =
            Array("HTTP/1.1 304 Not Modified\r\n".utf8) + lines(fields.filter { $0.0 != "Content-Encoding" }) + Array("ETag: ".utf8)
    }

    private static let allocator = ByteBufferAllocator()

    /// The response of `body`: `200` with it, or the `304` of the same validators.
    /// - Parameters:
    ///   - tag: the representation's `ETag`.
    ///   - encoding: its `Content-Encoding`, if any.
    ///   - label: what the response is counted as.
    ///   - variant: the variant it is of, for the access log.
    func response(
        body: [UInt8], tag: EntityTag, encoding: String?, notModified isNotModified: Bool, label: MetricsLabel, variant: String?
    ) -> HTTPResponse {
        var head: ByteBuffer
        let tagLine = EntityTag.longest + 2 + (encoding.map { $0.utf8.count + 20 } ?? 0)
        if isNotModified {
            head = Self.allocator.buffer(capacity: notModified.count + tagLine)
            head.writeBytes(notModified)
        } else {
            head = Self.allocator.buffer(capacity: beforeLength.count + 20 + afterLength.count + tagLine)
            head.writeBytes(beforeLength)
            head.writeDecimal(body.count)
            head.writeBytes(afterLength)
        }
        tag.write(to: &head)
        head.writeStaticString("\r\n")
        if !isNotModified, let encoding {
            head.writeStaticString("Content-Encoding: ")
            head.writeString(encoding)
            head.writeStaticString("\r\n")
        }
        var response = HTTPResponse(
            status: isNotModified ? .notModified : .ok, encodedHead: head, body: isNotModified ? ByteBuffer() : ByteBuffer(bytes: body))
        response.metricsLabel = label
        response.variant = variant
        return response
    }
}

/// The headers of responses rendered per request (data, a URL's own skeleton) and the head
/// templates made from them, one for each `Vary` such a response can have: a body large enough
/// to have a gzip form adds `Accept-Encoding` to it, decided by its size alone, so every form of
/// it, kept or not, varies alike. Each template is made the first time it is used: a variant's
/// are made once and serve every request for it; one made for a single request (headers that
/// depend on its upstream answers) makes only the one it uses.
final class ResponseHeads: Sendable {
    let headers: [(String, String)]
    private let small = ManagedAtomicLazyReference<HeadTemplate>()
    private let large = ManagedAtomicLazyReference<HeadTemplate>()

    init(_ headers: [(String, String)]) {
        self.headers = headers
    }

    /// Whether a body of this size has a gzip form (and so varies by `Accept-Encoding`).
    static func hasGzipForm(bodySize: Int) -> Bool { bodySize >= ResponseMemo.smallestGzipped }

    /// The template for a body of this size.
    func template(bodySize: Int) -> HeadTemplate {
        let varies = Self.hasGzipForm(bodySize: bodySize)
        let made = varies ? large : small
        if let template = made.load() { return template }
        return made.storeIfNilThenLoad(HeadTemplate(headers: headers, vary: varies ? "Accept-Encoding" : nil))
    }
}

/// A representation's strong `ETag`: the FNV-1a digest of its identity bytes as 16 hexadecimal
/// digits, quoted, with `-gzip` after them for the gzip form; so equal bytes get equal tags on
/// every replica. Written into a head as it goes, and made text only where text is asked for.
struct EntityTag: Sendable, Equatable {
    let digest: FNV1a
    private(set) var isGzip = false

    /// The tag of the identity form of `body`.
    init(of body: [UInt8]) {
        var digest = FNV1a()
        digest.combine(body)
        self.digest = digest
    }

    /// The tag of the gzip form of the same representation.
    var gzipForm: EntityTag {
        var tag = self
        tag.isGzip = true
        return tag
    }

    /// Bytes in the longest tag (the gzip form's).
    static let longest = 23

    /// `"<16 hex digits>"`, or `"<16 hex digits>-gzip"`.
    var text: String {
        var buffer = ByteBuffer()
        write(to: &buffer)
        return String(buffer: buffer)
    }

    func write(to buffer: inout ByteBuffer) {
        let digest = digest
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.longest) { free in
            let bytes = free.bindMemory(to: UInt8.self)
            bytes[0] = UInt8(ascii: "\"")
            digest.writeHex(into: UnsafeMutableBufferPointer(rebasing: bytes[1...]))
            return 17
        }
        if isGzip { buffer.writeStaticString("-gzip") }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}
