import TaksiSchema

/// Reads a screen file's `sources`: fixtures (inline or from a file), request parameters and http
/// upstreams. A sub-compiler of ``ScreenCompiler``: it takes what it reads and returns what it
/// made (``Result``), reporting into the screen's reader.
struct SourcesReader {
    /// What a screen's `sources` declare.
    struct Result {
        /// The sources read without errors, by name.
        var sources: [String: SourceDefinition] = [:]
        /// What the sources are known to answer (see ``KnownAnswer``), by source name.
        var answers: [String: KnownAnswer] = [:]
        /// What the sources' `answers` statuses answer, where the upstream's OpenAPI document
        /// says, by source name.
        var statusAnswers: [String: [HTTPSource.StatusMatch: KnownAnswer]] = [:]
        /// The names declared with errors: bindings to them are not reported again.
        var invalid: Set<String> = []
        /// The fixture files read, relative to the screens directory.
        var fixturesRead: Set<String> = []
    }

    /// Reads the `sources` object `node` of a screen whose path shape is `pattern`.
    static func read(
        _ node: JSONNode, at path: JSONPath, pattern: ScreenPattern, context: ScreenCompiler.Context,
        reporting reader: inout DefinitionReader
    ) -> Result {
        var sourcesReader = SourcesReader(reader: reader, pattern: pattern, upstreams: context.upstreams, loadFixture: context.loadFixture)
        sourcesReader.read(node, at: path)
        reader = sourcesReader.reader
        return sourcesReader.result
    }

    /// The screen's reader, for the length of one ``read(_:at:pattern:context:reporting:)``.
    private var reader: DefinitionReader
    private let pattern: ScreenPattern
    /// Configured upstream names, when known.
    private let upstreams: ConfiguredUpstreams?
    private let loadFixture:
        (_ relativePath: String, _ reference: JSONNode, _ path: JSONPath, _ reader: inout DefinitionReader) -> JSONValue?
    private var result = Result()
    /// What the source being read is known to answer, and with the statuses of its `answers`.
    private var readAnswer: KnownAnswer?
    private var readStatusAnswers: [HTTPSource.StatusMatch: KnownAnswer] = [:]

    private init(
        reader: DefinitionReader, pattern: ScreenPattern, upstreams: ConfiguredUpstreams?,
        loadFixture: @escaping (String, JSONNode, JSONPath, inout DefinitionReader) -> JSONValue?
    ) {
        self.reader = reader
        self.pattern = pattern
        self.upstreams = upstreams
        self.loadFixture = loadFixture
    }

    private mutating func read(_ node: JSONNode, at path: JSONPath) {
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
            if member.key == ScreenCompiler.pathSourceName, pattern.hasParameters {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: sourcePath,
                    "\"\(ScreenCompiler.pathSourceName)\" is the source of this screen's path parameters ({$bind: path.\(pattern.parameterNames[0])}); name this source otherwise"
                )
                result.invalid.insert(member.key)
                continue
            }
            readAnswer = nil
            readStatusAnswers = [:]
            if let source = readSource(member.value, at: sourcePath) {
                result.sources[member.key] = source
                result.answers[member.key] = readAnswer
                if !readStatusAnswers.isEmpty { result.statusAnswers[member.key] = readStatusAnswers }
            } else {
                result.invalid.insert(member.key)
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
                if let normalized = ScreenSetLoader.normalizedRelativePath(relativePath) { result.fixturesRead.insert(normalized) }
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
            var httpReader = HTTPSourceReader(members: members, path: path, pattern: pattern, upstreams: upstreams, inputs: nil)
            let source = httpReader.read(reporting: &reader)
            readAnswer = declaredAnswer(members, at: path) ?? httpReader.knownAnswer
            readStatusAnswers = httpReader.statusAnswers
            return source.map { .http($0) }
        default:
            reader.report(
                .invalidSource, at: typeNode, path: path.appending("type"),
                "unknown source type \"\(type)\"; use one of \(SourceDefinition.kindNames.joined(separator: ", "))"
                    + NameSuggestion.hint(for: type, among: SourceDefinition.kindNames)
            )
            return nil
        }
    }

    /// What an http source says it answers: a JSON Schema file (`schema`), else an example answer
    /// (`example`), each a file under the screens directory; nil when it says neither (or a file
    /// cannot be read, which is reported).
    private mutating func declaredAnswer(_ members: [JSONNode.Member], at path: JSONPath) -> KnownAnswer? {
        var declared: KnownAnswer?
        for key in ["example", "schema"] {
            guard let node = members.first(where: { $0.key == key })?.value,
                let relativePath = reader.string(node, at: path.appending(key), what: key),
                let loaded = loadFixture(relativePath, node, path.appending(key), &reader)
            else { continue }
            if let normalized = ScreenSetLoader.normalizedRelativePath(relativePath) { result.fixturesRead.insert(normalized) }
            if key == "schema", let problem = SchemaShapes.problems(in: JSONNode(loaded, offset: node.offset)).first {
                reader.report(.invalidSource, at: node, path: path.appending(key), "\(relativePath): \(problem.message)")
                continue
            }
            declared =
                key == "schema"
                ? KnownAnswer(
                    shape: SchemaShapes(document: loaded).shape(of: loaded), origin: relativePath,
                    fix: "if the API answers it, add it to that schema")
                : KnownAnswer(shape: AnswerShape(example: loaded), origin: relativePath, fix: "if the API answers it, add it to that file")
        }
        return declared
    }
}
