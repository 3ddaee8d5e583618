import NIOHTTP1

/// A request's W3C trace context (`traceparent`, `tracestate`), read as W3C Trace Context
/// (level 1) says, so that only well-formed context is continued, passed on or handed to the
/// tracer; what is malformed is refused and left out, never repeated or logged.
///
/// - `traceparent`: one header of version `00`, lowercase hex ids that are not all zero; absent,
///   repeated or malformed, it is refused and the request starts a trace of its own.
/// - `tracestate`: read only beside a valid `traceparent`; repeated headers are one list joined
///   by commas; empty members and the spaces around members are dropped; at most 32 members,
///   each `key=value` with a key of lowercase letters, digits and `_-*/` (a simple key of up to
///   256, or `tenant@system` of up to 241 and 14) and a value of up to 256 printable ASCII
///   characters other than `,` and `=`, not ending in a space; keys unique. A list that breaks any
///   of these is refused whole. A list longer than 512 bytes loses its members of more than 128
///   first, then its last members, until it fits.
struct TraceContextHeaders: Sendable {
    /// Which header was refused.
    enum Refusal: String, Sendable {
        case traceParent = "traceparent"
        case traceState = "tracestate"
    }

    /// The `traceparent`, when there is one valid one.
    var traceParent: String?
    /// The `tracestate` list, normalised (`key=value` members joined by `,`), when valid.
    var traceState: String?
    /// The header refused, if one was (`traceparent` before `tracestate`).
    var refused: Refusal?

    /// Bytes of `tracestate` passed on at most; longer lists are truncated as the spec says.
    static let maxTraceStateBytes = 512

    /// A request without a trace context.
    init() {}

    init(_ headers: HTTPHeaders) {
        // Most requests carry none: that costs one scan of the headers, and no array.
        guard let parent = headers.first(name: "traceparent") else { return }
        guard Self.isTraceParent(parent), headers["traceparent"].count == 1 else {
            refused = .traceParent
            return
        }
        traceParent = parent
        let states = headers["tracestate"]
        guard !states.isEmpty else { return }
        if let members = Self.traceStateMembers(states.joined(separator: ",")) {
            let kept = Self.truncated(members)
            traceState = kept.isEmpty ? nil : kept.joined(separator: ",")
        } else {
            refused = .traceState
        }
    }

    /// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, ids not all zero.
    static func isTraceParent(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
            bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "0")
        else { return false }
        let hex = { (range: Range<Int>) in bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        let zero = { (range: Range<Int>) in bytes[range].allSatisfy { $0 == UInt8(ascii: "0") } }
        return hex(3..<35) && hex(36..<52) && hex(53..<55) && !zero(3..<35) && !zero(36..<52)
    }

    /// The members of a `tracestate` list, each `key=value` with the spaces around it dropped;
    /// nil when the list is not valid.
    static func traceStateMembers(_ list: String) -> [Substring]? {
        var members: [Substring] = []
        var keys: Set<Substring> = []
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        for raw in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let first = raw.firstIndex(where: { !isSpace($0) }), let last = raw.lastIndex(where: { !isSpace($0) }) else {
                continue  // an empty member, which the list's grammar allows
            }
            let text = raw[first...last]
            guard let equals = text.firstIndex(of: "="), isKey(text[..<equals].utf8),
                isValue(text[text.index(after: equals)...].utf8), keys.insert(text[..<equals]).inserted
            else { return nil }
            members.append(text)
        }
        return members.count <= 32 ? members : nil
    }

    /// What W3C allows of a list over the size passed on: members of more than 128 bytes go
    /// first, then members from the end.
    private static func truncated(_ members: [Substring]) -> [Substring] {
        func size(_ members: [Substring]) -> Int { members.reduce(max(members.count - 1, 0)) { $0 + $1.utf8.count } }
        var kept = members
        guard size(kept) > maxTraceStateBytes else { return kept }
        kept.removeAll { $0.utf8.count > 128 }
        while size(kept) > maxTraceStateBytes { kept.removeLast() }
        return kept
    }

    /// `lcalpha 0*255(lcalpha / DIGIT / "_" / "-"/ "*" / "/")`, or
    /// `(lcalpha / DIGIT) 0*240(...) "@" lcalpha 0*13(...)`.
    private static func isKey(_ key: Substring.UTF8View) -> Bool {
        let isLower = { (byte: UInt8) in (0x61...0x7A).contains(byte) }
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        let isRest = { (byte: UInt8) in isLower(byte) || isDigit(byte) || "_-*/".utf8.contains(byte) }
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else {
            guard let first = key.first, isLower(first), key.count <= 256 else { return false }
            return key.dropFirst().allSatisfy(isRest)
        }
        let tenant = key[..<at]
        let system = key[key.index(after: at)...]
        guard let tenantFirst = tenant.first, isLower(tenantFirst) || isDigit(tenantFirst), tenant.count <= 241,
            let systemFirst = system.first, isLower(systemFirst), system.count <= 14
        else { return false }
        return tenant.dropFirst().allSatisfy(isRest) && system.dropFirst().allSatisfy(isRest)
    }

    /// `0*255(chr) nblk-chr`: printable ASCII but `,` and `=`, the last not a space.
    private static func isValue(_ value: Substring.UTF8View) -> Bool {
        guard let last = value.last, last != UInt8(ascii: " "), value.count <= 256 else { return false }
        return value.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }
}

extension TraceContextHeaders: CustomStringConvertible {
    /// Names the headers without their values: a tracer that cannot read the context logs its
    /// carrier (swift-otel does), and no header value belongs in a log line.
    var description: String {
        [traceParent.map { _ in "traceparent" }, traceState.map { _ in "tracestate" }].compactMap { $0 }.joined(separator: ", ")
    }
}
