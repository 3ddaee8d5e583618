import NIOCore

/// The first line of a request as its bytes arrive, before the decoder reads them: how long it is
/// (a head too large for the decoder is answered 414 when its target is what is too long: the
/// decoder only says "too large"), and its first bytes (a reference, not a copy) to tell an unknown
/// method or version from bytes that are not HTTP. `HTTP/1.2` (any later 1.x) is read as `HTTP/1.1`,
/// the highest minor version this server implements, as RFC 9110, 2.5 asks of a recipient; NIO's
/// decoder would refuse it.
struct RequestLine {
    /// Bytes of the line seen so far (the whole line once complete).
    private(set) var length = 0
    private var isComplete = false
    /// The first bytes read of the request.
    private var start: ByteBuffer?

    /// Reads the next bytes of the request, changing `HTTP/1.x` to `HTTP/1.1` in them.
    mutating func read(_ bytes: inout ByteBuffer) {
        guard !isComplete else { return }
        if let end = bytes.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            length += end - bytes.readerIndex
            isComplete = true
            Self.downgradeMinorVersion(&bytes, lineEnd: end)
        } else {
            length += bytes.readableBytes
        }
        if start == nil { start = bytes }
    }

    private static func downgradeMinorVersion(_ buffer: inout ByteBuffer, lineEnd: Int) {
        var end = lineEnd
        if end > buffer.readerIndex, buffer.getInteger(at: end - 1, as: UInt8.self) == UInt8(ascii: "\r") { end -= 1 }
        guard end - buffer.readerIndex >= 9, let minor = buffer.getInteger(at: end - 1, as: UInt8.self),
            (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(minor),
            buffer.getBytes(at: end - 9, length: 8) == Array(" HTTP/1.".utf8)
        else { return }
        buffer.setInteger(UInt8(ascii: "1"), at: end - 1)
    }

    /// The major HTTP version when the line (whole in the first bytes read) reads
    /// `TOKEN SP TARGET SP HTTP/D.D`; nil when it is not a request line at all. Tells a method or a
    /// version the decoder does not know from bytes that are not HTTP.
    var wellFormedMajorVersion: Int? {
        guard let start, let end = start.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        var line = Array(start.readableBytesView[start.readerIndex..<end])
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        let token = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(token.contains), !parts[1].isEmpty,
            parts[2].count == 8, parts[2].starts(with: "HTTP/".utf8)
        else { return nil }
        let version = Array(parts[2].dropFirst(5))
        guard digits.contains(version[0]), version[1] == UInt8(ascii: "."), digits.contains(version[2]) else { return nil }
        return Int(version[0] - UInt8(ascii: "0"))
    }
}
