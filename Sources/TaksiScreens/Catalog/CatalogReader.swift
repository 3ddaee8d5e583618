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
    /// - Returns: the schema, and the app versions that decode it and its fields and enum values
    ///   (`since`, `until`, `required_since`), recorded in `versions`.
    static func readComponent(
        _ node: JSONNode, file: SourceFile, expectedName: String?, versions: inout CatalogVersions
    ) -> (schema: ComponentSchema?, diagnostics: [Diagnostic]) {
        var reader = DefinitionReader(file: file)
        var schema = reader.readComponent(node, expectedName: expectedName)
        let availability = readAvailability(node, at: .root, what: "this component", reader: &reader)
        if let readSchema = schema {
            if let availability { versions.components[readSchema.name] = availability }
            if let fields = node["fields"] {
                readFieldVersions(
                    fields, at: JSONPath.root.appending("fields"), component: readSchema.name, prefix: "", versions: &versions,
                    reader: &reader)
                if !reader.diagnostics.containsErrors {
                    schema?.fields = readDeclarations(fields, of: readSchema, versions: &versions, reader: &reader)
                }
            }
            if let schema, !reader.diagnostics.containsErrors { reportClashes(in: schema, node: node, reader: &reader) }
        }
        return (reader.diagnostics.containsErrors ? nil : schema, reader.diagnostics)
    }

    /// Fields whose Swift properties would clash in the code `codegen swift` writes, each at the
    /// name of its last declaration.
    private static func reportClashes(in schema: ComponentSchema, node: JSONNode, reader: inout DefinitionReader) {
        for clash in SwiftCodegen.fieldClashes(in: schema) {
            var path = JSONPath.root
            var current = node
            for name in clash.field {
                guard let elements = current["fields"]?.elements,
                    let index = elements.lastIndex(where: { $0["name"]?.stringValue == name })
                else { break }
                path = path.appending("fields").appending(index)
                current = elements[index]
            }
            reader.report(.invalidName, at: current["name"] ?? current, path: path.appending("name"), clash.message)
        }
    }

    /// A field declared once per version range: each declaration's versions, which must not
    /// overlap, recorded oldest first; the schema keeps the newest.
    private static func readDeclarations(
        _ fieldsNode: JSONNode, of schema: ComponentSchema, versions: inout CatalogVersions, reader: inout DefinitionReader
    ) -> [FieldSchema] {
        let elements = fieldsNode.elements ?? []
        let names = elements.compactMap { $0["name"]?.stringValue }
        guard names.count == schema.fields.count, Set(names).count < names.count else { return schema.fields }
        var kept: [FieldSchema] = []
        for (index, field) in schema.fields.enumerated() {
            let indices = names.indices.filter { names[$0] == field.name }
            guard indices.count > 1 else {
                kept.append(field)
                continue
            }
            guard index == indices.last else { continue }
            var declarations: [(availability: Availability, field: FieldSchema, node: JSONNode)] = []
            for declaration in indices {
                let path = JSONPath.root.appending("fields").appending(declaration)
                let availability =
                    readAvailability(elements[declaration], at: path, what: "field \(field.name)", reader: &reader) ?? .always
                for earlier in declarations {
                    guard let overlap = earlier.availability.versions.intersection(availability.versions).example else { continue }
                    reader.report(
                        .invalidSchema, at: elements[declaration], path: path,
                        "this declaration of field \"\(field.name)\" and the one on \(reader.place(of: earlier.node)) both describe \(overlap); give each declaration its own versions with since and until"
                    )
                }
                declarations.append((availability, schema.fields[declaration], elements[declaration]))
            }
            let key = CatalogVersions.FieldKey(component: schema.name, path: field.name)
            versions.fields[key] = nil
            let sorted = declarations.sorted { ($0.availability.since ?? Version([0])) < ($1.availability.since ?? Version([0])) }
            versions.fieldDeclarations[key] = sorted.map { ($0.availability, $0.field) }
            if let newest = sorted.last { kept.append(newest.field) }
        }
        return kept
    }

    /// `since` and `until` of a declaration: nil when it has neither (every version decodes it).
    static func readAvailability(_ node: JSONNode, at path: JSONPath, what: String, reader: inout DefinitionReader) -> Availability? {
        var availability = Availability()
        for key in ["since", "until"] {
            guard let versionNode = node[key], let text = reader.string(versionNode, at: path.appending(key), what: key) else { continue }
            guard let version = Version(text) else {
                let meaning = key == "since" ? "the first app version that decodes \(what)" : "the last app version that decodes \(what)"
                reader.report(
                    .invalidVersion, at: versionNode, path: path.appending(key),
                    "\"\(text)\" is not a version; write \(meaning), like \"2.3\"")
                continue
            }
            if key == "since" { availability.since = version } else { availability.until = version }
        }
        if let since = availability.since, let until = availability.until, until < since {
            reader.report(
                .invalidVersion, at: node["until"]!, path: path.appending("until"),
                "until \(until) is before since \(since), so no app version would decode \(what); swap them or remove one"
            )
            return nil
        }
        return availability.isAlways ? nil : availability
    }

    /// The versions of each field of `fields` (and of its enum values, its object's fields and its
    /// items), keyed by the field's path in the content.
    private static func readFieldVersions(
        _ fields: JSONNode, at path: JSONPath, component: String, prefix: String, versions: inout CatalogVersions,
        reader: inout DefinitionReader
    ) {
        for (index, field) in (fields.elements ?? []).enumerated() {
            guard let name = field["name"]?.stringValue else { continue }
            let fieldPath = path.appending(index)
            let key = CatalogVersions.FieldKey(component: component, path: prefix + name)
            if let availability = readAvailability(field, at: fieldPath, what: "field \(name)", reader: &reader) {
                versions.fields[key] = availability
            }
            if let sinceNode = field["required_since"] {
                if field["required"]?.value == .bool(true) {
                    reader.report(
                        .invalidSchema, at: sinceNode, path: fieldPath.appending("required_since"),
                        "the field is required in every version already (\"required\": true); remove one of the two"
                    )
                } else if let text = reader.string(sinceNode, at: fieldPath.appending("required_since"), what: "required_since") {
                    if let version = Version(text) {
                        versions.requiredSince[key] = version
                    } else {
                        reader.report(
                            .invalidVersion, at: sinceNode, path: fieldPath.appending("required_since"),
                            "\"\(text)\" is not a version; write the first app version that requires field \(name), like \"2.3\""
                        )
                    }
                }
            }
            readTypeVersions(field, at: fieldPath, key: key, versions: &versions, reader: &reader)
        }
    }

    /// The versions of an enum's values, of an object's fields and of an array's items' type.
    private static func readTypeVersions(
        _ type: JSONNode, at path: JSONPath, key: CatalogVersions.FieldKey, versions: inout CatalogVersions, reader: inout DefinitionReader
    ) {
        switch type["type"]?.stringValue {
        case "enum":
            for (index, value) in (type["values"]?.elements ?? []).enumerated() {
                guard value.members != nil, let name = value["value"]?.stringValue else { continue }
                if let availability = readAvailability(
                    value, at: path.appending("values").appending(index), what: "enum value \(name)", reader: &reader)
                {
                    versions.enumValues[key, default: [:]][name] = availability
                }
            }
        case "object":
            if let fields = type["fields"] {
                readFieldVersions(
                    fields, at: path.appending("fields"), component: key.component, prefix: key.path + ".", versions: &versions,
                    reader: &reader)
            }
        case "array":
            if let items = type["items"] {
                let itemsKey = CatalogVersions.FieldKey(component: key.component, path: key.path + "[]")
                readTypeVersions(items, at: path.appending("items"), key: itemsKey, versions: &versions, reader: &reader)
            }
        default:
            break
        }
    }

    /// What `actions.json` declares the app handles itself.
    struct AppActions {
        /// The custom action identifiers the app registered.
        var customActions: Set<String> = []
        /// The names of the `executable` actions the app runs itself (not a screen's action).
        var executables: Set<String> = []
    }

    /// Reads `actions.json`: the custom action identifiers the app registered (and the versions
    /// that decode those that say, recorded in `versions`), and the executables it runs.
    static func readActions(
        _ node: JSONNode, file: SourceFile, versions: inout CatalogVersions, summaries: inout [String: String]
    ) -> (AppActions, [Diagnostic]) {
        var reader = DefinitionReader(file: file)
        var declared = AppActions()
        guard let members = reader.object(node, at: .root, what: "the actions file", allowed: ["custom_actions", "executables"]) else {
            return (declared, reader.diagnostics)
        }
        if let list = members.first(where: { $0.key == "custom_actions" })?.value {
            declared.customActions = readCustomActions(list, versions: &versions, summaries: &summaries, reader: &reader)
        }
        if let list = members.first(where: { $0.key == "executables" })?.value {
            declared.executables = readExecutables(list, summaries: &summaries, reader: &reader)
        }
        return (declared, reader.diagnostics)
    }

    /// `executables`: `[{"name": "reset_password", "summary": "..."}]`.
    private static func readExecutables(_ list: JSONNode, summaries: inout [String: String], reader: inout DefinitionReader) -> Set<String>
    {
        let listPath = JSONPath.root.appending("executables")
        guard let elements = list.elements else {
            reader.report(
                .wrongType, at: list, path: listPath, "executables must be an array of {\"name\": ...}, the executables the app runs itself"
            )
            return []
        }
        var names: Set<String> = []
        for (index, element) in elements.enumerated() {
            let elementPath = listPath.appending(index)
            guard
                let executable = reader.object(
                    element, at: elementPath, what: "an executable", allowed: ["name", "summary"], required: ["name"]),
                let name = reader.string(executable.first { $0.key == "name" }?.value, at: elementPath.appending("name"), what: "name")
            else { continue }
            if name.isEmpty {
                reader.report(.invalidName, at: element, path: elementPath.appending("name"), "an executable's name is not empty")
            } else if !names.insert(name).inserted {
                reader.report(.invalidName, at: element, path: elementPath, "executable \"\(name)\" is declared twice")
            }
        }
        return names
    }

    private static func readCustomActions(
        _ list: JSONNode, versions: inout CatalogVersions, summaries: inout [String: String], reader: inout DefinitionReader
    ) -> Set<String> {
        var identifiers: Set<String> = []
        var typeNames: [String: String] = [:]
        let listPath = JSONPath.root.appending("custom_actions")
        guard let elements = list.elements else {
            reader.report(.wrongType, at: list, path: listPath, "custom_actions must be an array of {\"identifier\": ...}")
            return []
        }
        for (index, element) in elements.enumerated() {
            let elementPath = listPath.appending(index)
            guard
                let action = reader.object(
                    element, at: elementPath, what: "a custom action", allowed: ["identifier", "summary", "since", "until"],
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
            } else if let other = SwiftCodegen.typeClash(ofAction: identifier, with: &typeNames) {
                reader.report(
                    .invalidName, at: element, path: elementPath.appending("identifier"),
                    "custom actions \"\(other)\" and \"\(identifier)\" would both be the Swift class \(SwiftCodegen.actionTypeName(of: identifier))"
                        + " (or differ only by case, one file on macOS and Windows) in the code codegen swift writes; rename one"
                )
            } else {
                if let availability = readAvailability(element, at: elementPath, what: "custom action \(identifier)", reader: &reader) {
                    versions.actions[identifier] = availability
                }
                if let summary = element["summary"]?.stringValue { summaries[identifier] = summary }
            }
        }
        return identifiers
    }
}
