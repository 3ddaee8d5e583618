import TaksiSchema

/// Turns one screen file into a ``CompiledScreen``: checks every component against the catalog,
/// every binding against the screen's sources and every field's dynamic-ness, then builds the
/// skeleton (typed placeholders, `requires_data` exactly where data will come) and the data plan.
struct ScreenCompiler {
    /// The keys a screen file may have at its top level.
    static let screenKeys = ["name", "description", "entry", "parameters", "version", "alternative", "experiment", "sources", "components", "actions"]
    /// The source a screen's path parameters are bound as: `{$bind: path.network}`.
    static let pathSourceName = "path"
    static let bindingKeys = ["$bind", "$template", "$each"]

    let name: String
    /// The screen's path shape and parameter types (read before compiling, with every screen's).
    let pattern: ScreenPattern
    /// Every screen's path shape, for navigation targets.
    let routes: ScreenRoutes
    let catalog: ComponentCatalog
    /// The first app version that knows each custom component type that declares one.
    let componentSince: [String: Version]
    /// Reads a fixture file named in a `fixture` source; reports its own diagnostics.
    let loadFixture: (_ relativePath: String, _ reference: JSONNode, _ path: JSONPath, _ reader: inout DefinitionReader) -> JSONValue?
    var reader: DefinitionReader

    var sources: [String: SourceDefinition] = [:]
    var usedSources: Set<String> = []
    /// Sources declared with errors: bindings to them are not reported again.
    private var invalidSources: Set<String> = []
    /// While an action is read: what reads the bindings (`an action's body`), for messages.
    var actionContext: String?
    /// Configured upstream names, when known.
    private let upstreams: Set<String>?

    init(
        pattern: ScreenPattern, routes: ScreenRoutes, file: SourceFile, catalog: ComponentCatalog, componentSince: [String: Version] = [:],
        upstreams: Set<String>? = nil, loadFixture: @escaping (String, JSONNode, JSONPath, inout DefinitionReader) -> JSONValue?
    ) {
        self.name = pattern.name
        self.pattern = pattern
        self.routes = routes
        self.upstreams = upstreams
        self.catalog = catalog
        self.componentSince = componentSince
        self.loadFixture = loadFixture
        self.reader = DefinitionReader(file: file)
    }

    mutating func compile(_ root: JSONNode) -> CompiledScreen? {
        let path = JSONPath.root
        guard
            let members = reader.object(
                root, at: path, what: "a screen", allowed: Self.screenKeys, required: ["name", "components"]
            )
        else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        _ = reader.string(member("description"), at: path.appending("description"), what: "description")
        _ = reader.bool(member("entry"), at: path.appending("entry"), what: "entry")
        let requirement = member("version").flatMap { readRequirement($0, at: path.appending("version")) }
        var alternative = CompiledScreen.defaultAlternative
        if let alternativeNode = member("alternative"),
            let given = reader.string(alternativeNode, at: path.appending("alternative"), what: "alternative")
        {
            if given.isEmpty || !given.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || $0 == "-" }) {
                reader.report(
                    .invalidName, at: alternativeNode, path: path.appending("alternative"),
                    "an alternative's name uses letters, digits, '-' and '_' (like B or compact)"
                )
            }
            alternative = given
        }
        let experiment = member("experiment").flatMap { readExperiment($0, at: path.appending("experiment"), alternative: alternative) }
        if pattern.hasParameters { sources[Self.pathSourceName] = .path(pattern.parameters) }
        if let sourcesNode = member("sources") {
            readSources(sourcesNode, at: path.appending("sources"))
        }
        guard let componentsNode = member("components") else { return nil }
        let componentsPath = path.appending("components")
        guard let componentNodes = componentsNode.elements else {
            reader.report(.wrongType, at: componentsNode, path: componentsPath, "components must be an array of components")
            return nil
        }

        var components: [Component] = []
        var entries: [DataPlan.Entry] = []
        var identifiers: [String: JSONPath] = [:]
        var componentIndices: [String: Int] = [:]
        for (index, node) in componentNodes.enumerated() {
            let componentPath = componentsPath.appending(index)
            guard let (component, entry) = compileComponent(node, index: index, at: componentPath) else {
                // Its own error is reported; the sources it names are not "never used" on top of it.
                usedSources.formUnion(Self.sourcesNamed(in: node))
                continue
            }
            if let first = identifiers[component.identifier] {
                reader.report(
                    .duplicateIdentifier, at: node["identifier"] ?? node, path: componentPath.appending("identifier"),
                    "identifier \"\(component.identifier)\" is already used by \(first); identifiers must be unique within a screen (two dynamic components with one identifier crash the app)"
                )
            }
            identifiers[component.identifier] = componentPath
            componentIndices[component.identifier] = index
            components.append(component)
            if let entry { entries.append(entry) }
        }

        let actions = member("actions").map { readActions($0, at: path.appending("actions"), components: components) } ?? []

        for (sourceName, source) in sources where !usedSources.contains(sourceName) {
            if case .path = source { continue }
            let sourcePath = path.appending("sources").appending(sourceName)
            reader.report(
                .unknownSource, at: root.closestNode(at: sourcePath), path: sourcePath,
                "source \"\(sourceName)\" is never used; bind a field to it or remove it", severity: .warning
            )
        }

        checkComponentVersions(componentNodes, requirement: requirement, at: componentsPath)
        let plan = DataPlan(sources: sources.filter { usedSources.contains($0.key) }, entries: entries)
        let staticData = plan.isStatic ? buildStaticData(plan, componentNodes: componentNodes, indices: componentIndices, at: componentsPath) : nil
        guard !reader.diagnostics.containsErrors else { return nil }
        return CompiledScreen(
            name: name, pattern: pattern, file: reader.file.path, requirement: requirement, alternative: alternative, experiment: experiment,
            skeleton: Skeleton(components: components), dataPlan: plan, staticData: staticData, actions: actions
        )
    }

    // MARK: Variants

    private mutating func readRequirement(_ node: JSONNode, at path: JSONPath) -> VersionRequirement? {
        guard let text = reader.string(node, at: path, what: "version") else { return nil }
        do {
            return try VersionRequirement(parsing: text)
        } catch {
            reader.report(.invalidVersion, at: node, path: path, "\"\(text)\" is not a version requirement: \(error.message)")
            return nil
        }
    }

    private mutating func readExperiment(_ node: JSONNode, at path: JSONPath, alternative: String) -> Experiment? {
        guard
            let members = reader.object(
                node, at: path, what: "an experiment", allowed: ["name", "weights", "summary"], required: ["name", "weights"]
            ),
            let name = reader.string(members.first { $0.key == "name" }?.value, at: path.appending("name"), what: "the experiment's name"),
            let weightsNode = members.first(where: { $0.key == "weights" })?.value
        else { return nil }
        if alternative != CompiledScreen.defaultAlternative {
            reader.report(
                .invalidExperiment, at: node, path: path,
                "declare the experiment in the default alternative's file (the one without \"alternative\"), once for all alternatives"
            )
            return nil
        }
        guard !name.isEmpty else {
            reader.report(.invalidExperiment, at: node, path: path.appending("name"), "the experiment needs a name; it seeds the assignment")
            return nil
        }
        guard let weightMembers = weightsNode.members, !weightMembers.isEmpty else {
            reader.report(
                .invalidExperiment, at: weightsNode, path: path.appending("weights"),
                "weights must be an object of alternative names and whole-number weights, like {\"default\": 50, \"B\": 50}"
            )
            return nil
        }
        var weights: [String: Int] = [:]
        for member in weightMembers {
            guard let weight = member.value.value.exactInteger, weight >= 0 else {
                reader.report(
                    .invalidExperiment, at: member.value, path: path.appending("weights").appending(member.key),
                    "a weight is a whole number of 0 or more"
                )
                return nil
            }
            weights[member.key] = weight
        }
        guard weights.values.reduce(0, +) > 0 else {
            reader.report(.invalidExperiment, at: weightsNode, path: path.appending("weights"), "at least one weight must be above 0")
            return nil
        }
        return Experiment(name: name, weights: weights)
    }

    /// A component type that apps only know since some version must not reach older apps: the
    /// variant's requirement has to exclude every version before it.
    private mutating func checkComponentVersions(_ nodes: [JSONNode], requirement: VersionRequirement?, at path: JSONPath) {
        guard !componentSince.isEmpty else { return }
        for (index, node) in nodes.enumerated() {
            for (type, typeNode, typePath) in Self.componentTypes(in: node, at: path.appending(index)) {
                guard let since = componentSince[type] else { continue }
                let admitsOlder: String?
                if let requirement {
                    admitsOlder = requirement.versions.intersection(.below(since)).example
                } else {
                    admitsOlder = "any version"
                }
                guard let older = admitsOlder else { continue }
                let served = requirement.map { "its version requirement \"\($0)\" admits \(older)" } ?? "it has no version requirement, so it is served to every app version"
                reader.report(
                    .componentTooNew, at: typeNode, path: typePath,
                    "\(type) is only known to apps since \(since), but \(served), and an older app would fail to decode the whole screen; add \"version\": \">= \(since)\" (and a variant without this component for older apps)"
                )
            }
        }
    }

    /// The component types a component uses: its own and, for collections, its items' (at any depth).
    static func componentTypes(in node: JSONNode, at path: JSONPath) -> [(String, JSONNode, JSONPath)] {
        var found: [(String, JSONNode, JSONPath)] = []
        if let nameNode = node["name"], let name = nameNode.stringValue { found.append((name, nameNode, path.appending("name"))) }
        func search(_ node: JSONNode, _ path: JSONPath) {
            switch node.kind {
            case .object(let members):
                for member in members {
                    if member.key == "component_name", let name = member.value.stringValue {
                        found.append((name, member.value, path.appending(member.key)))
                    }
                    search(member.value, path.appending(member.key))
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { search(element, path.appending(index)) }
            default:
                break
            }
        }
        if let content = node["content"] { search(content, path.appending("content")) }
        return found
    }

    // MARK: Sources

    private mutating func readSources(_ node: JSONNode, at path: JSONPath) {
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
        if let timeout = seconds("timeout", 0.001...60) { source.timeout = timeout }
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

    // MARK: Components

    private mutating func compileComponent(
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
                reader.report(.invalidName, at: identifierNode, path: path.appending("identifier"), "an identifier may not be empty; remove it to have one generated")
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

        // The skeleton holds literals as written and typed placeholders where data will come.
        var skeletonContent: [String: JSONValue] = [:]
        var dynamicFields: [String: ContentExpression] = [:]
        var requiresData = false
        if schema.acceptsAnyContent {
            skeletonContent = contentNode.value.objectValue ?? [:]
        }
        for (fieldName, expression) in fields {
            let field = schema.field(named: fieldName)
            if field?.isDynamic == true { dynamicFields[fieldName] = expression }
            if case .literal(let value) = expression {
                skeletonContent[fieldName] = value
                continue
            }
            requiresData = true
            if let field, field.isRequired {
                skeletonContent[fieldName] = Self.placeholder(for: expression, type: field.type)
            }
        }
        let component = Component(
            name: typeName, identifier: identifier, requiresData: requiresData, content: .object(skeletonContent)
        )
        let entry = requiresData ? DataPlan.Entry(
                identifier: identifier, componentName: typeName, staticContent: skeletonContent, fields: dynamicFields
            ) : nil
        return (component, entry)
    }

    private static func placeholder(for expression: ContentExpression, type: FieldType) -> JSONValue {
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
                reader.report(.staticFieldBound, at: node.closestNode(at: binding.relative), path: binding.absolute, "\(schema.name) has no fields to bind; remove the binding")
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
            guard let expression = compileValue(valueNode, as: field.type, at: fieldPath, siblings: members, scope: scope) else {
                valid = false
                continue
            }
            if topLevel, !expression.isLiteral, !field.isDynamic {
                valid = false
                let dynamic = fields.filter(\.isDynamic).map(\.name)
                reader.report(
                    .staticFieldBound, at: valueNode, path: fieldPath,
                    "\"\(field.name)\" is static: the client never updates it from data, so it cannot be bound; write a literal value"
                        + (dynamic.isEmpty ? "" : " (the dynamic fields here are \(dynamic.joined(separator: ", ")))")
                )
            }
            expressions[field.name] = expression
        }
        return valid ? expressions : nil
    }

    /// Compiles one value: a binding, a structure that holds bindings, or a literal that must decode
    /// as `type` (`nil` accepts any JSON, e.g. inside an untyped object).
    mutating func compileValue(
        _ node: JSONNode, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>
    ) -> ContentExpression? {
        if let members = node.members, let bindingKey = members.first(where: { $0.key.hasPrefix("$") })?.key {
            return compileBinding(node, key: bindingKey, as: type, at: path, siblings: siblings, scope: scope)
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
                guard let expression = compileValue(element, as: items, at: path.appending(index), siblings: [], scope: scope) else {
                    return nil
                }
                compiled.append(expression)
            }
            return Self.normalized(.array(compiled))
        case (.componentContents(let nameField), .array(let elements)):
            guard let itemSchema = itemSchema(nameField: nameField, siblings: siblings) else { return nil }
            var compiled: [ContentExpression] = []
            var valid = true
            for (index, element) in elements.enumerated() {
                guard let fields = compileContent(element, schema: itemSchema, at: path.appending(index), topLevel: false, scope: scope) else {
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
                guard let expression = compileValue(member.value, as: nil, at: path.appending(member.key), siblings: [], scope: scope) else {
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

    private mutating func itemSchema(nameField: String, siblings: [JSONNode.Member]) -> ComponentSchema? {
        // A missing or unknown item type is reported on the sibling field itself.
        guard let itemType = siblings.first(where: { $0.key == nameField })?.value.stringValue else { return nil }
        return catalog.schema(named: itemType)
    }

    private mutating func compileBinding(
        _ node: JSONNode, key: String, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>
    ) -> ContentExpression? {
        let bindingPath = path.appending(key)
        switch key {
        case "$bind":
            guard
                let members = reader.object(node, at: path, what: "a $bind binding", allowed: ["$bind", "default", "placeholder"]),
                let valuePath = readValuePath(members.first { $0.key == "$bind" }!.value, at: bindingPath, scope: scope)
            else { return nil }
            guard let options = readOptions(members, as: type, at: path) else { return nil }
            return .bind(valuePath, options)
        case "$template":
            guard
                let members = reader.object(
                    node, at: path, what: "a $template binding", allowed: ["$template", "default", "placeholder"]
                ),
                let textNode = members.first(where: { $0.key == "$template" })?.value,
                let text = reader.string(textNode, at: bindingPath, what: "a $template")
            else { return nil }
            if let type, type != .string, type != .url {
                reader.report(
                    .invalidBinding, at: node, path: path,
                    "a $template makes text, but this field is \(Self.article(type.name)) \(type.name); use $bind"
                )
                return nil
            }
            guard let parts = readTemplate(text, node: textNode, at: bindingPath, scope: scope),
                let options = readOptions(members, as: type, at: path)
            else { return nil }
            return .template(parts, options)
        case "$each":
            guard
                let members = reader.object(
                    node, at: path, what: "an $each binding", allowed: ["$each", "as", "template", "limit"],
                    required: ["template"]
                ),
                let valuePath = readValuePath(members.first { $0.key == "$each" }!.value, at: bindingPath, scope: scope),
                let templateNode = members.first(where: { $0.key == "template" })?.value
            else { return nil }
            let member = { (key: String) in members.first { $0.key == key }?.value }
            let variable = reader.string(member("as"), at: path.appending("as"), what: "as") ?? "item"
            if sources[variable] != nil || scope.contains(variable) || !variable.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar) {
                reader.report(
                    .invalidBinding, at: member("as") ?? node, path: path.appending("as"),
                    "the loop variable \"\(variable)\" must be a plain name that no source or outer loop uses; choose another with \"as\""
                )
                return nil
            }
            let limit = reader.positiveInteger(member("limit"), at: path.appending("limit"), what: "limit")
            if member("limit") != nil, limit == nil { return nil }
            let innerScope = scope.union([variable])
            let templatePath = path.appending("template")
            let template: ContentExpression?
            switch type {
            case .componentContents(let nameField):
                guard let itemSchema = itemSchema(nameField: nameField, siblings: siblings) else { return nil }
                template = compileContent(templateNode, schema: itemSchema, at: templatePath, topLevel: false, scope: innerScope)
                    .map { Self.normalized(.object($0)) }
            case .array(let items):
                template = compileValue(templateNode, as: items, at: templatePath, siblings: [], scope: innerScope)
            case nil:
                template = compileValue(templateNode, as: nil, at: templatePath, siblings: [], scope: innerScope)
            case let type?:
                reader.report(
                    .invalidBinding, at: node, path: path,
                    "$each makes an array, but this field is \(Self.article(type.name)) \(type.name); use $bind or $template"
                )
                return nil
            }
            guard let template else { return nil }
            return .each(valuePath, variable: variable, template: template, limit: limit)
        default:
            reader.report(
                .invalidBinding, at: node, path: bindingPath,
                "unknown binding \"\(key)\"; use $bind, $template or $each" + NameSuggestion.hint(for: key, among: Self.bindingKeys)
            )
            return nil
        }
    }

    private mutating func readOptions(_ members: [JSONNode.Member], as type: FieldType?, at path: JSONPath) -> ContentExpression.BindingOptions? {
        var options = ContentExpression.BindingOptions()
        for key in ["default", "placeholder"] {
            guard let node = members.first(where: { $0.key == key })?.value else { continue }
            if let type {
                let result = catalog.check(node.value, as: type, mode: .definition)
                reader.report(result.violations, in: node, at: path.appending(key))
                guard result.isValid else { return nil }
            }
            if key == "default" { options.defaultValue = node.value } else { options.placeholder = node.value }
        }
        return options
    }

    private mutating func readValuePath(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> ValuePath? {
        guard let text = reader.string(node, at: path, what: "a binding path") else { return nil }
        guard let valuePath = ValuePath(parsing: text) else {
            reader.report(
                .invalidBinding, at: node, path: path,
                "\"\(text)\" is not a binding path; write source.key.key or source.list[0].key"
            )
            return nil
        }
        return checkRoot(valuePath, node: node, at: path, scope: scope) ? valuePath : nil
    }

    private mutating func checkRoot(_ valuePath: ValuePath, node: JSONNode, at path: JSONPath, scope: Set<String>) -> Bool {
        if scope.contains(valuePath.root) { return true }
        if sources[valuePath.root] != nil {
            usedSources.insert(valuePath.root)
            return true
        }
        // Its declaration is already reported; a binding to it is not a second mistake.
        if invalidSources.contains(valuePath.root) { return false }
        let known = Array(sources.keys) + Array(scope)
        let message =
            if let actionContext {
                "\"\(valuePath.root)\" is not a value \(actionContext) reads; use one of \(known.sorted().joined(separator: ", ")) (the screen's own sources are not called for an action)"
            } else {
                "\"\(valuePath.root)\" is not a source of this screen"
                    + (known.isEmpty ? "; declare it under \"sources\"" : "; declare it under \"sources\" or use one of \(known.sorted().joined(separator: ", "))")
            }
        reader.report(.unknownSource, at: node, path: path, message + NameSuggestion.hint(for: valuePath.root, among: known))
        return false
    }

    private mutating func readTemplate(_ text: String, node: JSONNode, at path: JSONPath, scope: Set<String>) -> [ContentExpression.TemplatePart]? {
        var parts: [ContentExpression.TemplatePart] = []
        var literal = ""
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "{" where scalars.first == "{":
                scalars.removeFirst()
                literal.unicodeScalars.append("{")
            case "}" where scalars.first == "}":
                scalars.removeFirst()
                literal.unicodeScalars.append("}")
            case "{":
                guard let close = scalars.firstIndex(of: "}") else {
                    reader.report(.invalidBinding, at: node, path: path, "a '{' in the template is never closed; write {{ for a literal brace")
                    return nil
                }
                let reference = String(String.UnicodeScalarView(scalars[..<close]))
                scalars = scalars[scalars.index(after: close)...]
                guard let valuePath = ValuePath(parsing: reference.trimmingSpaces) else {
                    reader.report(
                        .invalidBinding, at: node, path: path,
                        "{\(reference)} in the template is not a binding path; write {source.key}"
                    )
                    return nil
                }
                guard checkRoot(valuePath, node: node, at: path, scope: scope) else { return nil }
                if !literal.isEmpty {
                    parts.append(.text(literal))
                    literal = ""
                }
                parts.append(.value(valuePath))
            case "}":
                reader.report(.invalidBinding, at: node, path: path, "a lone '}' in the template; write }} for a literal brace")
                return nil
            default:
                literal.unicodeScalars.append(scalar)
            }
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        return parts
    }

    // MARK: Navigation targets

    /// A navigation action whose target is a `$template` over data:
    /// `{identifier: navigation, content: {interface_identifier: {$template: "bikes/stations/{network.id}"}}}`.
    /// The template must open exactly one screen, each value filling one of its parameter
    /// segments, with a type that fits where the type is known at load.
    private mutating func compileNavigation(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> ContentExpression? {
        let contentPath = path.appending("content")
        let targetPath = contentPath.appending("interface_identifier")
        guard node["identifier"]?.stringValue == "navigation", let content = node["content"], let target = content["interface_identifier"],
            let binding = target.members?.first(where: { $0.key.hasPrefix("$") }),
            node.members?.count == 2, content.members?.count == 1,
            let bindingPath = Self.firstBinding(in: node, at: path), bindingPath.absolute == targetPath
        else {
            let found = Self.firstBinding(in: node, at: path)
            reader.report(
                .invalidBinding, at: found.map { node.closestNode(at: $0.relative) } ?? node, path: found?.absolute ?? path,
                "in an action, only a navigation's interface_identifier may come from data, as a $template: {identifier: navigation, content: {interface_identifier: {$template: \"bikes/stations/{network.id}\"}}}"
            )
            return nil
        }
        guard binding.key == "$template" else {
            reader.report(
                .invalidBinding, at: target, path: targetPath,
                "a navigation target is built with $template, which percent-encodes each value as one path segment (like {$template: \"bikes/stations/{network.id}\"}); \(binding.key) cannot make one"
            )
            return nil
        }
        guard let members = reader.object(target, at: targetPath, what: "a $template binding", allowed: ["$template"]),
            let textNode = members.first?.value, let text = reader.string(textNode, at: targetPath.appending("$template"), what: "a $template"),
            let parts = readTemplate(text, node: textNode, at: targetPath.appending("$template"), scope: scope)
        else { return nil }
        guard resolveTarget(text, parts: parts, node: textNode, at: targetPath.appending("$template"), scope: scope) != nil else { return nil }
        return .object(["identifier": .literal("navigation"), "content": .object(["interface_identifier": .target(parts)])])
    }

    /// The one screen a target template opens; nil (reported) when it opens none, could open
    /// several, or fills a parameter with a value of another type.
    private mutating func resolveTarget(
        _ text: String, parts: [ContentExpression.TemplatePart], node: JSONNode, at path: JSONPath, scope: Set<String>
    ) -> ScreenPattern? {
        // The segments: literal text, or exactly one value.
        var segments: [[ContentExpression.TemplatePart]] = [[]]
        for part in parts {
            guard case .text(let literal) = part else {
                segments[segments.count - 1].append(part)
                continue
            }
            for (index, piece) in literal.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
                if index > 0 { segments.append([]) }
                if !piece.isEmpty { segments[segments.count - 1].append(.text(String(piece))) }
            }
        }
        var shape: [ScreenRoutes.TargetSegment] = []
        var values: [ValuePath?] = []
        for segment in segments {
            if segment.isEmpty {
                reader.report(.brokenNavigation, at: node, path: path, "navigation target \"\(text)\" has an empty path segment")
                return nil
            }
            guard segment.count == 1 else {
                reader.report(
                    .brokenNavigation, at: node, path: path,
                    "in navigation target \"\(text)\", a value fills a whole path segment; write it between slashes, like bikes/stations/{network.id}"
                )
                return nil
            }
            switch segment[0] {
            case .text(let literal):
                guard PercentEncoding.isEncodedSegment(literal[...]) else {
                    reader.report(
                        .brokenNavigation, at: node, path: path,
                        "\"\(literal)\" in navigation target \"\(text)\" is not a path segment; write letters, digits, '-', '_', '.' and '~' (values from data are encoded for you)"
                    )
                    return nil
                }
                shape.append(.text(literal))
                values.append(nil)
            case .value(let value):
                shape.append(.value)
                values.append(value)
            }
        }
        let written = shape.map { if case .text(let literal) = $0 { literal } else { "{}" } }.joined(separator: "/")
        let screen: ScreenPattern
        switch routes.resolve(shape) {
        case .opens(let only):
            screen = only
        case .valueAtFixedSegment(let near, let position, let fixed):
            reader.report(
                .brokenNavigation, at: node, path: path,
                "in navigation target \"\(text)\", {\(values[position].map(\.description) ?? "")} stands where screen \(near.name) has the fixed segment \"\(fixed)\"; write that text instead"
            )
            return nil
        case .nothing:
            let shapes = Dictionary(routes.patterns.values.map { pattern in
                (pattern.segments.map { if case .literal(let literal) = $0 { literal } else { "{}" } }.joined(separator: "/"), pattern.name)
            }, uniquingKeysWith: { first, _ in first })
            let suggestion = NameSuggestion.closest(to: written, among: shapes.keys).flatMap { shapes[$0] }
            reader.report(
                .brokenNavigation, at: node, path: path,
                "navigation target \"\(text)\" opens no screen: none has the path \(written) (a {} stands for a value)"
                    + (suggestion.map { " (did you mean \"\($0)\"?)" } ?? "")
            )
            return nil
        case .several(let candidates):
            reader.report(
                .brokenNavigation, at: node, path: path,
                "navigation target \"\(text)\" could open any of \(candidates.map(\.name).joined(separator: ", ")); a target must open exactly one screen, so give them different paths"
            )
            return nil
        }
        for (segment, value) in zip(screen.segments, values) {
            guard let value, case .parameter(let name) = segment, let parameter = screen.parameters[name] else { continue }
            if let known = knownParameter(value, scope: scope), let problem = Self.fitProblem(known, into: parameter) {
                reader.report(
                    .brokenNavigation, at: node, path: path,
                    "in navigation target \"\(text)\", {\(value)} fills {\(name)} of screen \(screen.name), but \(problem)"
                )
                return nil
            }
        }
        return screen
    }

    /// The declared type of a value that is a request or path parameter (`path.network`,
    /// `query.name`); nil for data whose type is only known when it arrives.
    private func knownParameter(_ value: ValuePath, scope: Set<String>) -> RequestParameter? {
        guard !scope.contains(value.root), value.steps.segments.count == 1, case .key(let key)? = value.steps.segments.first else { return nil }
        switch sources[value.root] {
        case .request(let parameters)?, .path(let parameters)?: return parameters[key]
        default: return nil
        }
    }

    /// Why every value of `source` may not fit `target` (nil when it always does).
    static func fitProblem(_ source: RequestParameter, into target: RequestParameter) -> String? {
        if let values = source.allowedValues {
            let refused = values.filter { target.convert(HTTPSource.text(of: $0)) == nil }
            return refused.isEmpty ? nil : "it may be \(refused.map { JSONWriter.string($0) }.joined(separator: ", ")), which is not \(target.expectation == "integer" ? "an" : "a") \(target.expectation)"
        }
        let constrained = target.allowedValues != nil || target.pattern != nil || target.minLength != nil || target.maxLength != nil
        if constrained {
            var unconstrainedSource = source
            unconstrainedSource.defaultValue = nil
            unconstrainedSource.isRequired = target.isRequired
            return unconstrainedSource == target ? nil : "it is any \(source.kind.rawValue), and the parameter is only \(target.expectation); declare the same constraints on both"
        }
        let fits: Bool
        switch target.kind {
        case .string: fits = true
        case .number: fits = source.kind == .integer || source.kind == .number
        case .integer: fits = source.kind == .integer
        case .bool: fits = source.kind == .bool
        }
        return fits ? nil : "it is \(source.kind == .integer ? "an" : "a") \(source.kind.rawValue), and the parameter is \(target.kind == .integer ? "an" : "a") \(target.kind.rawValue)"
    }

    // MARK: Static data

    /// For a screen whose sources are all fixtures, builds the data once now; anything it would
    /// leave out is an error, since no request could ever do better.
    private mutating func buildStaticData(
        _ plan: DataPlan, componentNodes: [JSONNode], indices: [String: Int], at path: JSONPath
    ) -> InterfaceData? {
        guard !reader.diagnostics.containsErrors else { return nil }
        let (data, problems) = plan.build(values: plan.staticValues, catalog: catalog)
        for entry in plan.entries {
            let forEntry = problems.filter { $0.identifier == entry.identifier }
            guard forEntry.contains(where: \.isLoss) else { continue }
            guard let index = indices[entry.identifier] else { continue }
            reader.report(
                .unresolvedData, at: componentNodes[index], path: path.appending(index),
                "its data cannot be built from the screen's fixtures: "
                    + forEntry.map(\.message).joined(separator: "; ") + "; fix the binding or the fixture"
            )
        }
        return data
    }

    // MARK: Helpers

    /// Collapses a structure without bindings into one literal.
    private static func normalized(_ expression: ContentExpression) -> ContentExpression {
        switch expression {
        case .object(let members):
            var values: [String: JSONValue] = [:]
            for (key, member) in members {
                guard case .literal(let value) = member else { return expression }
                values[key] = value
            }
            return .literal(.object(values))
        case .array(let elements):
            var values: [JSONValue] = []
            for element in elements {
                guard case .literal(let value) = element else { return expression }
                values.append(value)
            }
            return .literal(.array(values))
        default:
            return expression
        }
    }

    /// The first object under `node` that looks like a binding (a `$` key), with its path.
    private static func firstBinding(in node: JSONNode, at path: JSONPath) -> (relative: JSONPath, absolute: JSONPath)? {
        func search(_ node: JSONNode, _ relative: JSONPath) -> JSONPath? {
            switch node.kind {
            case .object(let members):
                if members.contains(where: { $0.key.hasPrefix("$") }) { return relative }
                for member in members {
                    if let found = search(member.value, relative.appending(member.key)) { return found }
                }
                return nil
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    if let found = search(element, relative.appending(index)) { return found }
                }
                return nil
            default:
                return nil
            }
        }
        return search(node, .root).map { ($0, path.appending($0)) }
    }

    private static func article(_ word: String) -> String {
        ["a", "e", "i", "o", "u"].contains(word.first.map(String.init) ?? "") ? "an" : "a"
    }
}

extension String {
    /// The string without leading and trailing spaces (only U+0020: tabs and newlines are errors elsewhere).
    var trimmingSpaces: String {
        String(unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed().map(Character.init))
    }
}
