import NIOCore

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
    mutating func read(_ bytes: ByteBuffer, handle: (RequestPart) -> Bool) throws(HTTPRequestParser.Failure) {
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
        let consumed = buffer.withUnsafeReadableBytes { raw in
            do throws(HTTPRequestParser.Failure) {
                return try parser.parse(raw) { event in
                    let part: RequestPart
                    switch event {
                    case .head(let head, let bytes):
                        // The head keeps its bytes as a slice of what arrived: no copy.
                        let offset = raw.baseAddress.map { bytes.baseAddress! - $0 } ?? 0
                        let slice = buffer.getSlice(at: buffer.readerIndex + offset, length: bytes.count)!
                        part = .head(RequestHead(head, bytes: bytes, in: slice))
                    case .body(let range): part = .body(buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count)!)
                    case .end: part = .end
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
}

/// A part of a request, as ``RequestReader`` reads it.
enum RequestPart {
    case head(RequestHead)
    case body(ByteBuffer)
    case end
}
