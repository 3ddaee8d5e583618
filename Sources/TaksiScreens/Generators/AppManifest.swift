public import TaksiSchema

/// What the screens may send to one app build (`taksi-server manifest --app-version 2.3`): the
/// component types with the fields and enum values that version decodes, the custom actions, and
/// each screen's variants it gets with the component types they use. An app release can be checked
/// against it; `json` is the same for tools.
public struct AppManifest: Sendable {
    public var appVersion: Version
    public var catalog: ComponentCatalog
    /// The variants the version gets, by screen name: the version range it falls in, every
    /// alternative of it.
    public var screens: [(name: String, variants: [ScreenVariant])]

    public init(_ screenSet: ScreenSet, appVersion: Version) {
        self.appVersion = appVersion
        // Exactly this version's: components' own since and until included.
        catalog = screenSet.catalogVersions.catalog(
            screenSet.catalog, for: .only(appVersion))
        screens = screenSet.names.compactMap { name in
            guard let variants = screenSet.screens[name] else { return nil }
            let group =
                variants.versions.first { $0.requirement?.isSatisfied(by: appVersion) == true }
                ?? variants.versions.first { $0.requirement == nil }
            guard let group else { return nil }
            return (name, group.alternatives.keys.sorted().compactMap { group.alternatives[$0] })
        }
    }

    /// The component types a skeleton holds, collections' item types included, sorted.
    public static func componentTypes(of skeleton: Skeleton) -> [String] {
        var types: Set<String> = []
        func visit(_ value: JSONValue) {
            switch value {
            case .object(let members):
                if case .string(let name)? = members["component_name"] { types.insert(name) }
                members.values.forEach(visit)
            case .array(let elements):
                elements.forEach(visit)
            default:
                break
            }
        }
        for component in skeleton.components {
            types.insert(component.name)
            visit(component.content)
        }
        return types.sorted()
    }

    // MARK: - Text

    /// For people: one block per section.
    public var text: String {
        var lines = ["App version \(appVersion)", "", "Components:"]
        for name in catalog.schemas.keys.sorted() {
            guard let schema = catalog.schema(named: name) else { continue }
            let fields = schema.fields.map(Self.describe).joined(separator: "; ")
            lines.append("  \(name): \(fields.isEmpty ? (schema.acceptsAnyContent ? "any content" : "no fields") : fields)")
        }
        let actions = (ComponentCatalog.builtInActions.sorted() + catalog.customActions.sorted())
        lines += ["", "Actions: \(actions.joined(separator: ", "))", "", "Screens:"]
        for (name, variants) in screens {
            for variant in variants {
                let uses = Self.componentTypes(of: variant.skeleton).joined(separator: ", ")
                lines.append("  \(name): \(variant.variantID) (\(variant.file)) uses \(uses)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func describe(_ field: FieldSchema) -> String {
        var notes = [describe(field.type)]
        if field.isRequired { notes.append("required") }
        if field.isDynamic { notes.append("dynamic") }
        return "\(field.name) (\(notes.joined(separator: ", ")))"
    }

    private static func describe(_ type: FieldType) -> String {
        switch type {
        case .enumeration(let values): "enum \(values.joined(separator: "|"))"
        case .array(let items?): "array of \(describe(items))"
        case .object(let fields?): "object {\(fields.map(describe).joined(separator: "; "))}"
        case .componentContents(let nameField): "contents of the \(nameField) type"
        default: type.name
        }
    }

    // MARK: - JSON

    /// For tools: `{"app_version", "components": {name: {"summary", "fields": [...]}}, "actions": [...], "screens": {...}}`.
    public var json: JSONValue {
        var components: [String: JSONValue] = [:]
        for (name, schema) in catalog.schemas {
            var object: [String: JSONValue] = ["fields": .array(schema.fields.map(Self.json))]
            if let summary = schema.summary { object["summary"] = .string(summary) }
            if schema.acceptsAnyContent { object["accepts_any_content"] = true }
            components[name] = .object(object)
        }
        var screenObjects: [String: JSONValue] = [:]
        for (name, variants) in screens {
            screenObjects[name] = .array(
                variants.map { variant in
                    .object([
                        "id": .string(variant.variantID), "file": .string(variant.file), "alternative": .string(variant.alternative),
                        "version": variant.requirement.map { .string($0.description) } ?? .null,
                        "uses": .array(Self.componentTypes(of: variant.skeleton).map(JSONValue.string)),
                    ])
                })
        }
        return .object([
            "app_version": .string(appVersion.description), "components": .object(components),
            "actions": .array((ComponentCatalog.builtInActions.sorted() + catalog.customActions.sorted()).map(JSONValue.string)),
            "screens": .object(screenObjects),
        ])
    }

    private static func json(_ field: FieldSchema) -> JSONValue {
        var object = json(field.type)
        object["name"] = .string(field.name)
        object["required"] = .bool(field.isRequired)
        object["dynamic"] = .bool(field.isDynamic)
        if let summary = field.summary { object["summary"] = .string(summary) }
        return .object(object)
    }

    private static func json(_ type: FieldType) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["type": .string(type.name)]
        switch type {
        case .enumeration(let values): object["values"] = .array(values.map(JSONValue.string))
        case .array(let items?): object["items"] = .object(json(items))
        case .object(let fields?): object["fields"] = .array(fields.map(json))
        case .componentContents(let nameField): object["items_of"] = .string(nameField)
        default: break
        }
        return object
    }
}
