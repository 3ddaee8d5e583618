/// What the client decodes for one component type: its `name` and the fields of its `content`.
///
/// The five built-in types are ``builtIns``; an app's own types are declared as data
/// (`Screens/components/*.json`) and checked exactly like them.
public struct ComponentSchema: Sendable, Hashable {
    /// The component type's `name` on the wire, e.g. `label_component`.
    public var name: String
    /// The fields of `content`, in declaration order.
    public var fields: [FieldSchema]
    /// Whether any `content` value decodes (the spacer ignores its content).
    public var acceptsAnyContent: Bool
    /// A one-line explanation for authors.
    public var summary: String?

    public init(name: String, fields: [FieldSchema], acceptsAnyContent: Bool = false, summary: String? = nil) {
        self.name = name
        self.fields = fields
        self.acceptsAnyContent = acceptsAnyContent
        self.summary = summary
    }

    /// The field named `name`, if the type has one.
    public func field(named name: String) -> FieldSchema? {
        fields.first { $0.name == name }
    }

    /// The fields a data entry may set.
    public var dynamicFields: [FieldSchema] { fields.filter(\.isDynamic) }

    /// Whether the type has a field a data entry may set (the client then asks for data).
    public var isDynamic: Bool { fields.contains(where: \.isDynamic) }
}

extension ComponentSchema {
    /// `label_component`: a text. `value` is dynamic; `kind` is `title`, `subtitle` or `body`.
    public static let label = ComponentSchema(
        name: "label_component",
        fields: [
            FieldSchema(name: "value", type: .string, isRequired: true, isDynamic: true, summary: "The text shown."),
            FieldSchema(
                name: "kind", type: .enumeration(LabelContent.Kind.allCases.map(\.rawValue)), isRequired: false,
                summary: "Text style; body when absent."
            ),
        ],
        summary: "A text."
    )

    /// `button_component`: a tappable title that triggers an action.
    public static let button = ComponentSchema(
        name: "button_component",
        fields: [
            FieldSchema(name: "title", type: .string, isRequired: true, summary: "The button's title."),
            FieldSchema(name: "action", type: .action, isRequired: true, summary: "What a tap does."),
            FieldSchema(
                name: "kind", type: .enumeration(ButtonContent.Kind.allCases.map(\.rawValue)), isRequired: false,
                summary: "Button style; primary when absent."
            ),
            FieldSchema(name: "is_enabled", type: .bool, isRequired: false, summary: "true when absent."),
        ],
        summary: "A button."
    )

    /// `text_field_component`: an input with a placeholder.
    public static let textField = ComponentSchema(
        name: "text_field_component",
        fields: [
            FieldSchema(name: "placeholder", type: .string, isRequired: true, summary: "Shown while empty."),
            FieldSchema(name: "is_secure", type: .bool, isRequired: false, summary: "Hides the input; false when absent."),
        ],
        summary: "A text input."
    )

    /// `spacer_component`: empty space. Its `content` must be present; its value is ignored.
    public static let spacer = ComponentSchema(
        name: "spacer_component", fields: [], acceptsAnyContent: true, summary: "Empty space; send content {}."
    )

    /// `collection_component`: a list whose `values` are contents of the `component_name` type.
    public static let collection = ComponentSchema(
        name: "collection_component",
        fields: [
            FieldSchema(
                name: "component_name", type: .string, isRequired: true,
                summary: "The component type of every item."
            ),
            FieldSchema(
                name: "values", type: .componentContents(nameField: "component_name"), isRequired: true,
                isDynamic: true, summary: "The items: each is the content of a component_name component."
            ),
        ],
        summary: "A list of components of one type."
    )

    /// The five types every Taksi client knows.
    public static let builtIns: [ComponentSchema] = [.label, .button, .textField, .spacer, .collection]
}
