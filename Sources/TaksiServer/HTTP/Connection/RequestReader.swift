import NIOCore
import NIOHTTP1

/// A connection's bytes read as requests: ``HTTPRequestParser`` over what arrives, with the bytes of
/// a head (or chunk line) not yet whole kept until the rest arrives. Takes the place of NIO's
/// `ByteToMessageHandler<HTTPRequestDecoder>`: the parts are handed to the caller directly, in the
/// connection handler, with no handler between them and no `NIOAny` box.
struct RequestReader {
    private var parser: HTTPRequestParser
    /// Bytes given and not consumed: the start of a head, a chunk-size line, a chunk's CRLF.
    private var kept: ByteBuffer?

    init(limits: ConnectionLimits) {
        // The exact limits on header bytes are the connection's (see `ConnectionRequest`), which
        // count field lines as `name: value` without their whitespace; the parser's bound leaves
        // room for that, so the two agree on what is too large.
        parser = HTTPRequestParser(
            limits: HTTPRequestParser.Limits(maxTargetLength: limits.maxURILength, maxFieldBytes: limits.maxHeaderBytes + 4096))
    }

    /// Reads the bytes that arrived (after any kept from before), handing each request part to
    /// `handle`, which returns false when no more should be read from them (they are dropped).
    /// - Parameter answer: offered each head of a request without a body first, with its bytes:
    ///   true when it answered the request, whose parts are then not handed on.
    mutating func read(
        _ bytes: ByteBuffer, answering answer: (HTTPRequestParser.Head, UnsafeRawBufferPointer) -> Bool = { _, _ in false },
        handle: (HTTPServerRequestPart) -> Bool
    ) throws(HTTPRequestParser.Failure) {
        var buffer: ByteBuffer
        if var kept {
            self.kept = nil
            var bytes = bytes
            kept.writeBuffer(&bytes)
            buffer = kept
        } else {
            buffer = bytes
        }
        var failure: HTTPRequestParser.Failure?
        var stopped = false
        // The request whose head was answered: its end (which follows at once) is not handed on.
        var answered = false
        let consumed = buffer.withUnsafeReadableBytes { raw in
            do throws(HTTPRequestParser.Failure) {
                return try parser.parse(raw) { event in
                    let part: HTTPServerRequestPart
                    switch event {
                    case .head(let head, let bytes):
                        if head.body == .none, answer(head, bytes) {
                            answered = true
                            return true
                        }
                        part = .head(Self.requestHead(head, bytes))
                    case .body(let range): part = .body(buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count)!)
                    case .end where answered:
                        answered = false
                        return true
                    case .end: part = .end(nil)
                    }
                    stopped = !handle(part)
                    return !stopped
                }
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        guard !stopped else { return }
        buffer.moveReaderIndex(forwardBy: consumed)
        if buffer.readableBytes > 0 {
            buffer.discardReadBytes()
            kept = buffer
        }
    }

    /// NIO's head for the one read.
    private static func requestHead(_ head: HTTPRequestParser.Head, _ bytes: UnsafeRawBufferPointer) -> HTTPRequestHead {
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(head.fields.count)
        for field in head.fields {
            headers.add(name: text(field.name), value: text(field.value))
        }
        return HTTPRequestHead(
            version: HTTPVersion(major: 1, minor: head.minorVersion), method: method(head.method), uri: text(head.target),
            headers: headers)
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
