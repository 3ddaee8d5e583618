/// Everything an app knows how to decode: its component types (the built-ins plus its own) and
/// the identifiers of its custom actions. The checker asks it whether a value will decode.
///
/// ```swift
/// let catalog = ComponentCatalog(customComponents: [restaurant], customActions: ["login_success"])
/// let violations = catalog.check(content: ["value": nil], of: "label_component")
/// // [content.value: null_field ...]
/// ```
public struct ComponentCatalog: Sendable {
    /// Component schemas by type name, built-ins included.
    public private(set) var schemas: [String: ComponentSchema]
    /// Identifiers of the custom actions the app registered (besides `navigation` and `executable`).
    public var customActions: Set<String>
    /// The screens a navigation action may open; `nil` accepts any target. A target that names no
    /// screen is a broken link in the app.
    public var navigationTargets: NavigationTargets?

    /// A catalog of the built-in types, the given custom types and custom action identifiers.
    /// A custom type with a built-in's name replaces nothing: built-ins always win.
    public init(
        customComponents: [ComponentSchema] = [], customActions: Set<String> = [], navigationTargets: NavigationTargets? = nil
    ) {
        self.navigationTargets = navigationTargets
        var schemas: [String: ComponentSchema] = [:]
        for schema in customComponents { schemas[schema.name] = schema }
        for schema in ComponentSchema.builtIns { schemas[schema.name] = schema }
        self.schemas = schemas
        self.customActions = customActions
    }

    /// The action identifiers every client knows.
    public static let builtInActions: Set<String> = ["navigation", "executable"]

    /// Each schema, built-ins included, replaced by what `transform` makes of it, or removed when it
    /// makes nil (the catalog of an app version that lacks some of them).
    public mutating func replaceSchemas(_ transform: (ComponentSchema) -> ComponentSchema?) {
        schemas = schemas.compactMapValues(transform)
    }

    /// The schema of the component type `name`, if the app knows it.
    public func schema(named name: String) -> ComponentSchema? {
        schemas[name]
    }
}

/// The screens a navigation action may open, and how to tell whether a target opens one.
public struct NavigationTargets: Sendable {
    /// The screens' names, for suggestions.
    public var names: [String]
    private let check: @Sendable (String) -> String?

    /// - Parameter problem: why a target opens no screen, or nil when it opens one.
    public init(names: [String], problem: @escaping @Sendable (String) -> String?) {
        self.names = names
        self.check = problem
    }

    /// Targets that are exactly these names.
    public init(_ names: Set<String>) {
        self.init(names: names.sorted()) { names.contains($0) ? nil : NavigationTargets.notAScreen }
    }

    /// Why `target` opens no screen, as a predicate (`is not a screen; ...`), or nil when it opens one.
    public func problem(_ target: String) -> String? { check(target) }

    /// The problem of a target that matches no screen.
    public static let notAScreen = "is not a screen; name an existing screen"
}

/// How strictly a value is checked.
public enum CheckMode: Sendable {
    /// A value an author wrote: it must decode exactly as written.
    case definition
    /// A value from a data source: lossless conversions are applied (a number becomes the string
    /// the author would have written) and collection items that would not decode are dropped, as the
    /// client would drop them, and reported.
    case data
}

/// The outcome of checking one value.
public struct CheckResult: Sendable, Equatable {
    /// The value to send (converted in ``CheckMode/data``), or `nil` when it cannot be sent.
    public var value: JSONValue?
    /// Why the value, or a part of it, was rejected, converted away or dropped.
    public var violations: [SchemaViolation]

    /// Whether the value can be sent.
    public var isValid: Bool { value != nil }
}

extension ComponentCatalog {
    /// The identifiers of the components the client asks data for (those of a dynamic type), in
    /// order: the only ones a data entry may name.
    public func dynamicIdentifiers(of components: [Component]) -> [String] {
        components.filter { schema(named: $0.name)?.isDynamic == true }.map(\.identifier)
    }

    /// Checks a component's whole `content` against the schema of `componentName`.
    public func check(content: JSONValue, of componentName: String, mode: CheckMode = .definition) -> CheckResult {
        guard let schema = schema(named: componentName) else {
            return CheckResult(value: nil, violations: [unknownComponent(componentName, at: .root)])
        }
        return check(content: content, schema: schema, fields: schema.fields, mode: mode, at: .root)
    }

    /// Checks the content of a data entry for a component of `componentName`: only its dynamic
    /// fields, of which the required ones must be present.
    /// - Parameter staticContent: the component's content in the skeleton, for fields whose type
    ///   depends on a static sibling (a collection's items are checked against its `component_name`).
    public func check(
        dataContent: JSONValue, of componentName: String, staticContent: [String: JSONValue] = [:], mode: CheckMode = .data
    ) -> CheckResult {
        guard let schema = schema(named: componentName) else {
            return CheckResult(value: nil, violations: [unknownComponent(componentName, at: .root)])
        }
        return check(
            content: dataContent, schema: schema, fields: schema.dynamicFields, mode: mode, at: .root, context: staticContent
        )
    }

    /// Checks one value against a field type.
    /// - Parameter siblings: the object holding the value, for types that depend on a sibling
    ///   field (a collection's `values` depend on its `component_name`).
    public func check(
        _ value: JSONValue, as type: FieldType, siblings: [String: JSONValue] = [:], mode: CheckMode = .definition,
        at path: JSONPath = .root
    ) -> CheckResult {
        func invalid(_ code: SchemaViolation.Code, _ message: String) -> CheckResult {
            CheckResult(value: nil, violations: [SchemaViolation(code: code, path: path, message: message)])
        }
        func wrongType(_ expected: String) -> CheckResult {
            invalid(.wrongType, "expected \(expected), found \(value.typeName) \(Self.excerpt(value))")
        }
        let ok = CheckResult(value: value, violations: [])

        switch type {
        case .string:
            if case .string = value { return ok }
            if mode == .data, let converted = Self.losslessString(value) {
                return CheckResult(value: .string(converted), violations: [])
            }
            return wrongType("a string")
        case .number:
            if case .number = value { return ok }
            return wrongType("a number")
        case .integer:
            if value.exactInteger != nil { return ok }
            if case .number = value {
                return invalid(.wrongType, "expected an integer, found \(Self.excerpt(value)) which has a fraction")
            }
            return wrongType("an integer")
        case .bool:
            if case .bool = value { return ok }
            return wrongType("true or false")
        case .url:
            guard let string = value.stringValue else { return wrongType("a URL string") }
            guard URLSyntax.isAbsoluteURL(string) else {
                return invalid(
                    .invalidURL,
                    "\(Self.excerpt(value)) is not an absolute URL the client can decode; write it with a scheme (https://...) and percent-encode spaces"
                )
            }
            return ok
        case .enumeration(let values):
            guard let string = value.stringValue else {
                return wrongType("one of \(values.joined(separator: ", "))")
            }
            guard values.contains(string) else {
                return invalid(
                    .unknownEnumValue,
                    "\"\(string)\" is not a known value; use one of \(values.joined(separator: ", "))"
                        + NameSuggestion.hint(for: string, among: values)
                )
            }
            return ok
        case .action:
            return checkAction(value, at: path)
        case .object(let fields):
            guard case .object = value else { return wrongType("an object") }
            guard let fields else { return ok }
            return check(content: value, schema: nil, fields: fields, mode: mode, at: path)
        case .array(let items):
            guard case .array(let elements) = value else { return wrongType("an array") }
            guard let items else { return ok }
            return checkElements(elements, as: items, mode: mode, at: path)
        case .componentContents(let nameField):
            guard case .array(let elements) = value else { return wrongType("an array of component contents") }
            guard let itemType = siblings[nameField]?.stringValue, let itemSchema = schema(named: itemType) else {
                // The sibling's own check reports a missing or unknown component name.
                return CheckResult(value: value, violations: [])
            }
            return checkItems(elements, of: itemSchema, mode: mode, at: path)
        }
    }

    /// An array's elements; an array whose element fails to decode fails as a whole on the client.
    private func checkElements(_ elements: [JSONValue], as items: FieldType, mode: CheckMode, at path: JSONPath) -> CheckResult {
        var checked: [JSONValue] = []
        var violations: [SchemaViolation] = []
        for (index, element) in elements.enumerated() {
            let result = check(element, as: items, mode: mode, at: path.appending(index))
            violations += result.violations
            if let converted = result.value { checked.append(converted) }
        }
        return CheckResult(value: checked.count == elements.count ? .array(checked) : nil, violations: violations)
    }

    /// A collection's items, each the content of a component of `schema`. The client drops an
    /// item that fails to decode; in definitions that is an error, in data the item is dropped
    /// here so the payload says exactly what the client will show.
    private func checkItems(_ elements: [JSONValue], of schema: ComponentSchema, mode: CheckMode, at path: JSONPath) -> CheckResult {
        var kept: [JSONValue] = []
        var violations: [SchemaViolation] = []
        for (index, element) in elements.enumerated() {
            let result = check(content: element, schema: schema, fields: schema.fields, mode: mode, at: path.appending(index))
            violations += result.violations
            if let converted = result.value { kept.append(converted) }
        }
        if mode == .definition, !violations.isEmpty { return CheckResult(value: nil, violations: violations) }
        return CheckResult(value: .array(kept), violations: violations)
    }

    private func check(
        content: JSONValue, schema: ComponentSchema?, fields: [FieldSchema], mode: CheckMode, at path: JSONPath,
        context: [String: JSONValue] = [:]
    ) -> CheckResult {
        if schema?.acceptsAnyContent == true { return CheckResult(value: content, violations: []) }
        guard case .object(let members) = content else {
            return CheckResult(
                value: nil,
                violations: [
                    SchemaViolation(
                        code: .wrongType, path: path,
                        message: "expected an object of fields, found \(content.typeName) \(Self.excerpt(content))"
                    )
                ]
            )
        }
        var output = members
        var violations: [SchemaViolation] = []
        var valid = true
        let siblings = context.isEmpty ? members : context.merging(members) { _, own in own }
        for field in fields {
            let fieldPath = path.appending(field.name)
            guard let value = members[field.name] else {
                if field.isRequired {
                    valid = false
                    violations.append(
                        SchemaViolation(
                            code: .missingField, path: fieldPath,
                            message: "required field \"\(field.name)\" (\(field.type.name)) is missing; add it"
                        )
                    )
                }
                continue
            }
            if value.isNull {
                if field.isRequired {
                    valid = false
                    violations.append(
                        SchemaViolation(
                            code: .nullField, path: fieldPath,
                            message: "\"\(field.name)\" is null, which the client cannot decode; give it a \(field.type.name) value"
                        )
                    )
                }
                continue
            }
            let result = check(value, as: field.type, siblings: siblings, mode: mode, at: fieldPath)
            violations += result.violations
            if let converted = result.value {
                output[field.name] = converted
            } else if field.isRequired || mode == .definition {
                valid = false
            } else {
                // An optional field from data that would not decode is left out, which decodes.
                output[field.name] = nil
            }
        }
        return CheckResult(value: valid ? .object(output) : nil, violations: violations)
    }

    private func checkAction(_ value: JSONValue, at path: JSONPath) -> CheckResult {
        func invalid(_ code: SchemaViolation.Code, _ subpath: JSONPath, _ message: String) -> CheckResult {
            CheckResult(value: nil, violations: [SchemaViolation(code: code, path: subpath, message: message)])
        }
        guard case .object(let members) = value else {
            return invalid(
                .invalidAction, path,
                "expected an action object {\"identifier\": ..., \"content\": {...}}, found \(value.typeName)"
            )
        }
        guard let identifier = members["identifier"]?.stringValue else {
            return invalid(
                .invalidAction, path.appending("identifier"),
                "an action needs a string \"identifier\": navigation, executable or a custom action the app registered"
            )
        }
        guard let content = members["content"], case .object(let fields) = content else {
            return invalid(
                .invalidAction, path.appending("content"),
                "action \"\(identifier)\" needs a \"content\" object (use {} when it has no parameters)"
            )
        }
        switch identifier {
        case "navigation":
            guard let target = fields["interface_identifier"]?.stringValue else {
                return invalid(
                    .invalidAction, path.appending("content").appending("interface_identifier"),
                    "a navigation action needs the target screen's name as a string \"interface_identifier\""
                )
            }
            if let targets = navigationTargets, let problem = targets.problem(target) {
                return invalid(
                    .brokenNavigation, path.appending("content").appending("interface_identifier"),
                    "navigation target \"\(target)\" \(problem)"
                        + NameSuggestion.hint(for: target, among: targets.names)
                )
            }
        case "executable":
            if fields["name"]?.stringValue == nil {
                return invalid(
                    .invalidAction, path.appending("content").appending("name"),
                    "an executable action needs a string \"name\" (the app-side action to run)"
                )
            }
        default:
            if !customActions.contains(identifier) {
                let known = Self.builtInActions.union(customActions)
                return invalid(
                    .unknownAction, path.appending("identifier"),
                    "action \"\(identifier)\" is not one the app knows, so the whole screen would fail to decode; use navigation, executable or declare it as a custom action"
                        + NameSuggestion.hint(for: identifier, among: known)
                )
            }
        }
        return CheckResult(value: value, violations: [])
    }

    private func unknownComponent(_ name: String, at path: JSONPath) -> SchemaViolation {
        SchemaViolation(
            code: .unknownComponent, path: path,
            message: "component type \"\(name)\" is not known to the app; use a built-in type or declare it in Screens/components/"
                + NameSuggestion.hint(for: name, among: schemas.keys)
        )
    }

    /// The string a number or Boolean would have been written as, so `4.5` can fill a string field.
    public static func losslessString(_ value: JSONValue) -> String? {
        switch value {
        case .number, .bool: JSONWriter.string(value)
        default: nil
        }
    }

    /// A short rendering of a value for messages.
    static func excerpt(_ value: JSONValue) -> String {
        let text = JSONWriter.string(value)
        return text.count <= 40 ? text : String(text.prefix(37)) + "..."
    }
}
