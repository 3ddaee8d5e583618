/// The content of a `label_component`.
public struct LabelContent: Sendable, Hashable, Codable {
    /// The label's text styles. An unknown value fails the whole screen on the client.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case title, subtitle, body
    }

    /// The text (dynamic). Never null: the client cannot decode a null label value.
    public var value: String
    /// The style; `body` when absent.
    public var kind: Kind?

    public init(value: String, kind: Kind? = nil) {
        self.value = value
        self.kind = kind
    }
}

/// The content of a `button_component`.
public struct ButtonContent: Sendable, Hashable, Codable {
    /// The button styles. An unknown value fails the whole screen on the client.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case primary, secondary, danger
    }

    public var title: String
    public var action: Action
    /// The style; `primary` when absent.
    public var kind: Kind?
    /// `true` when absent.
    public var isEnabled: Bool?

    private enum CodingKeys: String, CodingKey {
        case title, action, kind
        case isEnabled = "is_enabled"
    }

    public init(title: String, action: Action, kind: Kind? = nil, isEnabled: Bool? = nil) {
        self.title = title
        self.action = action
        self.kind = kind
        self.isEnabled = isEnabled
    }
}

/// The content of a `text_field_component`.
public struct TextFieldContent: Sendable, Hashable, Codable {
    public var placeholder: String
    /// `false` when absent.
    public var isSecure: Bool?

    private enum CodingKeys: String, CodingKey {
        case placeholder
        case isSecure = "is_secure"
    }

    public init(placeholder: String, isSecure: Bool? = nil) {
        self.placeholder = placeholder
        self.isSecure = isSecure
    }
}

/// The content of a `spacer_component`: the key must be present, its value is ignored (send `{}`).
public struct SpacerContent: Sendable, Hashable, Codable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: EmptyKeys.self)
    }

    private enum EmptyKeys: CodingKey {}
}

/// The content of a `collection_component`: items of one component type.
public struct CollectionContent: Sendable, Hashable, Codable {
    /// The component type of every item.
    public var componentName: String
    /// Each item is the *content* of a `componentName` component, not a whole component (dynamic).
    public var values: [JSONValue]

    private enum CodingKeys: String, CodingKey {
        case componentName = "component_name"
        case values
    }

    public init(componentName: String, values: [JSONValue]) {
        self.componentName = componentName
        self.values = values
    }
}
