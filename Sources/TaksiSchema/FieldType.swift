/// The JSON type of one field of a component's content, as the client decodes it.
///
/// Built-in components use these too, so one checker guards built-in and custom types alike.
public indirect enum FieldType: Sendable, Hashable {
    /// A JSON string.
    case string
    /// A JSON number (the client decodes `Double`).
    case number
    /// A JSON number with no fractional part (the client decodes `Int`).
    case integer
    /// A JSON `true` or `false`.
    case bool
    /// A string the client decodes as `URL`: absolute, with a scheme, no spaces.
    case url
    /// A string that must be one of `values`; anything else fails the client's enum decoding.
    case enumeration([String])
    /// An action object (`navigation`, `executable` or a custom action the app registered).
    case action
    /// A JSON object; with `fields`, each declared field is checked too.
    case object(fields: [FieldSchema]?)
    /// A JSON array; with `items`, each element is checked too.
    case array(items: FieldType?)
    /// The `values` of a collection: each element is the *content* of the component type named by
    /// the sibling field `nameField` (for `collection_component`, `component_name`).
    case componentContents(nameField: String)

    /// The name used in schema files and messages: `string`, `enum`, `array`, ...
    public var name: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .integer: "integer"
        case .bool: "bool"
        case .url: "url"
        case .enumeration: "enum"
        case .action: "action"
        case .object: "object"
        case .array: "array"
        case .componentContents: "array"
        }
    }

    /// Every type name a schema file may use.
    public static let names = ["string", "number", "integer", "bool", "url", "enum", "action", "object", "array"]

    /// Whether a field of this type may be dynamic: it needs a neutral placeholder that decodes,
    /// and an action has none the app would accept blindly.
    public var canBeDynamic: Bool {
        switch self {
        case .action: false
        case .object(let fields?): fields.allSatisfy { !$0.isRequired || $0.type.canBeDynamic }
        default: true
        }
    }

    /// The neutral value that decodes as this type, sent in a skeleton until data arrives:
    /// a string of spaces, `0`, `false`, `[]`, the first enum value, `about:blank` for URLs,
    /// an object holding placeholders for its required fields.
    public func placeholder(stringWidth: Int = 8) -> JSONValue {
        switch self {
        case .string: .string(String(repeating: " ", count: max(1, stringWidth)))
        case .number, .integer: .number(0)
        case .bool: .bool(false)
        case .url: .string("about:blank")
        case .enumeration(let values): values.first.map(JSONValue.string) ?? .string("")
        case .action: .object(["identifier": "executable", "content": ["name": ""]])
        case .object(let fields):
            .object(
                Dictionary(
                    uniqueKeysWithValues: (fields ?? []).filter(\.isRequired).map {
                        ($0.name, $0.type.placeholder(stringWidth: stringWidth))
                    }
                )
            )
        case .array, .componentContents: .array([])
        }
    }
}
