/// What a button (or a custom component) asks the app to do.
///
/// ```json
/// {"identifier": "navigation", "content": {"interface_identifier": "login"}}
/// {"identifier": "executable", "content": {"name": "refresh"}}
/// {"identifier": "login_success", "content": {}}
/// ```
public enum Action: Sendable, Hashable, Codable {
    /// Open another screen, by its name.
    case navigation(interfaceIdentifier: String)
    /// Run a named app-side action; any name decodes.
    case executable(name: String)
    /// A custom action; it decodes only where the app registered `identifier`.
    case custom(identifier: String, content: JSONValue)

    private enum CodingKeys: String, CodingKey {
        case identifier, content
    }

    private enum NavigationKeys: String, CodingKey {
        case interfaceIdentifier = "interface_identifier"
    }

    private enum ExecutableKeys: String, CodingKey {
        case name
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .identifier)
        switch identifier {
        case "navigation":
            let content = try container.nestedContainer(keyedBy: NavigationKeys.self, forKey: .content)
            self = .navigation(interfaceIdentifier: try content.decode(String.self, forKey: .interfaceIdentifier))
        case "executable":
            let content = try container.nestedContainer(keyedBy: ExecutableKeys.self, forKey: .content)
            self = .executable(name: try content.decode(String.self, forKey: .name))
        default:
            self = .custom(identifier: identifier, content: try container.decode(JSONValue.self, forKey: .content))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .navigation(let target):
            try container.encode("navigation", forKey: .identifier)
            var content = container.nestedContainer(keyedBy: NavigationKeys.self, forKey: .content)
            try content.encode(target, forKey: .interfaceIdentifier)
        case .executable(let name):
            try container.encode("executable", forKey: .identifier)
            var content = container.nestedContainer(keyedBy: ExecutableKeys.self, forKey: .content)
            try content.encode(name, forKey: .name)
        case .custom(let identifier, let content):
            try container.encode(identifier, forKey: .identifier)
            try container.encode(content, forKey: .content)
        }
    }
}
