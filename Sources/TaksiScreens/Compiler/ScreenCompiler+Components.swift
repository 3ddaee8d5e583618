import TaksiSchema

// Compiling components: each against its schema from the catalog, field by field, into the
// skeleton's content and the data plan's entries.

extension ScreenCompiler {
    mutating func compileComponent(
        _ node: JSONNode, index: Int, at path: JSONPath
    ) -> (Component, DataPlan.Entry?)? {
        guard
            let members = reader.object(
                node, at: path, what: "a component", allowed: ["name", "identifier", "content", "requires_data"],
                required: ["name", "content"]
            )
        else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        if let requiresData = member("requires_data") {
            reader.report(
                .unknownKey, at: requiresData, path: path.appending("requires_data"),
                "requires_data is computed from the component's bindings; remove it"
            )
        }
        guard let typeName = reader.string(member("name"), at: path.appending("name"), what: "the component's name"),
            let contentNode = member("content")
        else { return nil }
        guard let schema = catalog.schema(named: typeName) else {
            // Its file has an error of its own, reported there: one mistake, one error.
            if context.brokenComponents.contains(typeName) {
                leftOut.brokenType = true
                return nil
            }
            reader.report(
                .unknownComponent, at: member("name")!, path: path.appending("name"),
                "component type \"\(typeName)\" is not known to the app, so the whole screen would fail to decode; use a built-in type (\(ComponentSchema.builtIns.map(\.name).joined(separator: ", "))) or declare it in components/"
                    + NameSuggestion.hint(for: typeName, among: catalog.schemas.keys)
            )
            return nil
        }
        let identifier: String
        if let identifierNode = member("identifier") {
            guard let given = reader.string(identifierNode, at: path.appending("identifier"), what: "identifier") else {
                return nil
            }
            guard !given.isEmpty else {
                reader.report(
                    .invalidName, at: identifierNode, path: path.appending("identifier"),
                    "an identifier may not be empty; remove it to have one generated")
                return nil
            }
            identifier = given
        } else {
            // As the Ruby server did: position-based, stable while the screen's order is.
            identifier = "component$\(index)"
        }

        let contentPath = path.appending("content")
        guard let fields = compileContent(contentNode, schema: schema, at: contentPath, topLevel: true, scope: []) else {
            return nil
        }

        let (skeletonContent, dynamicFields, requiresData) = split(fields, of: schema, content: contentNode, identifier: identifier)
        let component = Component(
            name: typeName, identifier: identifier, requiresData: requiresData, content: .object(skeletonContent)
        )
        let entry =
            requiresData
            ? DataPlan.Entry(
                identifier: identifier, componentName: typeName, staticContent: skeletonContent, fields: dynamicFields
            ) : nil
        return (component, entry)
    }

    /// A component's compiled fields split between the skeleton (literals as written, typed
    /// placeholders where data will come, a placeholder where a field is built per URL from the
    /// path) and the data (its dynamic fields), and whether any data comes for it.
    private mutating func split(
        _ fields: [String: ContentExpression], of schema: ComponentSchema, content contentNode: JSONNode, identifier: String
    ) -> (skeleton: [String: JSONValue], dynamic: [String: ContentExpression], requiresData: Bool) {
        var skeletonContent: [String: JSONValue] = schema.acceptsAnyContent ? contentNode.value.objectValue ?? [:] : [:]
        var dynamicFields: [String: ContentExpression] = [:]
        var requiresData = false
        for (fieldName, expression) in fields {
            let field = schema.field(named: fieldName)
            if field?.isDynamic == true { dynamicFields[fieldName] = expression }
            if case .literal(let value) = expression {
                skeletonContent[fieldName] = value
                continue
            }
            if let field, !field.isDynamic {
                // A static field built from the path (``compileFields`` allows nothing else): made
                // per URL, into the skeleton, never data.
                pathFields.append(
                    ScreenVariant.PathField(identifier: identifier, field: fieldName, expression: expression, type: field.type))
                skeletonContent[fieldName] = field.type.placeholder()
                continue
            }
            requiresData = true
            if let field, field.isRequired {
                skeletonContent[fieldName] = Self.placeholder(for: expression, type: field.type)
            }
        }
        return (skeletonContent, dynamicFields, requiresData)
    }

    static func placeholder(for expression: ContentExpression, type: FieldType) -> JSONValue {
        switch expression {
        case .bind(_, let options), .template(_, let options):
            options.placeholder ?? type.placeholder()
        default:
            type.placeholder()
        }
    }

    /// Compiles a component's content (or a collection item's, or a typed object's) field by field.
    /// - Parameter topLevel: the component's own content, where only dynamic fields may be bound;
    ///   inside a collection item every field comes with the data and may be bound.
    mutating func compileContent(
        _ node: JSONNode, schema: ComponentSchema, at path: JSONPath, topLevel: Bool, scope: Set<String>
    ) -> [String: ContentExpression]? {
        if schema.acceptsAnyContent {
            guard node.members != nil else {
                reader.report(.wrongType, at: node, path: path, "\(schema.name) needs a content object; write {}")
                return nil
            }
            if let binding = Self.firstBinding(in: node, at: path) {
                reader.report(
                    .staticFieldBound, at: node.closestNode(at: binding.relative), path: binding.absolute,
                    "\(schema.name) has no fields to bind; remove the binding")
                return nil
            }
            return [:]
        }
        return compileFields(node, fields: schema.fields, what: "\(schema.name) content", at: path, topLevel: topLevel, scope: scope)
    }

    private mutating func compileFields(
        _ node: JSONNode, fields: [FieldSchema], what: String, at path: JSONPath, topLevel: Bool, scope: Set<String>
    ) -> [String: ContentExpression]? {
        guard let members = node.members else {
            reader.report(.wrongType, at: node, path: path, "\(what) must be an object, found \(node.typeName)")
            return nil
        }
        var valid = true
        let fieldNames = fields.map(\.name)
        for member in members where !fieldNames.contains(member.key) {
            valid = false
            reader.report(
                .unknownKey, offset: member.keyOffset, path: path.appending(member.key),
                "unknown field \"\(member.key)\" in \(what); its fields are \(fieldNames.joined(separator: ", "))"
                    + NameSuggestion.hint(for: member.key, among: fieldNames)
            )
        }
        var expressions: [String: ContentExpression] = [:]
        for field in fields {
            let fieldPath = path.appending(field.name)
            guard let valueNode = members.first(where: { $0.key == field.name })?.value else {
                if field.isRequired {
                    valid = false
                    reader.report(
                        .missingKey, at: node, path: fieldPath,
                        "required field \"\(field.name)\" (\(field.type.name)) is missing from \(what); add it"
                    )
                }
                continue
            }
            if case .null = valueNode.kind {
                if field.isRequired {
                    valid = false
                    reader.report(
                        .missingKey, at: valueNode, path: fieldPath,
                        "\"\(field.name)\" is null, which the client cannot decode; give it a \(field.type.name) value"
                            + (field.isDynamic ? " or bind it to data" : "")
                    )
                } else {
                    expressions[field.name] = .literal(.null)
                }
                continue
            }
            let compiled = compileValue(
                valueNode, as: field.type, at: fieldPath, siblings: members, scope: scope, fillsRequiredField: field.isRequired)
            guard let expression = compiled else {
                valid = false
                continue
            }
            if topLevel, !expression.isLiteral, !field.isDynamic, !isPathField(expression, field: field, among: fields) {
                valid = false
                let dynamic = fields.filter(\.isDynamic).map(\.name)
                let read = expression.sourceNames.subtracting([Self.pathSourceName]).sorted()
                let why =
                    if !read.isEmpty {
                        "the client never updates it from data, so it cannot be bound to \(read.joined(separator: ", ")); write a literal value"
                            + (pattern.hasParameters && !choosesType(field, among: fields)
                                ? ", or build it from the screen's path (\(pattern.parameterNames.map { "path.\($0)" }.joined(separator: ", "))), which each URL's skeleton is made with"
                                : "")
                    } else if choosesType(field, among: fields) {
                        "it decides the type of the data's items, so it is the same on every URL of the screen; write a literal value"
                    } else {
                        "a relative time changes by the moment, and a skeleton is made once per URL; write it in a dynamic field"
                    }
                reader.report(
                    .staticFieldBound, at: valueNode, path: fieldPath,
                    "\"\(field.name)\" is static: \(why)"
                        + (dynamic.isEmpty ? "" : " (the dynamic fields here are \(dynamic.joined(separator: ", ")))")
                )
            }
            expressions[field.name] = expression
        }
        return valid ? expressions : nil
    }

    /// Whether a bound static field is made from the screen's path parameters alone, so each
    /// URL's skeleton can hold its value (not a field that types another, like a collection's
    /// `component_name`, whose items the data must match).
    private func isPathField(_ expression: ContentExpression, field: FieldSchema, among fields: [FieldSchema]) -> Bool {
        pattern.hasParameters && expression.sourceNames == [Self.pathSourceName] && !expression.dependsOnTime
            && !choosesType(field, among: fields)
    }

    private func choosesType(_ field: FieldSchema, among fields: [FieldSchema]) -> Bool {
        fields.contains { if case .componentContents(let nameField) = $0.type { nameField == field.name } else { false } }
    }

    /// Compiles one value: a binding, a structure that holds bindings, or a literal that must decode
    /// as `type` (`nil` accepts any JSON, e.g. inside an untyped object).
    /// - Parameter fillsRequiredField: whether the value fills (or is inside what fills) a field
    ///   the client requires: a binding that may find nothing there, with no default, is warned of.
    mutating func compileValue(
        _ node: JSONNode, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>,
        fillsRequiredField: Bool = false
    ) -> ContentExpression? {
        if let members = node.members, let bindingKey = members.first(where: { $0.key.hasPrefix("$") })?.key {
            return compileBinding(
                node, key: bindingKey, as: type, at: path, siblings: siblings, scope: scope, fillsRequiredField: fillsRequiredField)
        }
        switch (type, node.kind) {
        case (.object(let fields?), .object):
            guard let members = compileFields(node, fields: fields, what: "this object", at: path, topLevel: false, scope: scope) else {
                return nil
            }
            return Self.normalized(.object(members))
        case (.array(let items), .array(let elements)) where Self.firstBinding(in: node, at: path) != nil:
            var compiled: [ContentExpression] = []
            for (index, element) in elements.enumerated() {
                guard
                    let expression = compileValue(
                        element, as: items, at: path.appending(index), siblings: [], scope: scope, fillsRequiredField: fillsRequiredField)
                else {
                    return nil
                }
                compiled.append(expression)
            }
            return Self.normalized(.array(compiled))
        case (.componentContents(let nameField), .array(let elements)):
            guard let itemSchema = itemSchema(nameField: nameField, siblings: siblings, at: path) else { return nil }
            var compiled: [ContentExpression] = []
            var valid = true
            for (index, element) in elements.enumerated() {
                guard let fields = compileContent(element, schema: itemSchema, at: path.appending(index), topLevel: false, scope: scope)
                else {
                    valid = false
                    continue
                }
                compiled.append(Self.normalized(.object(fields)))
            }
            return valid ? Self.normalized(.array(compiled)) : nil
        case (.action, .object) where Self.firstBinding(in: node, at: path) != nil:
            return compileNavigation(node, at: path, scope: scope)
        case (nil, .object(let members)) where Self.firstBinding(in: node, at: path) != nil:
            var compiled: [String: ContentExpression] = [:]
            for member in members {
                guard
                    let expression = compileValue(
                        member.value, as: nil, at: path.appending(member.key), siblings: [], scope: scope,
                        fillsRequiredField: fillsRequiredField)
                else {
                    return nil
                }
                compiled[member.key] = expression
            }
            return Self.normalized(.object(compiled))
        default:
            if let binding = Self.firstBinding(in: node, at: path) {
                reader.report(
                    .invalidBinding, at: node.closestNode(at: binding.relative), path: binding.absolute,
                    "a binding cannot stand inside a \(type?.name ?? "literal") value; bind the whole field instead"
                )
                return nil
            }
            let value = node.value
            guard let type else { return .literal(value) }
            let siblingValues = Dictionary(siblings.map { ($0.key, $0.value.value) }, uniquingKeysWith: { first, _ in first })
            let result = catalog.check(value, as: type, siblings: siblingValues, mode: .definition)
            reader.report(result.violations, in: node, at: path)
            return result.isValid ? .literal(value) : nil
        }
    }

    /// The schema of a collection's items, named by the sibling field `nameField` of the field at
    /// `path`. An unknown item type is reported on that field: a collection of a type the app does
    /// not know shows empty, every item dropped. (A missing one is the required field's own error.)
    mutating func itemSchema(nameField: String, siblings: [JSONNode.Member], at path: JSONPath) -> ComponentSchema? {
        guard let nameNode = siblings.first(where: { $0.key == nameField })?.value else { return nil }
        let namePath = JSONPath(segments: Array(path.segments.dropLast())).appending(nameField)
        // Not a string: the field's own check reports it (wrong type, or bound where it is static).
        guard let itemType = nameNode.stringValue else { return nil }
        guard let schema = catalog.schema(named: itemType) else {
            if context.brokenComponents.contains(itemType) {
                leftOut.brokenType = true
                return nil
            }
            reader.report(
                .unknownComponent, at: nameNode, path: namePath,
                "component type \"\(itemType)\" is not known to the app, so the collection would show no item; use a built-in type (\(ComponentSchema.builtIns.map(\.name).joined(separator: ", "))) or declare it in components/"
                    + NameSuggestion.hint(for: itemType, among: catalog.schemas.keys)
            )
            return nil
        }
        return schema
    }
}
