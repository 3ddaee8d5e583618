/// Parses JSON bytes into ``JSONNode``s, strictly (RFC 8259: no comments, no trailing commas,
/// no duplicate keys), with limits on size and nesting so a hostile or broken file gets a clear
/// error and never a crash or a hang.
public struct JSONParser {
    /// A syntax error: the byte offset where parsing stopped and what was expected there.
    public struct SyntaxError: Error, Sendable, Equatable {
        public var offset: Int
        public var message: String
    }

    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// The largest integer magnitude a JSON number keeps exactly (2^53): numbers are doubles.
    public static let maximumExactInteger = 9_007_199_254_740_992

    private let bytes: [UInt8]
    private let exactIntegers: Bool
    private var index = 0
    private var depth = 0

    private init(bytes: [UInt8], exactIntegers: Bool) {
        self.bytes = bytes
        self.exactIntegers = exactIntegers
    }

    /// Parses a whole document: exactly one value, surrounded by optional white space.
    /// - Parameter exactIntegers: refuse an integer beyond ±2^53 (``maximumExactInteger``) rather
    ///   than read it as the nearest double (`9007199254740993` would become `...992`): for what a
    ///   client sends, which must reach an upstream as it was written.
    public static func parse(_ bytes: [UInt8], exactIntegers: Bool = false) throws(SyntaxError) -> JSONNode {
        var parser = JSONParser(bytes: bytes, exactIntegers: exactIntegers)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        guard parser.index < bytes.count else {
            throw SyntaxError(offset: parser.index, message: "the file is empty; a JSON document was expected")
        }
        let node = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else {
            throw SyntaxError(
                offset: parser.index, message: "unexpected \(parser.describeCurrent()) after the end of the document"
            )
        }
        return node
    }

    private mutating func parseValue() throws(SyntaxError) -> JSONNode {
        guard index < bytes.count else {
            throw SyntaxError(offset: index, message: "the document ends early (truncated?); a value was expected")
        }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return JSONNode(kind: .string(try parseString()), offset: start)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return JSONNode(kind: .bool(true), offset: start)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return JSONNode(kind: .bool(false), offset: start)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return JSONNode(kind: .null, offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(kind: .number(try parseNumber()), offset: start)
        default:
            throw SyntaxError(offset: index, message: "unexpected \(describeCurrent()); a value was expected")
        }
    }

    private mutating func enterContainer() throws(SyntaxError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw SyntaxError(
                offset: index,
                message: "nesting is deeper than \(Self.maximumDepth) levels; flatten the document"
            )
        }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONNode {
        let start = index
        try enterContainer()
        index += 1
        var members: [JSONNode.Member] = []
        var seen: Set<String> = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return JSONNode(kind: .object([]), offset: start)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                if index >= bytes.count {
                    throw SyntaxError(offset: index, message: "the document ends inside an object (truncated?)")
                }
                throw SyntaxError(
                    offset: index,
                    message: "unexpected \(describeCurrent()); a member name in double quotes was expected"
                        + (peek() == UInt8(ascii: "}") ? " (remove the trailing comma)" : "")
                )
            }
            let keyOffset = index
            let key = try parseString()
            guard seen.insert(key).inserted else {
                throw SyntaxError(offset: keyOffset, message: "duplicate key \"\(key)\"; keep one of them")
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw SyntaxError(offset: index, message: "unexpected \(describeCurrent()); ':' was expected after \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONNode.Member(key: key, keyOffset: keyOffset, value: value))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return JSONNode(kind: .object(members), offset: start)
            case nil:
                throw SyntaxError(offset: index, message: "the document ends inside an object (truncated?); '}' was expected")
            default:
                throw SyntaxError(offset: index, message: "unexpected \(describeCurrent()); ',' or '}' was expected")
            }
        }
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONNode {
        let start = index
        try enterContainer()
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return JSONNode(kind: .array([]), offset: start)
        }
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                throw SyntaxError(offset: index, message: "unexpected ']'; a value was expected (remove the trailing comma)")
            }
            elements.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return JSONNode(kind: .array(elements), offset: start)
            case nil:
                throw SyntaxError(offset: index, message: "the document ends inside an array (truncated?); ']' was expected")
            default:
                throw SyntaxError(offset: index, message: "unexpected \(describeCurrent()); ',' or ']' was expected")
            }
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        let start = index
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ end: Int) throws(SyntaxError) {
            guard runStart < end else { return }
            guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw SyntaxError(offset: runStart, message: "the text is not valid UTF-8; save the file as UTF-8")
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while true {
            guard index < bytes.count else {
                throw SyntaxError(offset: start, message: "this string is never closed (truncated?); add the closing '\"'")
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                try flushRun(index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRun(index)
                index += 1
                scalars.append(try parseEscape())
                runStart = index
            case 0..<0x20:
                throw SyntaxError(
                    offset: index,
                    message: "a control character (such as a raw line break) is inside a string; write it as an escape like \\n"
                )
            default:
                index += 1
            }
        }
    }

    private mutating func parseEscape() throws(SyntaxError) -> Unicode.Scalar {
        guard index < bytes.count else {
            throw SyntaxError(offset: index, message: "the document ends inside an escape sequence (truncated?)")
        }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let escapeStart = index - 2
            let high = try parseHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard bytes[index...].starts(with: Array("\\u".utf8)) else {
                    throw SyntaxError(offset: escapeStart, message: "a lone UTF-16 surrogate \\u escape; pair it or remove it")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                else {
                    throw SyntaxError(offset: escapeStart, message: "an invalid UTF-16 surrogate pair in a \\u escape")
                }
                return scalar
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw SyntaxError(offset: escapeStart, message: "a lone UTF-16 surrogate \\u escape; pair it or remove it")
            }
            return scalar
        default:
            throw SyntaxError(
                offset: index - 2, message: "an unknown escape sequence; use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX"
            )
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = Self.hexValue(bytes[index]) else {
                throw SyntaxError(offset: index, message: "a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// The value of a hexadecimal digit (`0`-`9`, `a`-`f`, `A`-`F`); shared with the server's
    /// percent-decoding of query strings.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private mutating func parseNumber() throws(SyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if peek() == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw SyntaxError(offset: start, message: "a number needs digits after '-'") }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw SyntaxError(offset: start, message: "a number may not start with 0; remove the leading zeros")
        }
        let integerEnd = index
        if exactIntegers, peek() != UInt8(ascii: "."), peek() != UInt8(ascii: "e"), peek() != UInt8(ascii: "E") {
            let text = String(decoding: bytes[start..<integerEnd], as: UTF8.self)
            guard let integer = Int(text), integer.magnitude <= Self.maximumExactInteger else {
                throw SyntaxError(
                    offset: start,
                    message:
                        "the integer \(text) is beyond ±2^53 (\(Self.maximumExactInteger)), where JSON numbers stay exact; send it as a string"
                )
            }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw SyntaxError(offset: index, message: "a number needs digits after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw SyntaxError(offset: index, message: "a number needs digits in its exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else {
            throw SyntaxError(offset: start, message: "the number \(text) is too large to represent")
        }
        return number
    }

    private mutating func expectLiteral(_ literal: String) throws(SyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes[index...].starts(with: expected) else {
            throw SyntaxError(
                offset: index, message: "unexpected \(describeCurrent()); did you mean \(literal)? (strings need double quotes)")
        }
        index += expected.count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func describeCurrent() -> String {
        guard let byte = peek() else { return "end of the document" }
        if byte == UInt8(ascii: "/") { return "'/' (JSON has no comments)" }
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = Array("0123456789ABCDEF")
        return "byte 0x\(hex[Int(byte >> 4)])\(hex[Int(byte & 0x0F)])"
    }
}
