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
            guard let integer = Int(text) else { return nil }
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

    /// Compiles `source`; throws with the engine's message when it is not a regular expression.
    public init(_ source: String) throws {
        self.source = source
        self.regex = try Regex(source)
    }

    /// Whether the whole of `text` matches (not just a part of it).
    public func matches(_ text: String) -> Bool {
        (try? regex.wholeMatch(in: text)) != nil
    }

    public var description: String { source }
    public static func == (lhs: TextPattern, rhs: TextPattern) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
