import TaksiSchema

// Reading custom component schemas and action identifiers.
extension DefinitionReader {
    mutating func readComponent(_ node: JSONNode, expectedName: String?) -> ComponentSchema? {
        let path = JSONPath.root
        guard
            let members = object(
                node, at: path, what: "a component schema", allowed: ["name", "summary", "since", "until", "fields"],
                required: ["name", "fields"]
            )
        else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        guard let name = string(member("name"), at: path.appending("name"), what: "name") else { return nil }
        let namePath = path.appending("name")
        if ComponentSchema.builtIns.contains(where: { $0.name == name }) {
            report(.invalidName, at: member("name")!, path: namePath, "\"\(name)\" is a built-in component; choose another name")
        } else if name.isEmpty || !name.unicodeScalars.allSatisfy(Self.isIdentifierScalar) {
            report(
                .invalidName, at: member("name")!, path: namePath,
                "component names use letters, digits and '_' (like restaurant_component)"
            )
        } else if let expectedName, expectedName != name {
            report(
                .invalidName, at: member("name")!, path: namePath,
                "the file declares \"\(name)\"; name the file \(name).json (or .yaml) so each type is easy to find"
            )
        }
        let summary = string(member("summary"), at: path.appending("summary"), what: "summary")
        guard let fieldsNode = member("fields") else { return nil }
        guard let fields = readFields(fieldsNode, at: path.appending("fields"), topLevel: true) else { return nil }
        return ComponentSchema(name: name, fields: fields, summary: summary)
    }

    private mutating func readFields(_ node: JSONNode, at path: JSONPath, topLevel: Bool) -> [FieldSchema]? {
        guard let elements = node.elements else {
            report(.wrongType, at: node, path: path, "fields must be an array of field schemas")
            return nil
        }
        var fields: [FieldSchema] = []
        var names: Set<String> = []
        for (index, element) in elements.enumerated() {
            let fieldPath = path.appending(index)
            let allowed = [
                "name", "type", "required", "dynamic", "summary", "values", "items", "fields", "since", "until", "required_since",
            ]
            guard
                let members = object(
                    element, at: fieldPath, what: "a field schema", allowed: allowed, required: ["name", "type"]
                )
            else { continue }
            let member = { (key: String) in members.first { $0.key == key }?.value }
            guard let name = string(member("name"), at: fieldPath.appending("name"), what: "name"),
                let type = readFieldType(element, at: fieldPath)
            else { continue }
            // A component's field may be declared once per version range, each with since or until
            // (its type for those versions); CatalogReader checks the ranges do not overlap.
            let versioned = member("since") != nil || member("until") != nil
            if !names.insert(name).inserted {
                if !topLevel || !versioned {
                    report(
                        .invalidName, at: element, path: fieldPath.appending("name"),
                        topLevel
                            ? "field \"\(name)\" is declared twice; to give it another type for some app versions, give each declaration \"since\" or \"until\""
                            : "field \"\(name)\" is declared twice")
                }
            }
            let isRequired = bool(member("required"), at: fieldPath.appending("required"), what: "required") ?? false
            let isDynamic = bool(member("dynamic"), at: fieldPath.appending("dynamic"), what: "dynamic") ?? false
            if isDynamic, !topLevel {
                report(
                    .invalidSchema, at: member("dynamic")!, path: fieldPath.appending("dynamic"),
                    "only a component's own fields can be dynamic; mark the enclosing field dynamic instead"
                )
            }
            if isDynamic, !type.canBeDynamic {
                report(
                    .invalidSchema, at: member("dynamic")!, path: fieldPath.appending("dynamic"),
                    "a field of type \(type.name) cannot be dynamic: it has no neutral placeholder the client would accept; make it static"
                )
            }
            let summary = string(member("summary"), at: fieldPath.appending("summary"), what: "summary")
            fields.append(FieldSchema(name: name, type: type, isRequired: isRequired, isDynamic: isDynamic, summary: summary))
        }
        return fields
    }

    /// Reads `{"type": ..., "values"|"items"|"fields": ...}` from a field schema or an `items` schema.
    mutating func readFieldType(_ node: JSONNode, at path: JSONPath) -> FieldType? {
        guard let typeNode = node["type"] else {
            report(
                .missingKey, at: node, path: path.appending("type"),
                "a type needs \"type\": one of \(FieldType.names.joined(separator: ", "))")
            return nil
        }
        guard let typeName = string(typeNode, at: path.appending("type"), what: "type") else { return nil }
        let extras = ["values", "items", "fields"]
        let expectedExtra: String? =
            switch typeName {
            case "enum": "values"
            case "array": "items"
            case "object": "fields"
            default: nil
            }
        for extra in extras where extra != expectedExtra {
            if let extraNode = node[extra] {
                report(.unknownKey, at: extraNode, path: path.appending(extra), "\"\(extra)\" does not apply to type \(typeName)")
            }
        }
        switch typeName {
        case "string": return .string
        case "number": return .number
        case "integer": return .integer
        case "bool": return .bool
        case "url": return .url
        case "action": return .action
        case "enum":
            let valuesPath = path.appending("values")
            guard let valuesNode = node["values"], let elements = valuesNode.elements, !elements.isEmpty else {
                report(.missingKey, at: node["values"] ?? node, path: valuesPath, "an enum needs \"values\": a non-empty array of strings")
                return nil
            }
            var values: [String] = []
            for (index, element) in elements.enumerated() {
                // A value, or {"value": ..., "since": ..., "until": ...} for one some app versions lack.
                let valueNode: JSONNode?
                if element.members != nil {
                    valueNode =
                        object(
                            element, at: valuesPath.appending(index), what: "an enum value",
                            allowed: ["value", "since", "until", "summary"],
                            required: ["value"]
                        )?.first { $0.key == "value" }?.value
                } else {
                    valueNode = element
                }
                guard let valueNode, let value = string(valueNode, at: valuesPath.appending(index), what: "an enum value") else { continue }
                if values.contains(value) {
                    report(.invalidSchema, at: element, path: valuesPath.appending(index), "enum value \"\(value)\" is listed twice")
                }
                values.append(value)
            }
            return .enumeration(values)
        case "array":
            guard let items = node["items"] else { return .array(items: nil) }
            guard items.members != nil else {
                report(.wrongType, at: items, path: path.appending("items"), "items must be a type object like {\"type\": \"string\"}")
                return nil
            }
            _ = object(
                items, at: path.appending("items"), what: "an items type", allowed: ["type", "values", "items", "fields"],
                required: ["type"])
            guard let itemType = readFieldType(items, at: path.appending("items")) else { return nil }
            return .array(items: itemType)
        case "object":
            guard let fieldsNode = node["fields"] else { return .object(fields: nil) }
            guard let fields = readFields(fieldsNode, at: path.appending("fields"), topLevel: false) else { return nil }
            return .object(fields: fields)
        default:
            report(
                .invalidSchema, at: typeNode, path: path.appending("type"),
                "unknown type \"\(typeName)\"; use one of \(FieldType.names.joined(separator: ", "))"
                    + NameSuggestion.hint(for: typeName, among: FieldType.names)
            )
            return nil
        }
    }

    static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_": true
        default: false
        }
    }
}
