import Foundation
import NIOHTTP1

/// Reads HTTP header values as bytes: comma-separated lists (RFC 9110, 5.6.1) and ASCII
/// case-insensitive names. The head checks, conditional and content-coding checks of every request go through
/// here, so nothing allocates: no `split` arrays, no `Character` walks, no per-value `String`.
enum HeaderList {
    /// Calls `body` with each element of one header value's list, trimmed, empty ones skipped,
    /// until `body` returns true; says whether it did.
    static func containsElement(in value: String, where body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var value = value
        return value.withUTF8 { containsElement(in: $0, where: body) }
    }

    /// ``containsElement(in:where:)`` of a value's bytes.
    static func containsElement(in bytes: UnsafeBufferPointer<UInt8>, where body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var start = 0
        while start <= bytes.count {
            let comma = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
            let element = trimmed(UnsafeBufferPointer(rebasing: bytes[start..<comma]))
            if !element.isEmpty, body(element) { return true }
            start = comma + 1
        }
        return false
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }), let last = bytes.lastIndex(where: { !isWhitespace($0) })
        else { return UnsafeBufferPointer(rebasing: bytes[0..<0]) }
        return UnsafeBufferPointer(rebasing: bytes[first...last])
    }

    /// Whether two runs of bytes are the same, compared as memory (a generic walk of two
    /// collections a byte at a time costs several times more).
    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == other.count else { return false }
        guard let first = bytes.baseAddress, let second = other.baseAddress else { return true }
        return memcmp(first, second, bytes.count) == 0
    }

    /// ASCII case-insensitive equality with a lower-case literal.
    static func equalsIgnoringCase(_ text: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { equalsIgnoringCase(text, lowercase: $0) }
    }

    /// ASCII case-insensitive equality with lower-case bytes.
    static func equalsIgnoringCase(_ text: some Collection<UInt8>, lowercase: some Collection<UInt8>) -> Bool {
        text.count == lowercase.count
            && zip(text, lowercase).allSatisfy { byte, wanted in (byte | (byte >= 65 && byte <= 90 ? 0x20 : 0)) == wanted }
    }
}

/// The request fields a head is read for, told apart by their names' bytes (length first, then
/// ASCII case-insensitive bytes): the one classifier, of ``RequestFields``.
enum KnownField {
    case host
    case expect
    case upgrade
    case connection
    case requestID
    case ifNoneMatch
    case contentLength
    case acceptEncoding
    case acceptLanguage
    case taksiVersion
    case skeletonRevision
    case transferEncoding
    case taksiAlternative
    case traceParent

    /// Nil for a field the server does not act on.
    init?(name: some Collection<UInt8>) {
        switch name.count {
        case 4 where HeaderList.equalsIgnoringCase(name, "host"): self = .host
        case 6 where HeaderList.equalsIgnoringCase(name, "expect"): self = .expect
        case 7 where HeaderList.equalsIgnoringCase(name, "upgrade"): self = .upgrade
        case 10 where HeaderList.equalsIgnoringCase(name, "connection"): self = .connection
        case 11 where HeaderList.equalsIgnoringCase(name, "traceparent"): self = .traceParent
        case 12 where HeaderList.equalsIgnoringCase(name, "x-request-id"): self = .requestID
        case 13 where HeaderList.equalsIgnoringCase(name, "if-none-match"): self = .ifNoneMatch
        case 14 where HeaderList.equalsIgnoringCase(name, "content-length"): self = .contentLength
        case 15 where HeaderList.equalsIgnoringCase(name, "accept-encoding"): self = .acceptEncoding
        case 15 where HeaderList.equalsIgnoringCase(name, "accept-language"): self = .acceptLanguage
        case 15 where HeaderList.equalsIgnoringCase(name, "x-taksi-version"): self = .taksiVersion
        case 16 where HeaderList.equalsIgnoringCase(name, "x-taksi-skeleton"): self = .skeletonRevision
        case 17 where HeaderList.equalsIgnoringCase(name, "transfer-encoding"): self = .transferEncoding
        case 19 where HeaderList.equalsIgnoringCase(name, "x-taksi-alternative"): self = .taksiAlternative
        default: return nil
        }
    }
}
