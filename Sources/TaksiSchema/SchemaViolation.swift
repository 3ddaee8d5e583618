/// A value the client would fail to decode (or, for a collection item, would silently drop),
/// with where it is and how to fix it.
public struct SchemaViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable name for the kind of problem. A struct, so new codes never break callers.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unknownComponent = Code(rawValue: "unknown_component")
        public static let missingField = Code(rawValue: "missing_field")
        public static let nullField = Code(rawValue: "null_field")
        public static let wrongType = Code(rawValue: "wrong_type")
        public static let unknownEnumValue = Code(rawValue: "unknown_enum_value")
        public static let invalidURL = Code(rawValue: "invalid_url")
        public static let unknownAction = Code(rawValue: "unknown_action")
        public static let invalidAction = Code(rawValue: "invalid_action")
        public static let brokenNavigation = Code(rawValue: "broken_navigation")
    }

    /// What kind of problem it is.
    public var code: Code
    /// Where the value is, relative to the value that was checked.
    public var path: JSONPath
    /// What is wrong and what to do about it.
    public var message: String

    public init(code: Code, path: JSONPath, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
