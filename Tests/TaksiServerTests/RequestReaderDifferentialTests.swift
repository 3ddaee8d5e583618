import NIOCore
import NIOEmbedded
import NIOHTTP1
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The server's request reader (``RequestReader`` over ``HTTPRequestParser``) against llhttp, in the
/// copy NIO's `HTTPRequestDecoder` carries, on a corpus of real and hostile requests (the
/// request-smuggling literature's, every probe of the hardening suite) and seeded mutations of them.
/// A request the two read differently is a failure unless ours refused it: ours may be stricter,
/// never more lenient or different. Ours is fed each input in random splits as well as whole, and
/// must read the same either way.
///
/// Deliberate differences: `HTTP/1.2` and later 1.x are read as `HTTP/1.1` (RFC 9110, 2.5; applied
/// to llhttp's input), a field value's trailing whitespace is not part of it (RFC 9110, 5.5; llhttp
/// keeps it, so it is left out of both before comparing), and llhttp stops reading after an upgrade
/// offer or a CONNECT (we read on: upgrades are not taken), so nothing after such a request is
/// compared.
@Suite("Request reader against llhttp")
struct RequestReaderDifferentialTests {
    /// One request as a reader saw it.
    struct Message: Equatable, CustomStringConvertible {
        var method: String
        var uri: String
        var version: String
        var headers: [String]
        var body: [UInt8] = []
        var ended = false

        var description: String {
            "\(method) \(uri) \(version) \(headers) body \(body.count) bytes\(ended ? "" : " (not ended)")"
        }
    }

    /// What a reader made of some bytes.
    struct Reading: Equatable {
        var messages: [Message] = []
        /// The reader refused the bytes (after `messages`).
        var refused = false
    }

    static let limits = ConnectionLimits()

    // MARK: The readers

    /// llhttp's reading, through NIO's decoder.
    static func llhttp(_ input: [UInt8]) -> Reading {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish() }
        var reading = Reading()
        var bytes = channel.allocator.buffer(capacity: input.count)
        bytes.writeBytes(Self.asOurVersion(input))
        do {
            try channel.writeInbound(bytes)
        } catch {
            reading.refused = true
        }
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            Self.add(part, to: &reading)
        }
        return reading
    }

    /// Ours, the bytes given in pieces ending at `cuts`.
    static func ours(_ input: [UInt8], cuts: [Int] = []) -> Reading {
        var reader = RequestReader(limits: limits)
        var reading = Reading()
        var start = 0
        for end in cuts.filter({ $0 > 0 && $0 < input.count }).sorted() + [input.count] where end >= start {
            var piece = ByteBuffer()
            piece.writeBytes(input[start..<end])
            start = end
            do {
                try reader.read(piece) { part in
                    add(part, to: &reading)
                    return true
                }
            } catch {
                reading.refused = true
                break
            }
        }
        return reading
    }

    private static func add(_ part: RequestPart, to reading: inout Reading) {
        switch part {
        case .head(let head):
            add(
                HTTPServerRequestPart.head(
                    HTTPRequestHead(version: head.version, method: head.method, uri: head.uri, headers: head.headers)), to: &reading)
        case .body(let body):
            add(HTTPServerRequestPart.body(body), to: &reading)
        case .end:
            add(HTTPServerRequestPart.end(nil), to: &reading)
        }
    }

    private static func add(_ part: HTTPServerRequestPart, to reading: inout Reading) {
        switch part {
        case .head(let head):
            reading.messages.append(
                Message(
                    method: head.method.rawValue, uri: head.uri, version: "\(head.version.major).\(head.version.minor)",
                    // Ours leaves out the whitespace after a value as RFC 9110, 5.5 has it; llhttp keeps it.
                    headers: head.headers.map { "\($0.name): \($0.value.trimmingTrailingWhitespace)" }))
        case .body(let body):
            reading.messages[reading.messages.count - 1].body += Array(body.readableBytesView)
        case .end:
            reading.messages[reading.messages.count - 1].ended = true
        }
    }

    /// `HTTP/1.x` (x > 1) ending a line, as `HTTP/1.1`: what we read it as.
    static func asOurVersion(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        let pattern = Array(" HTTP/1.".utf8)
        var index = 0
        while index + pattern.count + 2 < bytes.count {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern),
                (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(bytes[index + pattern.count]),
                bytes[index + pattern.count + 1] == UInt8(ascii: "\r")
            {
                bytes[index + pattern.count] = UInt8(ascii: "1")
            }
            index += 1
        }
        return bytes
    }

    /// llhttp reads nothing after a request that offers an upgrade (or a CONNECT).
    static func offersUpgrade(_ message: Message) -> Bool {
        if message.method == "CONNECT" { return true }
        let names = message.headers.map { $0.prefix { $0 != ":" }.lowercased() }
        let connection = message.headers.filter { $0.lowercased().hasPrefix("connection:") }.joined(separator: ",").lowercased()
        return names.contains("upgrade") && connection.contains("upgrade")
    }

    /// Where ours reads differently from llhttp, other than by refusing; nil when it does not.
    static func difference(ours: Reading, llhttp: Reading) -> String? {
        for (index, message) in ours.messages.enumerated() {
            guard index < llhttp.messages.count else {
                return "ours read request \(index + 1) (\(message)); llhttp \(llhttp.refused ? "refused it" : "did not")"
            }
            let theirs = llhttp.messages[index]
            guard message.method == theirs.method, message.uri == theirs.uri, message.version == theirs.version,
                message.headers == theirs.headers
            else { return "request \(index + 1): ours \(message), llhttp \(theirs)" }
            // llhttp reads nothing more after an upgrade offer.
            if offersUpgrade(theirs) { return nil }
            if message.ended, !theirs.ended || message.body != theirs.body {
                return "request \(index + 1) ended: ours \(message), llhttp \(theirs)"
            }
            if !message.ended, !theirs.body.starts(with: message.body) {
                return "request \(index + 1)'s body: ours \(message), llhttp \(theirs)"
            }
        }
        return nil
    }

    // MARK: The corpus

    /// Real requests and hostile ones; each is also the seed of mutations.
    static let corpus: [String] = [
        // What clients send.
        "GET /screens/home HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        "GET /screens/home HTTP/1.1\r\nHost: a\r\nUser-Agent: Taksi/1.0 (iOS 17.4)\r\nAccept: application/json\r\nAccept-Encoding: gzip, deflate, br\r\nX-Taksi-Version: 2.3.0\r\nIf-None-Match: \"abc123\"\r\n\r\n",
        "GET /screens/home/data?name=Ada&city=S%C3%A3o+Paulo HTTP/1.1\r\nHost: a\r\nX-Taksi-User: u-42\r\nAccept-Language: pt-BR,pt;q=0.9\r\n\r\n",
        "HEAD /screens/home HTTP/1.1\r\nHost: a\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /screens/start HTTP/1.0\r\n\r\n",
        "GET /screens/start HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "GET http://example.com/screens/start HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "POST /screens/login/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 17\r\nIdempotency-Key: k-1\r\n\r\n{\"user\":\"ada\",\"a\"}",
        "POST /screens/login/actions/submit HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n\r\nuser=ada&",
        "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
        "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nA;name=\"quo\\\"ted\"\r\n0123456789\r\n0\r\nTrailer-Field: x\r\n\r\n",
        "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
        "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\nHEAD /c HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
        "\r\nGET /after-empty-line HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n",
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
        "GET /screens/start HTTP/1.2\r\nHost: a\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Spaces:   padded value \t \r\nX-Obs: caf\u{E9}\r\n\r\n",
        "PROPFIND /a HTTP/1.1\r\nHost: a\r\n\r\n",
        "M-SEARCH * HTTP/1.1\r\nHost: a\r\n\r\n",
        "QUERY /a HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
        // Refused: versions, methods, request lines.
        "GET /screens/start HTTP/2.0\r\nHost: a\r\n\r\n",
        "GET /screens/start HTTP/0.9\r\nHost: a\r\n\r\n",
        "BREW /screens/start HTTP/1.1\r\nHost: a\r\n\r\n",
        "get /screens/start HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET  /double-space HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /a  HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /a HTTP/1.1 \r\nHost: a\r\n\r\n",
        "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\nHost: a\n\n",
        "GET / HTTP/1.1\r\nHost: a\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\r\n\r\n",
        "GET / HTTP/1.1\rHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n\n",
        "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}",
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "GET\r\n\r\n",
        "GET /\r\n\r\n",
        // Refused: field lines.
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n",
        "GET / HTTP/1.1\r\n Host: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n\ttwo\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n: no-name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nNo-Colon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Nul: a\u{00}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Ctl: a\u{01}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Del: a\u{7F}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX(Paren): a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Bare-CR: a\rb\r\n\r\n",
        // Smuggling: lengths and codings (CL.TE, TE.CL, TE.TE and their obfuscations).
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        // Smuggling: chunks.
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;a\u{00}=b\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\nc\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 ; a=b\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\n\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n",
        // Limits.
        "GET /screens/" + String(repeating: "a", count: 9_000) + " HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\r\nCookie: " + String(repeating: "c", count: 40_000) + "\r\n\r\n",
    ]

    // MARK: Tests

    @Test("every request of the corpus is read as llhttp reads it, or refused, whole or in pieces")
    func corpus() {
        var random = SplitMix64(seed: 48)
        for text in Self.corpus {
            let input = Array(text.utf8)
            check(input, random: &random)
        }
    }

    @Test("seeded mutations of the corpus are read as llhttp reads them, or refused, whole or in pieces")
    func mutations() {
        var random = SplitMix64(seed: 0x7a6b_5e1d)
        var compared = 0
        var refusedByBoth = 0
        for text in Self.corpus where text.utf8.count < 2048 {
            let seed = Array(text.utf8)
            for _ in 0..<150 {
                var input = seed
                for _ in 0..<Int.random(in: 1...3, using: &random) { Self.mutate(&input, random: &random) }
                let (ours, theirs) = check(input, random: &random)
                compared += 1
                if ours.refused, theirs.refused { refusedByBoth += 1 }
            }
        }
        // The mutations reach both sides of the line (a test that cannot fail would not).
        #expect(refusedByBoth > compared / 10)
        #expect(refusedByBoth < compared * 9 / 10)
    }

    @Test("a byte at a time reads what the whole does: no head, chunk line or CRLF is read before it is whole")
    func byteAtATime() {
        for text in Self.corpus where text.utf8.count < 2048 {
            let input = Array(text.utf8)
            #expect(Self.ours(input, cuts: Array(1..<input.count)) == Self.ours(input), "\(text.debugDescription)")
        }
    }

    @Test("the reader's failures are the answers the connection gives")
    func failures() throws {
        func failure(_ text: String, limits: ConnectionLimits = ConnectionLimits()) -> HTTPRequestParser.Failure? {
            var reader = RequestReader(limits: limits)
            do {
                try reader.read(ByteBuffer(string: text)) { _ in true }
                return nil
            } catch {
                return error
            }
        }
        let short = ConnectionLimits.with {
            $0.maxURILength = 20
            $0.maxHeaderBytes = 100
        }
        #expect(failure("GET /" + String(repeating: "a", count: 30), limits: short) == .targetTooLong, "as soon as the target is over")
        #expect(failure("GET /a HTTP/1.1\r\nX: " + String(repeating: "a", count: 4300), limits: short) == .fieldsTooLarge)
        #expect(failure("BREW /screens/home HTTP/1.1\r\n") == .unknownMethod)
        #expect(failure("BREW /screens/home HTTP/1.1 \r\n") == .malformed, "unknown only when the line is well formed")
        #expect(failure("GET /screens/home HTTP/2.0\r\n") == .unsupportedVersion)
        #expect(failure("\u{16}\u{03}\u{01}") == .malformed, "bytes that are not HTTP are refused at once")
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n") == .unsupportedTransferCoding)
        #expect(failure("POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n") == .lengthTooLarge)
        #expect(failure("POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n") == nil, "Int.max is a length")
        #expect(failure("GET / HTTP/1.1\r\nHost: a\r\n") == nil, "a head not yet whole waits")
    }

    // MARK: Helpers

    /// Reads `input` with both, ours also in random pieces; records any difference.
    @discardableResult
    func check(_ input: [UInt8], random: inout SplitMix64) -> (ours: Reading, llhttp: Reading) {
        let whole = Self.ours(input)
        let theirs = Self.llhttp(input)
        let cuts = (0..<Int.random(in: 1...6, using: &random)).map { _ in Int.random(in: 0...max(input.count, 1), using: &random) }
        let pieces = Self.ours(input, cuts: cuts)
        let shown = String(decoding: input.prefix(300), as: UTF8.self).debugDescription
        #expect(pieces == whole, "read in pieces at \(cuts.sorted()): \(shown)")
        if let difference = Self.difference(ours: whole, llhttp: theirs) {
            Issue.record("\(difference)\n  input: \(shown)")
        }
        return (whole, theirs)
    }

    static let interestingBytes: [UInt8] = Array("\r\n \t:;=,\"\\-+0aA9fF".utf8) + [0x00, 0x01, 0x7F, 0x80, 0xFF]
    static let interestingPieces: [[UInt8]] = [
        "\r\n", "\r\n\r\n", "Transfer-Encoding: chunked\r\n", "Content-Length: 5\r\n", "Content-Length: 0\r\n", " chunked",
        "0\r\n\r\n", "5\r\nhello\r\n", "Connection: upgrade\r\nUpgrade: x\r\n", "HTTP/1.1", "\n", "\r",
    ].map { Array($0.utf8) }

    /// One random change: a byte replaced, inserted or removed, a piece inserted, a line repeated,
    /// the input cut short.
    static func mutate(_ input: inout [UInt8], random: inout SplitMix64) {
        guard !input.isEmpty else { return }
        let at = Int.random(in: 0..<input.count, using: &random)
        switch Int.random(in: 0..<7, using: &random) {
        case 0: input[at] = interestingBytes.randomElement(using: &random)!
        case 1: input.insert(interestingBytes.randomElement(using: &random)!, at: at)
        case 2: input.remove(at: at)
        case 3: input.insert(contentsOf: interestingPieces.randomElement(using: &random)!, at: at)
        case 4:
            // Repeat the line `at` is in.
            let start = input[..<at].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let end = input[at...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? input.count
            input.insert(contentsOf: Array(input[start..<end]), at: end)
        case 5: input.removeSubrange(at...)
        default:
            // A letter's case flipped.
            if (UInt8(ascii: "A")...UInt8(ascii: "z")).contains(input[at]) { input[at] ^= 0x20 }
        }
    }
}

extension String {
    fileprivate var trimmingTrailingWhitespace: String {
        String(decoding: utf8.reversed().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.reversed(), as: UTF8.self)
    }
}
