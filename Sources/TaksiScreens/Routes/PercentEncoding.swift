/// Percent-encoding (RFC 3986, 2.1) of path segments, query values and upstream templates.
public enum PercentEncoding {
    /// The characters that never need encoding anywhere in a URL: letters, digits, `-._~`.
    public static let unreserved = ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A set of bytes as a 256-bit map: a membership test is a shift and a mask (upstream URLs are
    /// encoded on every data request).
    public struct ByteSet: Sendable, Equatable {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        /// The UTF-8 bytes of `characters`.
        public init(_ characters: String) {
            for byte in characters.utf8 { insert(byte) }
        }

        public func contains(_ byte: UInt8) -> Bool {
            let bit = UInt64(1) << (byte & 63)
            switch byte >> 6 {
            case 0: return words.0 & bit != 0
            case 1: return words.1 & bit != 0
            case 2: return words.2 & bit != 0
            default: return words.3 & bit != 0
            }
        }

        public func union(_ other: ByteSet) -> ByteSet {
            var result = self
            result.words = (words.0 | other.words.0, words.1 | other.words.1, words.2 | other.words.2, words.3 | other.words.3)
            return result
        }

        private mutating func insert(_ byte: UInt8) {
            let bit = UInt64(1) << (byte & 63)
            switch byte >> 6 {
            case 0: words.0 |= bit
            case 1: words.1 |= bit
            case 2: words.2 |= bit
            default: words.3 |= bit
            }
        }

        public static func == (lhs: ByteSet, rhs: ByteSet) -> Bool {
            lhs.words == rhs.words
        }
    }

    /// `text` with every byte outside `allowed` written as `%XX` (its UTF-8 bytes, upper-case hex).
    public static func encode(_ text: String, allowed: ByteSet = unreserved) -> String {
        // Most values need no escape: the text is returned as it is, without a copy.
        if text.utf8.allSatisfy(allowed.contains) { return text }
        var output = [UInt8]()
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Why `text` cannot be decoded.
    public enum DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A `%` not followed by two hexadecimal digits.
        case malformedEscape
        /// The decoded bytes are not UTF-8 text.
        case notUTF8

        public var description: String {
            switch self {
            case .malformedEscape: "a '%' must be followed by two hexadecimal digits"
            case .notUTF8: "a percent-encoded value is not UTF-8"
            }
        }
    }

    /// `text` with its `%XX` escapes decoded (and `+` as a space when `plusIsSpace`, as in query strings).
    public static func decode(_ text: Substring, plusIsSpace: Bool = false) throws(DecodingError) -> String {
        var text = text
        return try text.withUTF8 { bytes in Result { () throws(DecodingError) in try decode(bytes, plusIsSpace: plusIsSpace) } }.get()
    }

    /// The text of UTF-8 `bytes` with their `%XX` escapes decoded (and `+` as a space when
    /// `plusIsSpace`).
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) throws(DecodingError) -> String {
        // Most segments and values hold no escape at all: one pass over the bytes says so.
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace:
                decoded.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(JSONParser.hexValue), let low = iterator.next().flatMap(JSONParser.hexValue) else {
                    throw .malformedEscape
                }
                decoded.append(high << 4 | low)
            default:
                decoded.append(byte)
            }
        }
        guard let string = String(validating: decoded, as: UTF8.self) else { throw .notUTF8 }
        return string
    }

    /// Whether `text` is already a valid encoded path segment: unreserved characters and `%XX` escapes only.
    public static func isEncodedSegment(_ text: Substring) -> Bool {
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            if unreserved.contains(byte) { continue }
            guard byte == UInt8(ascii: "%"), bytes.next().flatMap(JSONParser.hexValue) != nil,
                bytes.next().flatMap(JSONParser.hexValue) != nil
            else {
                return false
            }
        }
        return true
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
