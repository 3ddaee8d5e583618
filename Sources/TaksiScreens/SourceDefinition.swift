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

/// One query parameter a `request` source reads.
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

    public init(kind: Kind = .string, defaultValue: JSONValue? = nil, isRequired: Bool = false, allowedValues: [JSONValue]? = nil) {
        self.kind = kind
        self.defaultValue = defaultValue
        self.isRequired = isRequired
        self.allowedValues = allowedValues
    }

    /// The parameter's text converted to its kind; nil when it does not convert or is not allowed.
    public func convert(_ text: String) -> JSONValue? {
        guard let value = convertKind(text) else { return nil }
        if let allowedValues, !allowedValues.contains(value) { return nil }
        return value
    }

    /// What a request must send, for error messages: `integer`, or `one of stars, forks`.
    public var expectation: String {
        guard let allowedValues else { return kind.rawValue }
        return "one of " + allowedValues.map { $0.stringValue ?? JSONWriter.string($0) }.joined(separator: ", ")
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
