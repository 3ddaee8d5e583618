import TaksiSchema

/// Reads what the app knows beyond the built-ins: custom component schemas
/// (`components/<name>.json`, one type per file) and custom action identifiers (`actions.json`).
///
/// ```json
/// {"name": "restaurant_component", "summary": "A restaurant card.", "fields": [
///   {"name": "title", "type": "string", "required": true, "dynamic": true},
///   {"name": "kind", "type": "enum", "values": ["cheap", "fancy"]}
/// ]}
/// ```
struct CatalogReader {
    /// Reads one component schema file; nil (with diagnostics) when it is invalid.
    /// - Returns: the schema and the first app version that knows the type (`"since"`), if declared.
    static func readComponent(
        _ node: JSONNode, file: SourceFile, expectedName: String?
    ) -> (schema: ComponentSchema?, since: Version?, diagnostics: [Diagnostic]) {
        var reader = DefinitionReader(file: file)
        let schema = reader.readComponent(node, expectedName: expectedName)
        var since: Version?
        if let sinceNode = node["since"], let text = reader.string(sinceNode, at: JSONPath.root.appending("since"), what: "since") {
            since = Version(text)
            if since == nil {
                reader.report(
                    .invalidVersion, at: sinceNode, path: JSONPath.root.appending("since"),
                    "\"\(text)\" is not a version; write the first app version that knows this component, like \"2.3\""
                )
            }
        }
        return (reader.diagnostics.containsErrors ? nil : schema, since, reader.diagnostics)
    }

    /// Reads `actions.json`: the custom action identifiers the app registered.
    static func readActions(_ node: JSONNode, file: SourceFile) -> (Set<String>, [Diagnostic]) {
        var reader = DefinitionReader(file: file)
        var identifiers: Set<String> = []
        let path = JSONPath.root
        guard let members = reader.object(node, at: path, what: "the actions file", allowed: ["custom_actions"]),
            let list = members.first(where: { $0.key == "custom_actions" })?.value
        else { return ([], reader.diagnostics) }
        let listPath = path.appending("custom_actions")
        guard let elements = list.elements else {
            reader.report(.wrongType, at: list, path: listPath, "custom_actions must be an array of {\"identifier\": ...}")
            return ([], reader.diagnostics)
        }
        for (index, element) in elements.enumerated() {
            let elementPath = listPath.appending(index)
            guard
                let action = reader.object(
                    element, at: elementPath, what: "a custom action", allowed: ["identifier", "summary"],
                    required: ["identifier"]
                ),
                let identifier = reader.string(
                    action.first { $0.key == "identifier" }?.value, at: elementPath.appending("identifier"),
                    what: "identifier"
                )
            else { continue }
            if ComponentCatalog.builtInActions.contains(identifier) || identifier.isEmpty {
                reader.report(
                    .invalidName, at: element, path: elementPath.appending("identifier"),
                    "\"\(identifier)\" cannot be a custom action: navigation and executable are built in"
                )
            } else if !identifiers.insert(identifier).inserted {
                reader.report(.invalidName, at: element, path: elementPath, "custom action \"\(identifier)\" is declared twice")
            }
        }
        return (identifiers, reader.diagnostics)
    }
}
