/// One component of a skeleton, as the client decodes it.
///
/// ```json
/// {"name": "label_component", "identifier": "title", "requires_data": true, "content": {"value": "        "}}
/// ```
public struct Component: Sendable, Hashable, Codable {
    /// The component type, e.g. `label_component`.
    public var name: String
    /// Unique within the screen; data entries find their component by it.
    public var identifier: String
    /// Whether the component waits for a data entry. Missing or null decodes as `false`.
    public var requiresData: Bool
    /// The type's fields; dynamic ones hold typed placeholders until data arrives.
    public var content: JSONValue

    private enum CodingKeys: String, CodingKey {
        case name, identifier, content
        case requiresData = "requires_data"
    }

    public init(name: String, identifier: String, requiresData: Bool, content: JSONValue) {
        self.name = name
        self.identifier = identifier
        self.requiresData = requiresData
        self.content = content
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        identifier = try container.decode(String.self, forKey: .identifier)
        requiresData = try container.decodeIfPresent(Bool.self, forKey: .requiresData) ?? false
        content = try container.decode(JSONValue.self, forKey: .content)
    }

    /// The component as a JSON object.
    public var jsonValue: JSONValue {
        [
            "name": .string(name), "identifier": .string(identifier), "requires_data": .bool(requiresData),
            "content": content,
        ]
    }
}

/// A screen's layout: `{"components": [...]}`, the first of the client's two requests.
public struct Skeleton: Sendable, Hashable, Codable {
    public var components: [Component]

    public init(components: [Component]) {
        self.components = components
    }

    /// Whether the client will ask for data: at least one component requires it.
    public var requiresData: Bool { components.contains(where: \.requiresData) }

    /// The skeleton as a JSON object.
    public var jsonValue: JSONValue {
        ["components": .array(components.map(\.jsonValue))]
    }
}

/// One data entry: the dynamic fields of the component with the same `identifier`.
///
/// ```json
/// {"identifier": "title", "content": {"value": "Hello"}}
/// ```
public struct DataEntry: Sendable, Hashable, Codable {
    public var identifier: String
    public var content: JSONValue

    public init(identifier: String, content: JSONValue) {
        self.identifier = identifier
        self.content = content
    }

    /// The entry as a JSON object.
    public var jsonValue: JSONValue {
        ["identifier": .string(identifier), "content": content]
    }
}

/// The data envelope: `{"interface_data": [...]}`, the second of the client's two requests.
/// One entry that fails to decode makes the client apply none, so every entry must decode.
public struct InterfaceData: Sendable, Hashable, Codable {
    public var entries: [DataEntry]

    private enum CodingKeys: String, CodingKey {
        case entries = "interface_data"
    }

    public init(entries: [DataEntry]) {
        self.entries = entries
    }

    /// The envelope as a JSON object.
    public var jsonValue: JSONValue {
        ["interface_data": .array(entries.map(\.jsonValue))]
    }
}
