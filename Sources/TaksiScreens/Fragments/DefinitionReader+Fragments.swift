import TaksiSchema

// Reading fragment files (`fragments/<name>.yaml`) into ``Fragment``s.
extension DefinitionReader {
    /// Reads one fragment file; nil (reported) when it cannot be used.
    mutating func readFragment(_ root: JSONNode, name: String, catalog: ComponentCatalog) -> Fragment? {
        let path = JSONPath.root
        if name.isEmpty || !name.unicodeScalars.allSatisfy({ Self.isIdentifierScalar($0) || $0 == "/" || $0 == "-" }) {
            report(
                .invalidName, at: root, path: path,
                "fragment \"\(name)\" is named by its file's path under fragments/; use letters, digits, '_', '-' and '/' (like cards/restaurant.yaml)"
            )
            return nil
        }
        guard let members = object(root, at: path, what: "a fragment", allowed: Fragment.keys) else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        _ = string(member("description"), at: path.appending("description"), what: "description")
        let kind: Fragment.Kind
        switch (member("components"), member("content")) {
        case (let components?, nil):
            guard components.elements != nil else {
                report(.wrongType, at: components, path: path.appending("components"), "components must be an array of components")
                return nil
            }
            kind = .components
        case (nil, _?):
            kind = .content
        default:
            report(
                .missingKey, at: root, path: path,
                "a fragment holds exactly one of \"components\" (a run of components, used in a components list) or \"content\" (one value, used where a value goes)"
            )
            return nil
        }
        var parameters: [Fragment.Parameter] = []
        var valid = true
        if let parametersNode = member("parameters") {
            let parametersPath = path.appending("parameters")
            guard let parameterMembers = parametersNode.members else {
                report(
                    .wrongType, at: parametersNode, path: parametersPath,
                    "parameters must be an object of named parameters, like {title: {type: string}}")
                return nil
            }
            for parameterMember in parameterMembers {
                let parameterPath = parametersPath.appending(parameterMember.key)
                guard !parameterMember.key.isEmpty, parameterMember.key.unicodeScalars.allSatisfy(Self.isIdentifierScalar) else {
                    report(
                        .invalidName, offset: parameterMember.keyOffset, path: parameterPath,
                        "parameter names use letters, digits and '_' (like title)")
                    valid = false
                    continue
                }
                guard let parameter = readFragmentParameter(parameterMember, at: parameterPath, catalog: catalog) else {
                    valid = false
                    continue
                }
                parameters.append(parameter)
            }
        }
        guard valid else { return nil }
        let fragment = Fragment(
            name: name, file: file, root: root, kind: kind, bodyPath: path.appending(kind == .components ? "components" : "content"),
            parameters: parameters, paths: Self.paths(of: root)
        )
        reportUnusedParameters(of: fragment)
        return fragment
    }

    private mutating func readFragmentParameter(
        _ member: JSONNode.Member, at path: JSONPath, catalog: ComponentCatalog
    ) -> Fragment.Parameter? {
        guard let members = object(member.value, at: path, what: "a parameter", allowed: Fragment.parameterKeys, required: ["type"]) else {
            return nil
        }
        _ = string(members.first { $0.key == "summary" }?.value, at: path.appending("summary"), what: "summary")
        let defaultValue = members.first { $0.key == "default" }?.value
        if member.value["type"]?.stringValue == "data" {
            if let defaultValue {
                report(
                    .invalidSchema, at: defaultValue, path: path.appending("default"),
                    "a data parameter names a value of the using screen, so it has no default; remove it, or make the parameter a typed value"
                )
                return nil
            }
            return Fragment.Parameter(name: member.key, kind: .data, defaultValue: nil)
        }
        if let typeNode = member.value["type"], let typeName = typeNode.stringValue, !FieldType.names.contains(typeName) {
            let names = FieldType.names + ["data"]
            report(
                .invalidSchema, at: typeNode, path: path.appending("type"),
                "unknown type \"\(typeName)\"; use data (a binding path of the using screen) or a field type: \(FieldType.names.joined(separator: ", "))"
                    + NameSuggestion.hint(for: typeName, among: names)
            )
            return nil
        }
        guard let type = readFieldType(member.value, at: path) else { return nil }
        // A string's default may be a message ({$text: guest}): placed where the parameter is
        // used, it is compiled there, in each locale, like any $text.
        let isText = type == .string && defaultValue?[ScreenCompiler.textKey] != nil
        if let defaultValue, !isText {
            let result = catalog.check(defaultValue.value, as: type, mode: .definition)
            report(result.violations, in: defaultValue, at: path.appending("default"))
            guard result.isValid else { return nil }
        }
        return Fragment.Parameter(name: member.key, kind: .value(type), defaultValue: defaultValue)
    }

    /// A parameter nothing in the fragment reads is a warning: a use's argument would be dropped.
    private mutating func reportUnusedParameters(of fragment: Fragment) {
        let body = fragment.root.closestNode(at: fragment.bodyPath)
        var read = ScreenCompiler.sourcesNamed(in: body)
        func placed(_ node: JSONNode) {
            switch node.kind {
            case .object(let members):
                for member in members {
                    if member.key == Fragment.parameterKey, let name = member.value.stringValue { read.insert(name) }
                    if member.key == Fragment.argumentsKey {
                        // A nested use's data arguments are binding paths of this fragment.
                        for argument in member.value.members ?? [] {
                            if let text = argument.value.stringValue, let path = ValuePath(parsing: text) { read.insert(path.root) }
                        }
                    }
                    placed(member.value)
                }
            case .array(let elements):
                elements.forEach(placed)
            default:
                break
            }
        }
        placed(body)
        for parameter in fragment.parameters where !read.contains(parameter.name) {
            let parameterPath = JSONPath.root.appending("parameters").appending(parameter.name)
            report(
                .unusedParameter, at: fragment.root.closestNode(at: parameterPath), path: parameterPath,
                "parameter \"\(parameter.name)\" is never read by the fragment; use it (\(parameter.isData ? "{$bind: \(parameter.name)}" : "{$param: \(parameter.name)}")) or remove it",
                severity: .warning
            )
        }
    }
}
