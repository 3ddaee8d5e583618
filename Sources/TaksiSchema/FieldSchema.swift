/// One field of a component's content: its JSON name, type, whether it must be present, and
/// whether data patches may set it.
///
/// ```swift
/// FieldSchema(name: "value", type: .string, isRequired: true, isDynamic: true)
/// ```
public struct FieldSchema: Sendable, Hashable {
    /// The JSON key in `content`.
    public var name: String
    /// The JSON type the client decodes.
    public var type: FieldType
    /// Whether the client fails when the key is missing. A required field is also non-null.
    public var isRequired: Bool
    /// Whether a data entry may set it (the client's dynamic data). Static fields are fixed by the skeleton.
    public var isDynamic: Bool
    /// A one-line explanation for authors, shown in `schema` output and editor hints.
    public var summary: String?

    public init(name: String, type: FieldType, isRequired: Bool, isDynamic: Bool = false, summary: String? = nil) {
        self.name = name
        self.type = type
        self.isRequired = isRequired
        self.isDynamic = isDynamic
        self.summary = summary
    }
}
