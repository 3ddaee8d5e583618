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
                reader.report(.wrongType, at: parametersNode, path: parametersPath, "parameters must be an object of named query parameters")
                return nil
            }
            var parameters: [String: RequestParameter] = [:]
            for member in parameterMembers
            where !reader.isReservedParameter(member, at: parametersPath.appending(member.key))
                && !isPathParameter(member, at: parametersPath.appending(member.key))
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

    /// - Parameter inputs: an action's inputs, which its call's templates fill in (a call declares
    ///   no `parameters` of its own); nil for an http source.
    mutating func readHTTPSource(_ members: [JSONNode.Member], at path: JSONPath, inputs: [String: RequestParameter]? = nil) -> HTTPSource? {
        let member = { (key: String) in members.first { $0.key == key }?.value }
        var valid = true
        var parameters: [String: RequestParameter] = inputs ?? [:]
        if inputs == nil, let parametersNode = member("parameters") {
            if let parameterMembers = parametersNode.members {
                for parameterMember in parameterMembers {
                    let parameterPath = path.appending("parameters").appending(parameterMember.key)
                    guard !reader.isReservedParameter(parameterMember, at: parameterPath),
                        !isPathParameter(parameterMember, at: parameterPath),
                        let parameter = reader.parameter(parameterMember.value, at: parameterPath)
                    else {
                        valid = false
                        continue
                    }
                    parameters[parameterMember.key] = parameter
                }
            } else {
                reader.report(.wrongType, at: parametersNode, path: path.appending("parameters"), "parameters must be an object of named query parameters")
                valid = false
            }
        }
        let declared = parameters.keys.sorted()
        func template(_ node: JSONNode, at path: JSONPath, what: String) -> [HTTPSource.Part]? {
            let text: String
            switch node.value {
            case .string(let string): text = string
            case .number, .bool: text = JSONWriter.string(node.value)
            default:
                reader.report(.wrongType, at: node, path: path, "\(what) must be a string, found \(node.typeName)")
                return nil
            }
            switch HTTPSource.parseTemplate(text) {
            case .failure(let error):
                reader.report(.invalidSource, at: node, path: path, "\(what) \"\(text)\": \(error.message)")
                return nil
            case .success(let parts):
                for name in HTTPSource.parameterNames(parts) where parameters[name] == nil && pattern.parameters[name] == nil {
                    let known = declared + pattern.parameterNames
                    reader.report(
                        .invalidSource, at: node, path: path,
                        (inputs == nil
                            ? "{\(name)} is not a parameter of this source or of the screen's path; declare it under \"parameters\""
                            : "{\(name)} is not an input of this action or a parameter of the screen's path; declare it under \"inputs\"")
                            + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))")
                            + NameSuggestion.hint(for: name, among: known)
                    )
                    return nil
                }
                return parts
            }
        }

        let upstream = reader.string(member("upstream"), at: path.appending("upstream"), what: "upstream")
        if let upstream, let node = member("upstream"),
            upstream.isEmpty || !upstream.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || $0 == "-" })
        {
            reader.report(.invalidSource, at: node, path: path.appending("upstream"), "upstream names a key of \"upstreams\" in config.json, like citybikes")
            valid = false
        } else if let upstream, let node = member("upstream"), let known = upstreams, !known.contains(upstream) {
            let names = known.sorted()
            reader.report(
                .unknownUpstream, at: node, path: path.appending("upstream"),
                "upstream \"\(upstream)\" is not configured; add it to \"upstreams\" in config.json and restart the server, which reads its configuration at start-up"
                    + (names.isEmpty ? "" : " (configured: \(names.joined(separator: ", ")))") + NameSuggestion.hint(for: upstream, among: names)
            )
            valid = false
        }
        var pathParts: [HTTPSource.Part]?
        if let pathNode = member("path") {
            if pathNode.stringValue?.hasPrefix("/") == false {
                reader.report(.invalidSource, at: pathNode, path: path.appending("path"), "the path starts with \"/\", like /v2/networks")
                valid = false
            } else {
                pathParts = template(pathNode, at: path.appending("path"), what: "the path")
            }
        }
        var query: [HTTPSource.QueryItem] = []
        if let queryNode = member("query") {
            if let items = queryNode.members {
                for item in items {
                    if let value = template(item.value, at: path.appending("query").appending(item.key), what: "query value") {
                        query.append(HTTPSource.QueryItem(name: item.key, value: value))
                    } else {
                        valid = false
                    }
                }
            } else {
                reader.report(.wrongType, at: queryNode, path: path.appending("query"), "query must be an object of names and values")
                valid = false
            }
        }
        var headers: [String] = []
        if let headersNode = member("headers") {
            if case .array(let elements) = headersNode.kind {
                for (index, element) in elements.enumerated() {
                    let elementPath = path.appending("headers").appending(index)
                    guard let name = reader.string(element, at: elementPath, what: "a header name") else {
                        valid = false
                        continue
                    }
                    if !HTTPSource.isHeaderName(name) {
                        reader.report(.invalidSource, at: element, path: elementPath, "\"\(name)\" is not a header name")
                        valid = false
                    } else if HTTPSource.unforwardableHeaders.contains(name.lowercased()) {
                        reader.report(.invalidSource, at: element, path: elementPath, "\(name) describes this connection and is never forwarded; remove it")
                        valid = false
                    } else {
                        headers.append(name)
                    }
                }
            } else {
                reader.report(.wrongType, at: headersNode, path: path.appending("headers"), "headers must be a list of request header names, like [Authorization]")
                valid = false
            }
        }
        guard valid, let upstream, let pathParts else { return nil }
        var source = HTTPSource(upstream: upstream, path: pathParts, query: query, parameters: parameters, forwardedHeaders: headers)
        func seconds(_ key: String, _ range: ClosedRange<Double>) -> Double? {
            guard let node = member(key) else { return nil }
            guard case .number(let value) = node.value, range.contains(value) else {
                reader.report(
                    .invalidSource, at: node, path: path.appending(key),
                    "\(key) is a number of seconds from \(JSONWriter.string(.number(range.lowerBound))) to \(JSONWriter.string(.number(range.upperBound)))"
                )
                valid = false
                return nil
            }
            return value
        }
        if let timeout = seconds("timeout", 0.001...60) { source.timeout = .nanoseconds(Int64((timeout * 1e9).rounded())) }
        if let ttl = seconds("ttl", 0...86_400) { source.ttl = ttl }
        if let swr = seconds("stale_while_revalidate", 0...86_400) { source.staleWhileRevalidate = swr }
        if let sie = seconds("stale_if_error", 0...604_800) { source.staleIfError = sie }
        if let node = member("max_bytes") {
            if let bytes = node.value.exactInteger, (1...(64 << 20)).contains(bytes) {
                source.maxBytes = bytes
            } else {
                reader.report(.invalidSource, at: node, path: path.appending("max_bytes"), "max_bytes is a whole number of bytes from 1 to 67108864")
                valid = false
            }
        }
        source.fallback = member("fallback")?.value
        return valid ? source : nil
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

    /// Reports a query parameter named like one of the screen's path parameters; true when it did.
    private mutating func isPathParameter(_ member: JSONNode.Member, at path: JSONPath) -> Bool {
        guard pattern.parameters[member.key] != nil else { return false }
        reader.report(
            .invalidName, offset: member.keyOffset, path: path,
            "\"\(member.key)\" is a path parameter of this screen (\(pattern.name)); an http source's path and query use {\(member.key)} as they are, bindings read path.\(member.key); remove this declaration"
        )
        return true
    }
}
