import TaksiSchema

// Reading a screen file's `sources`: fixtures, request parameters and http upstreams (an
// action's call is read as an http source too).

extension ScreenCompiler {
    mutating func readSources(_ node: JSONNode, at path: JSONPath) {
        guard let members = node.members else {
            reader.report(.wrongType, at: node, path: path, "sources must be an object of named sources")
            return
        }
        for member in members {
            let sourcePath = path.appending(member.key)
            guard member.key.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar), !member.key.isEmpty else {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: sourcePath,
                    "source names use letters, digits and '_' so bindings can name them (like user_profile)"
                )
                continue
            }
            if member.key == Self.pathSourceName, pattern.hasParameters {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: sourcePath,
                    "\"\(Self.pathSourceName)\" is the source of this screen's path parameters ({$bind: path.\(pattern.parameterNames[0])}); name this source otherwise"
                )
                invalidSources.insert(member.key)
                continue
            }
            if let source = readSource(member.value, at: sourcePath) {
                sources[member.key] = source
            } else {
                invalidSources.insert(member.key)
            }
        }
    }

    private mutating func readSource(_ node: JSONNode, at path: JSONPath) -> SourceDefinition? {
        guard let typeNode = node["type"], let type = typeNode.stringValue else {
            reader.report(
                .missingKey, at: node["type"] ?? node, path: path.appending("type"),
                "a source needs a string \"type\": one of \(SourceDefinition.kindNames.joined(separator: ", "))"
            )
            return nil
        }
        switch type {
        case "fixture":
            guard
                let members = reader.object(
                    node, at: path, what: "a fixture source", allowed: ["type", "value", "file", "summary"]
                )
            else { return nil }
            let value = members.first { $0.key == "value" }?.value
            let file = members.first { $0.key == "file" }?.value
            switch (value, file) {
            case (let value?, nil):
                return .fixture(value.value)
            case (nil, let file?):
                guard let relativePath = reader.string(file, at: path.appending("file"), what: "file") else { return nil }
                guard let loaded = loadFixture(relativePath, file, path.appending("file"), &reader) else { return nil }
                if let normalized = ScreenSetLoader.normalizedRelativePath(relativePath) { fixturesRead.insert(normalized) }
                return .fixture(loaded)
            default:
                reader.report(
                    .invalidSource, at: node, path: path,
                    "a fixture source needs exactly one of \"value\" (inline JSON) or \"file\" (a JSON file under the screens directory)"
                )
                return nil
            }
        case "request":
            guard
                let members = reader.object(
                    node, at: path, what: "a request source", allowed: ["type", "parameters", "summary"],
                    required: ["parameters"]
                ),
                let parametersNode = members.first(where: { $0.key == "parameters" })?.value
            else { return nil }
            let parametersPath = path.appending("parameters")
            guard let parameterMembers = parametersNode.members else {
                reader.report(
                    .wrongType, at: parametersNode, path: parametersPath, "parameters must be an object of named query parameters")
                return nil
            }
            var parameters: [String: RequestParameter] = [:]
            for member in parameterMembers
            where !reader.isReservedParameter(member, at: parametersPath.appending(member.key))
                && !HTTPSourceReader.isPathParameter(member, at: parametersPath.appending(member.key), of: pattern, &reader)
            {
                if let parameter = reader.parameter(member.value, at: parametersPath.appending(member.key)) {
                    parameters[member.key] = parameter
                }
            }
            return .request(parameters)
        case "http":
            guard
                let members = reader.object(
                    node, at: path, what: "an http source", allowed: HTTPSource.keys, required: ["upstream", "path"]
                )
            else { return nil }
            return readHTTPSource(members, at: path).map { .http($0) }
        default:
            reader.report(
                .invalidSource, at: typeNode, path: path.appending("type"),
                "unknown source type \"\(type)\"; use one of \(SourceDefinition.kindNames.joined(separator: ", "))"
                    + NameSuggestion.hint(for: type, among: SourceDefinition.kindNames)
            )
            return nil
        }
    }

    /// An `http` source, or an action's call (see ``HTTPSourceReader``).
    /// - Parameter inputs: an action's inputs, which its call's templates fill in (a call declares
    ///   no `parameters` of its own); nil for an http source.
    mutating func readHTTPSource(_ members: [JSONNode.Member], at path: JSONPath, inputs: [String: RequestParameter]? = nil) -> HTTPSource?
    {
        var sourceReader = HTTPSourceReader(members: members, path: path, pattern: pattern, upstreams: upstreams, inputs: inputs)
        return sourceReader.read(reporting: &reader)
    }

    /// The roots of every `$bind`, `$each` and `$template` reference in a definition, read loosely
    /// (for a component that failed to compile, whose bindings were never read properly).
    static func sourcesNamed(in node: JSONNode) -> Set<String> {
        func root(_ path: Substring) -> String {
            String(path.prefix { $0 != "." && $0 != "[" && $0 != "}" }).trimmingSpaces
        }
        var names: Set<String> = []
        switch node.kind {
        case .object(let members):
            for member in members {
                if let text = member.value.stringValue {
                    switch member.key {
                    case "$bind", "$each": names.insert(root(text[...]))
                    case "$template":
                        for piece in text.split(separator: "{").dropFirst() where !piece.hasPrefix("{") { names.insert(root(piece)) }
                    default: break
                    }
                }
                names.formUnion(sourcesNamed(in: member.value))
            }
        case .array(let elements):
            for element in elements { names.formUnion(sourcesNamed(in: element)) }
        default:
            break
        }
        return names
    }
}
