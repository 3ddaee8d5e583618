// This file imports nothing on purpose: the fuzzing harness (`Tests/Fuzz/`) compiles it alone.

/// Reads HTTP/1.1 requests from bytes as they arrive: heads, bodies (by `Content-Length` or
/// chunked) and their ends, for any number of pipelined requests, whatever the bytes' split into
/// reads. It refuses everything llhttp (NIO's decoder, which it replaces on the server's path)
/// refuses, and more: what RFC 9112 lets a server refuse and the request-smuggling literature
/// exploits (how it is held to llhttp: `docs/development.md`, "The request reader"):
///
/// - lines end with CRLF, never a bare LF or CR; no NUL or other control byte anywhere in a head;
/// - the request line is `method SP target SP HTTP/D.D`, with single spaces; a target of visible
///   ASCII in one of RFC 9112's four forms, without a fragment; a method llhttp knows (another
///   token is `unknownMethod`); version 1.x (`HTTP/1.2` and later minors read as 1.1, RFC 9110,
///   2.5; another major is `unsupportedVersion`);
/// - a field is `token ":" OWS value OWS`: no whitespace before the colon, no line folding, a
///   value of visible ASCII, obs-text, spaces and tabs;
/// - one `Content-Length` at most, all digits; `Transfer-Encoding` only as `chunked`, once, and
///   never beside a `Content-Length`;
/// - chunk sizes are hexadecimal without whitespace, chunk extensions `;token[=token|quoted]`,
///   each chunk's data ends with CRLF, trailers are fields (read, checked and dropped).
///
/// It does not stop after an upgrade offer or a CONNECT (llhttp does): upgrades are not taken,
/// so what follows is the next request.
///
/// A head's bytes are kept by the caller until the whole head is read (``parse(_:emit:)`` does
/// not consume them before), so the head is handed over in one piece with ranges into it. Heads
/// are scanned once, as their bytes arrive: a byte-a-packet client costs what any other does.
struct HTTPRequestParser {
    /// The largest a request may be, as the connection's limits set it.
    struct Limits {
        /// Bytes of a request target.
        var maxTargetLength: Int
        /// Bytes of a head's field lines (or a chunked body's trailer lines), line ends included.
        var maxFieldBytes: Int
    }

    /// Why bytes are not a request. The parser reads nothing more after one.
    enum Failure: Error, Equatable {
        /// Not HTTP/1.1 as RFC 9112 writes it (400).
        case malformed
        /// A well-formed request line with a method that is not HTTP's (501).
        case unknownMethod
        /// A well-formed request line of another major version (505).
        case unsupportedVersion
        /// The target is longer than ``Limits/maxTargetLength`` (414).
        case targetTooLong
        /// The field lines are longer than ``Limits/maxFieldBytes`` (431).
        case fieldsTooLarge
        /// A transfer coding other than `chunked` (501, RFC 9112, 6.1).
        case unsupportedTransferCoding
        /// A `Content-Length` an `Int` cannot hold: larger than any body is (413).
        case lengthTooLarge
    }

    /// A request's head. Ranges are into the head's bytes, as ``Event/head(_:_:)`` gives them.
    struct Head {
        var method: Method
        var target: Range<Int>
        /// 0 or 1: `HTTP/1.2` and later are read as 1.1.
        var minorVersion: Int
        var fields: [Field]
        var body: Body
    }

    struct Field {
        var name: Range<Int>
        /// Without the whitespace around it.
        var value: Range<Int>
    }

    /// How a request's body is framed.
    enum Body: Equatable {
        case none
        /// `Content-Length`.
        case length(Int)
        case chunked
    }

    /// What the bytes held.
    enum Event {
        /// A whole head, and its bytes (valid during the call only).
        case head(Head, UnsafeRawBufferPointer)
        /// Body bytes: the range of the bytes given to ``parse(_:emit:)``.
        case body(Range<Int>)
        /// The request's end.
        case end
    }

    private enum State {
        /// Before a request line: empty lines (CRLF) are skipped, as RFC 9112, 2.2 asks.
        case start
        /// In the request line, at one of its parts.
        case requestLine(LinePart)
        /// In the field lines.
        case fields
        /// In a body with this many bytes left.
        case body(remaining: Int)
        /// In a chunk's size line.
        case chunkSize
        /// In a chunk's data, with this many bytes left.
        case chunkData(remaining: Int)
        /// At the CRLF after a chunk's data.
        case chunkEnd
        /// In the trailer lines after the last chunk.
        case trailers
        case failed(Failure)
    }

    private enum LinePart {
        case method
        case target
        /// At this byte of `HTTP/D.D\r\n`.
        case version(Int)
    }

    private let limits: Limits
    private var state = State.start
    /// Where the head, or the chunk-size or trailer line being read, begins (in the bytes kept).
    private var lineStart = 0
    /// How far the bytes kept were scanned.
    private var scanned = 0
    /// How far the line being read (from ``scanned``) was searched for its end.
    private var searched = 0
    /// What is known of the head being read, relative to its start.
    private var head = Head(method: .GET, target: 0..<0, minorVersion: 1, fields: [], body: .none)
    private var methodIsKnown = true
    private var fieldsStart = 0
    private var sawLength = false
    private var sawTransferEncoding = false

    init(limits: Limits) {
        self.limits = limits
    }

    /// Reads `bytes`: the bytes given before and not consumed, followed by new ones. Hands each
    /// event to `emit`, which returns false to stop reading (for now).
    /// - Returns: how many of `bytes` were consumed. The caller drops them and gives the rest
    ///   again, with what arrives next.
    mutating func parse(
        _ bytes: UnsafeRawBufferPointer, emit: (Event) -> Bool
    ) throws(Failure) -> Int {
        var consumed = 0
        defer {
            // What is kept is given again from its first byte.
            lineStart -= consumed
            scanned -= consumed
            searched = max(searched - consumed, 0)
        }
        do throws(Failure) {
            while true {
                switch state {
                case .failed(let failure):
                    throw failure
                case .start:
                    guard scanned < bytes.count else { return consumed }
                    if bytes[scanned] == .cr {
                        guard scanned + 1 < bytes.count else { return consumed }
                        guard bytes[scanned + 1] == .lf else { throw Failure.malformed }
                        scanned += 2
                        consumed = scanned
                        continue
                    }
                    beginHead()
                case .requestLine(let part):
                    guard try readRequestLine(bytes, from: part) else { return consumed }
                case .fields:
                    guard let end = try readFieldLines(bytes, from: lineStart + fieldsStart, isTrailer: false) else { return consumed }
                    head.body = try framing()
                    let headBytes = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<end])
                    consumed = end
                    scanned = end
                    switch head.body {
                    case .none: state = .start
                    case .length(let length): state = .body(remaining: length)
                    case .chunked: state = .chunkSize
                    }
                    guard emit(.head(head, headBytes)) else { return consumed }
                    if case .start = state, !emit(.end) { return consumed }
                case .body(let remaining):
                    guard let range = take(remaining, of: bytes) else { return consumed }
                    consumed = scanned
                    state = range.count == remaining ? .start : .body(remaining: remaining - range.count)
                    guard emit(.body(range)) else { return consumed }
                    if case .start = state, !emit(.end) { return consumed }
                case .chunkSize:
                    guard let size = try readChunkSize(bytes) else { return consumed }
                    consumed = scanned
                    if size == 0 {
                        lineStart = consumed
                        state = .trailers
                    } else {
                        state = .chunkData(remaining: size)
                    }
                case .chunkData(let remaining):
                    guard let range = take(remaining, of: bytes) else { return consumed }
                    consumed = scanned
                    state = range.count == remaining ? .chunkEnd : .chunkData(remaining: remaining - range.count)
                    guard emit(.body(range)) else { return consumed }
                case .chunkEnd:
                    guard scanned + 1 < bytes.count else { return consumed }
                    guard bytes[scanned] == .cr, bytes[scanned + 1] == .lf else { throw Failure.malformed }
                    scanned += 2
                    consumed = scanned
                    state = .chunkSize
                case .trailers:
                    guard let end = try readFieldLines(bytes, from: lineStart, isTrailer: true) else { return consumed }
                    consumed = end
                    scanned = end
                    state = .start
                    guard emit(.end) else { return consumed }
                }
            }
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// A head begins at ``scanned``: nothing is known of it yet.
    private mutating func beginHead() {
        lineStart = scanned
        head.method = .GET
        head.target = 0..<0
        head.minorVersion = 1
        // Its array's storage is kept: the last head was handed over and let go of.
        head.fields.removeAll(keepingCapacity: true)
        head.body = .none
        methodIsKnown = true
        sawLength = false
        sawTransferEncoding = false
        state = .requestLine(.method)
    }

    /// Up to `remaining` bytes of a body from ``scanned``, scanned; nil when none has arrived.
    private mutating func take(_ remaining: Int, of bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        let available = min(bytes.count - scanned, remaining)
        guard available > 0 else { return nil }
        defer { scanned += available }
        return scanned..<(scanned + available)
    }

    // MARK: The request line

    /// Reads on in the request line; true once it is whole.
    private mutating func readRequestLine(_ bytes: UnsafeRawBufferPointer, from part: LinePart) throws(Failure) -> Bool {
        var part = part
        var index = scanned
        while index < bytes.count {
            let byte = bytes[index]
            switch part {
            case .method:
                if byte == .space {
                    let method = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index])
                    guard !method.isEmpty else { throw .malformed }
                    if let known = Method(method) { head.method = known } else { methodIsKnown = false }
                    head.target = (index + 1 - lineStart)..<(index + 1 - lineStart)
                    part = .target
                } else {
                    guard Self.isTokenByte(byte), index - lineStart < Method.longestUnknown else { throw .malformed }
                }
            case .target:
                if byte == .space {
                    let target = UnsafeRawBufferPointer(rebasing: bytes[(lineStart + head.target.lowerBound)..<index])
                    guard Self.isValidTarget(target, connect: methodIsKnown && head.method == .CONNECT) else { throw .malformed }
                    part = .version(0)
                } else {
                    guard (0x21...0x7E).contains(byte) else { throw .malformed }
                    head.target = head.target.lowerBound..<(index + 1 - lineStart)
                    guard head.target.count <= limits.maxTargetLength else { throw .targetTooLong }
                }
            case .version(let at):
                switch at {
                case 0...4: guard byte == Self.httpSlash[at] else { throw .malformed }
                case 5, 7: guard Self.isDigit(byte) else { throw .malformed }
                case 6: guard byte == .dot else { throw .malformed }
                case 8: guard byte == .cr else { throw .malformed }
                default:
                    guard byte == .lf else { throw .malformed }
                    // `D.D\r\n`
                    let major = bytes[index - 4] - .asciiZero
                    let minor = Int(bytes[index - 2] - .asciiZero)
                    guard major == 1 else { throw .unsupportedVersion }
                    guard methodIsKnown else { throw .unknownMethod }
                    head.minorVersion = min(minor, 1)
                    scanned = index + 1
                    fieldsStart = scanned - lineStart
                    state = .fields
                    return true
                }
                part = .version(at + 1)
            }
            index += 1
        }
        scanned = index
        state = .requestLine(part)
        return false
    }

    /// RFC 9112, 3.2's forms of a target (visible ASCII already): origin-form (`/path?query`),
    /// absolute-form (`scheme://authority/path?query`, a scheme of letters as llhttp has it),
    /// asterisk-form (`*`), and for CONNECT only, authority-form (`host:port`). Fragments are not
    /// sent (RFC 9112, 3.2), and an authority holds one `@` at most.
    private static func isValidTarget(_ target: UnsafeRawBufferPointer, connect: Bool) -> Bool {
        guard !target.isEmpty else { return false }
        if connect { return isAuthority(target[...]) }
        if target.count == 1, target[0] == UInt8(ascii: "*") { return true }
        if target[0] == UInt8(ascii: "/") { return !target.contains(UInt8(ascii: "#")) }
        var index = 0
        while index < target.count, isLetter(target[index]) { index += 1 }
        guard index > 0, target[index...].starts(with: "://".utf8) else { return false }
        let authority = index + 3
        index = authority
        while index < target.count, target[index] != UInt8(ascii: "/"), target[index] != UInt8(ascii: "?") { index += 1 }
        return isAuthority(target[authority..<index]) && !target[index...].contains(UInt8(ascii: "#"))
    }

    /// Not empty, of RFC 3986's authority characters (unreserved, sub-delims, `:`, `@`, `[`, `]`,
    /// `%`), with one `@` at most.
    private static func isAuthority(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        var ats = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "@"):
                ats += 1
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
                UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"),
                UInt8(ascii: "%"):
                continue
            default:
                return false
            }
        }
        return !bytes.isEmpty && ats <= 1
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    // MARK: Field lines

    /// Reads on in the field lines that begin at `sectionStart` (a head's, or a chunked body's
    /// trailers, which are checked and dropped) up to the empty line that ends them; the index
    /// after it once they are whole.
    private mutating func readFieldLines(
        _ bytes: UnsafeRawBufferPointer, from sectionStart: Int, isTrailer: Bool
    ) throws(Failure) -> Int? {
        while true {
            guard let lineEnd = bytes[max(scanned, searched)...].firstIndex(of: .lf) else {
                guard bytes.count - sectionStart <= limits.maxFieldBytes else { throw .fieldsTooLarge }
                searched = bytes.count
                return nil
            }
            guard lineEnd + 1 - sectionStart <= limits.maxFieldBytes else { throw .fieldsTooLarge }
            guard lineEnd > scanned, bytes[lineEnd - 1] == .cr else { throw .malformed }
            let line = scanned..<(lineEnd - 1)
            scanned = lineEnd + 1
            if line.isEmpty { return scanned }
            let field = try Self.readField(bytes, line)
            guard !isTrailer else { continue }
            try note(field, in: bytes)
            head.fields.append(Field(name: field.name.shifted(by: -lineStart), value: field.value.shifted(by: -lineStart)))
        }
    }

    /// One field line: `token ":" OWS value OWS`.
    private static func readField(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(Failure) -> Field {
        var index = line.lowerBound
        while index < line.upperBound, bytes[index] != .colon {
            guard isTokenByte(bytes[index]) else { throw .malformed }
            index += 1
        }
        guard index < line.upperBound, index > line.lowerBound else { throw .malformed }
        let name = line.lowerBound..<index
        index += 1
        while index < line.upperBound, bytes[index] == .space || bytes[index] == .tab { index += 1 }
        var end = index
        var scan = index
        while scan < line.upperBound {
            let byte = bytes[scan]
            guard byte >= 0x20 && byte != 0x7F || byte == .tab else { throw .malformed }
            scan += 1
            if byte != .space, byte != .tab { end = scan }
        }
        return Field(name: name, value: index..<end)
    }

    /// Notes a field that frames the body.
    private mutating func note(_ field: Field, in bytes: UnsafeRawBufferPointer) throws(Failure) {
        let name = UnsafeRawBufferPointer(rebasing: bytes[field.name])
        let value = UnsafeRawBufferPointer(rebasing: bytes[field.value])
        if Self.equalsIgnoringCase(name, "content-length") {
            guard !sawLength, !value.isEmpty, value.allSatisfy(Self.isDigit) else { throw .malformed }
            sawLength = true
            var length = 0
            for digit in value {
                let (times, overflow) = length.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int(digit - .asciiZero))
                guard !overflow, !overflow2 else { throw .lengthTooLarge }
                length = sum
            }
            head.body = .length(length)
        } else if Self.equalsIgnoringCase(name, "transfer-encoding") {
            guard !sawTransferEncoding else { throw .malformed }
            sawTransferEncoding = true
            guard Self.equalsIgnoringCase(value, "chunked") else { throw .unsupportedTransferCoding }
        }
    }

    /// The body's framing, once the head is whole.
    private func framing() throws(Failure) -> Body {
        // RFC 9112, 6.3: both would be a smuggling attempt (or a broken client).
        guard !(sawLength && sawTransferEncoding) else { throw .malformed }
        if sawTransferEncoding { return .chunked }
        if case .length(let length) = head.body, length > 0 { return .length(length) }
        return .none
    }

    // MARK: Chunks

    /// Reads a chunk-size line (`HEX [; ext] CRLF`) from ``scanned``; its size once whole.
    private mutating func readChunkSize(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int? {
        guard let lineEnd = bytes[scanned...].firstIndex(of: .lf) else {
            guard bytes.count - scanned <= Self.maxChunkLine else { throw .malformed }
            return nil
        }
        guard lineEnd > scanned, bytes[lineEnd - 1] == .cr, lineEnd - scanned <= Self.maxChunkLine else { throw .malformed }
        var index = scanned
        let end = lineEnd - 1
        var size = 0
        while index < end, let digit = Self.hexValue(bytes[index]) {
            guard size <= (Int.max - 15) / 16 else { throw .malformed }
            size = size * 16 + digit
            index += 1
        }
        guard index > scanned else { throw .malformed }
        try Self.readChunkExtensions(bytes, index..<end)
        scanned = lineEnd + 1
        return size
    }

    /// `*( ";" token [ "=" ( token / quoted-string ) ] )`, with no whitespace.
    private static func readChunkExtensions(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws(Failure) {
        var index = range.lowerBound
        func token() throws(Failure) {
            let start = index
            while index < range.upperBound, isTokenByte(bytes[index]) { index += 1 }
            guard index > start else { throw .malformed }
        }
        while index < range.upperBound {
            guard bytes[index] == .semicolon else { throw .malformed }
            index += 1
            try token()
            guard index < range.upperBound, bytes[index] == .equals else { continue }
            index += 1
            guard index < range.upperBound, bytes[index] == .quote else {
                try token()
                continue
            }
            index += 1
            while true {
                guard index < range.upperBound else { throw .malformed }
                let byte = bytes[index]
                index += 1
                if byte == .quote { break }
                if byte == .backslash {
                    guard index < range.upperBound, isQuotable(bytes[index]) else { throw .malformed }
                    index += 1
                } else {
                    guard isQuotable(byte) else { throw .malformed }
                }
            }
        }
    }

    /// A chunk-size line's longest (with its extensions).
    private static let maxChunkLine = 1024

    // MARK: Bytes

    private static let httpSlash: [UInt8] = Array("HTTP/".utf8)

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// What a quoted string holds: `qdtext` or what a backslash escapes.
    private static func isQuotable(_ byte: UInt8) -> Bool {
        byte == .tab || (byte >= 0x20 && byte != 0x7F)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8.asciiZero...UInt8(ascii: "9")).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    /// `bytes` spell `lowercase` (given in lowercase), in any case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let lower = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard lower == expected[index] else { return false }
        }
        return true
    }
}

extension HTTPRequestParser {
    /// The methods llhttp reads in an HTTP request (its `METHODS_HTTP`, and `QUERY`).
    enum Method: String, CaseIterable {
        case DELETE, GET, HEAD, POST, PUT, CONNECT, OPTIONS, TRACE, COPY, LOCK, MKCOL, MOVE, PROPFIND, PROPPATCH, SEARCH,
            UNLOCK, BIND, REBIND, UNBIND, ACL, REPORT, MKACTIVITY, CHECKOUT, MERGE, MSEARCH = "M-SEARCH", NOTIFY,
            SUBSCRIBE, UNSUBSCRIBE, PATCH, PURGE, MKCALENDAR, LINK, UNLINK, SOURCE, QUERY

        /// A method token longer than this is refused as malformed rather than unknown.
        static let longestUnknown = 32

        /// The method these bytes name, case-sensitively (RFC 9110, 9.1).
        init?(_ bytes: UnsafeRawBufferPointer) {
            // The common ones first, without a table.
            switch bytes.count {
            case 3 where bytes[0] == UInt8(ascii: "G") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "T"):
                self = .GET
                return
            case 4
            where bytes[0] == UInt8(ascii: "P") && bytes[1] == UInt8(ascii: "O") && bytes[2] == UInt8(ascii: "S")
                && bytes[3] == UInt8(ascii: "T"):
                self = .POST
                return
            default:
                break
            }
            for method in Self.allCases where method.rawValue.utf8.elementsEqual(bytes) {
                self = method
                return
            }
            return nil
        }
    }
}

extension Range<Int> {
    fileprivate func shifted(by offset: Int) -> Range<Int> {
        (lowerBound + offset)..<(upperBound + offset)
    }
}

extension UInt8 {
    fileprivate static let cr = UInt8(ascii: "\r")
    fileprivate static let lf = UInt8(ascii: "\n")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let semicolon = UInt8(ascii: ";")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let dot = UInt8(ascii: ".")
    fileprivate static let asciiZero = UInt8(ascii: "0")
}
