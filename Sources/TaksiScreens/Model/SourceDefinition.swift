public import TaksiSchema

/// Where a screen's dynamic values come from, declared under `sources` in a screen file.
///
/// ```json
/// "sources": {
///   "profile": {"type": "fixture", "file": "fixtures/profile.json"},
///   "query":   {"type": "request", "parameters": {"name": {"default": "friend"}}}
/// }
/// ```
/// Each kind is resolved by the server; the definition here is what the screen file says.
public enum SourceDefinition: Sendable, Hashable {
    /// A constant value: inline (`value`) or read from a JSON file under the screens directory
    /// (`file`) at load time. Known at load, so screens whose sources are all fixtures have their
    /// data computed once, and checked, before anything is served.
    case fixture(JSONValue)
    /// The data request's query parameters, typed and with defaults.
    case request([String: RequestParameter])
    /// The screen's path parameters (`network` of `bikes/stations/{network}`), bound as the
    /// source named `path`; declared under the screen's `parameters`, never under `sources`.
    case path([String: RequestParameter])
    /// A GET to an upstream API; its value is the JSON response.
    case http(HTTPSource)

    /// The `type` names of the source kinds, as written in screen files.
    public static let kindNames = ["fixture", "request", "http"]

    /// Whether the value is known without a request.
    public var isStatic: Bool {
        if case .fixture = self { return true }
        return false
    }
}

/// One parameter a request carries: a query parameter a source reads, or a typed segment of a
/// screen's path.
public struct RequestParameter: Sendable, Hashable {
    /// The type a parameter's text is converted to.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case string, integer, number, bool
    }

    public var kind: Kind
    /// Used when the request does not carry the parameter.
    public var defaultValue: JSONValue?
    /// Whether a request without the parameter (and with no default) is a bad request (400).
    public var isRequired: Bool
    /// The only values accepted (`one_of`), or nil for any value of the kind.
    public var allowedValues: [JSONValue]?

    /// A regular expression the whole text must match (strings only).
    public var pattern: TextPattern?
    /// The fewest and most characters a string may have.
    public var minLength: Int?
    public var maxLength: Int?

    public init(
        kind: Kind = .string, defaultValue: JSONValue? = nil, isRequired: Bool = false, allowedValues: [JSONValue]? = nil,
        pattern: TextPattern? = nil, minLength: Int? = nil, maxLength: Int? = nil
    ) {
        self.kind = kind
        self.defaultValue = defaultValue
        self.isRequired = isRequired
        self.allowedValues = allowedValues
        self.pattern = pattern
        self.minLength = minLength
        self.maxLength = maxLength
    }

    /// The parameter's text converted to its kind; nil when it does not convert or is not allowed.
    public func convert(_ text: String) -> JSONValue? {
        guard let value = convertKind(text) else { return nil }
        if let allowedValues, !allowedValues.contains(value) { return nil }
        if kind == .string {
            if minLength != nil || maxLength != nil {
                let count = text.count
                if let minLength, count < minLength { return nil }
                if let maxLength, count > maxLength { return nil }
            }
            if let pattern, !pattern.matches(text) { return nil }
        }
        return value
    }

    /// What a request must send, for error messages: `integer`, `one of stars, forks`, or
    /// `a string of 1 to 40 characters matching [a-z0-9-]+`.
    public var expectation: String {
        if let allowedValues {
            return "one of " + allowedValues.map { $0.stringValue ?? JSONWriter.string($0) }.joined(separator: ", ")
        }
        guard kind == .string, minLength != nil || maxLength != nil || pattern != nil else { return kind.rawValue }
        var text = "string"
        switch (minLength, maxLength) {
        case (let low?, let high?): text += " of \(low) to \(high) characters"
        case (let low?, nil): text += " of at least \(low) characters"
        case (nil, let high?): text += " of at most \(high) characters"
        case (nil, nil): break
        }
        if let pattern { text += " matching \(pattern.source)" }
        return text
    }

    private func convertKind(_ text: String) -> JSONValue? {
        switch kind {
        case .string: return .string(text)
        case .integer:
            // Beyond ±2^53 a number is no longer exact (JSON numbers are doubles): refused, not rounded.
            guard let integer = Int(text), integer.magnitude <= JSONParser.maximumExactInteger else { return nil }
            return .number(Double(integer))
        case .number:
            guard let number = Double(text), number.isFinite else { return nil }
            return .number(number)
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes": return .bool(true)
            case "false", "0", "no": return .bool(false)
            default: return nil
            }
        }
    }

    /// Whether a JSON value (a default) has this parameter's kind.
    public func accepts(_ value: JSONValue) -> Bool {
        switch (kind, value) {
        case (.string, .string), (.number, .number), (.bool, .bool): true
        case (.integer, _): value.exactInteger != nil
        default: false
        }
    }
}

/// A regular expression that a parameter's whole text must match (`pattern` in screen files).
/// A class so the compiled expression is made once and shared; compared by its source text.
public final class TextPattern: Sendable, Hashable, CustomStringConvertible {
    /// The expression as written.
    public let source: String
    nonisolated(unsafe) private let regex: Regex<AnyRegexOutput>
    /// The same expression as a byte test, when it is one character class with a count (the
    /// usual shape of an id or a slug: `[a-z0-9-]+`, `\d{1,8}`): Swift's regex engine takes
    /// microseconds a match, and path parameters are matched on every request.
    private let repeatedClass: RepeatedClass?

    /// Compiles `source`; throws with the engine's message when it is not a regular expression.
    public init(_ source: String) throws {
        self.source = source
        self.regex = try Regex(source)
        self.repeatedClass = RepeatedClass(source)
    }

    /// Whether the whole of `text` matches (not just a part of it).
    public func matches(_ text: String) -> Bool {
        // The byte test agrees with the engine on ASCII text; other text goes to the engine, where
        // `\w` and `\d` take letters and digits of every script.
        if let repeatedClass, text.utf8.allSatisfy({ $0 < 0x80 }) { return repeatedClass.matches(text.utf8) }
        return (try? regex.wholeMatch(in: text)) != nil
    }

    /// One ASCII character class and how many times it repeats: `[...]`, `\d` or `\w`, then `+`,
    /// `*`, `?`, `{n}`, `{m,}` or `{m,n}`.
    struct RepeatedClass: Sendable {
        var members = [Bool](repeating: false, count: 128)
        var least: Int
        var most: Int

        /// Nil unless `source` has exactly that shape.
        init?(_ source: String) {
            var bytes = Array(source.utf8)[...]
            guard let first = bytes.popFirst() else { return nil }
            switch first {
            case UInt8(ascii: "\\"):
                guard let kind = bytes.popFirst(), Self.shorthand(kind, into: &members) else { return nil }
            case UInt8(ascii: "["):
                guard bytes.first != UInt8(ascii: "^"), bytes.first != UInt8(ascii: "]") else { return nil }
                var previous: UInt8?
                while true {
                    guard var byte = bytes.popFirst(), byte < 0x80 else { return nil }
                    if byte == UInt8(ascii: "]") { break }
                    // Nested classes and set operations (`&&`, `--`, `~~`) are the engine's.
                    if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "~") { return nil }
                    if byte == UInt8(ascii: "-"), bytes.first == UInt8(ascii: "-") { return nil }
                    if byte == UInt8(ascii: "\\") {
                        guard let escaped = bytes.popFirst(), escaped < 0x80 else { return nil }
                        if Self.shorthand(escaped, into: &members) {
                            previous = nil
                            continue
                        }
                        // Only escaped punctuation stands for itself (`\n`, `\p{L}` and the like do not).
                        guard !Self.isAlphanumeric(escaped) else { return nil }
                        byte = escaped
                    } else if byte == UInt8(ascii: "-"), let low = previous, let high = bytes.first, high != UInt8(ascii: "]") {
                        bytes.removeFirst()
                        guard high < 0x80, high != UInt8(ascii: "\\"), high != UInt8(ascii: "["), low <= high else { return nil }
                        for member in low...high { members[Int(member)] = true }
                        previous = nil
                        continue
                    }
                    members[Int(byte)] = true
                    previous = byte
                }
            default:
                return nil
            }
            switch bytes.popFirst() {
            case UInt8(ascii: "+"): (least, most) = (1, .max)
            case UInt8(ascii: "*"): (least, most) = (0, .max)
            case UInt8(ascii: "?"): (least, most) = (0, 1)
            case UInt8(ascii: "{"):
                guard let close = bytes.firstIndex(of: UInt8(ascii: "}")) else { return nil }
                let bounds = String(decoding: bytes[..<close], as: UTF8.self).split(separator: ",", omittingEmptySubsequences: false)
                bytes = bytes[(close + 1)...]
                guard (1...2).contains(bounds.count), let low = Int(bounds[0]), bounds[0].allSatisfy({ ("0"..."9").contains($0) }) else {
                    return nil
                }
                if bounds.count == 1 {
                    (least, most) = (low, low)
                } else if bounds[1].isEmpty {
                    (least, most) = (low, .max)
                } else {
                    guard let high = Int(bounds[1]), high >= low, bounds[1].allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
                    (least, most) = (low, high)
                }
            default:
                return nil
            }
            // Anything after the count (a lazy or possessive mark, more of the expression) is the engine's.
            guard bytes.isEmpty else { return nil }
        }

        func matches(_ text: String.UTF8View) -> Bool {
            var count = 0
            for byte in text {
                guard members[Int(byte)] else { return false }
                count += 1
            }
            return count >= least && count <= most
        }

        private static func shorthand(_ kind: UInt8, into members: inout [Bool]) -> Bool {
            switch kind {
            case UInt8(ascii: "d"):
                for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { members[Int(byte)] = true }
            case UInt8(ascii: "w"):
                for byte in 0..<UInt8(128) where isAlphanumeric(byte) || byte == UInt8(ascii: "_") { members[Int(byte)] = true }
            default:
                return false
            }
            return true
        }

        private static func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
    }

    public var description: String { source }
    public static func == (lhs: TextPattern, rhs: TextPattern) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
