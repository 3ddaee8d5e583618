import Foundation
import TaksiSchema

/// An upstream's own OpenAPI document (3.0 or 3.1, JSON or YAML), named in config.json: a
/// source's path must be one of its operations, and what the source's bindings read must be in
/// the schema of that operation's success response.
public struct OpenAPIDocument: Sendable {
    /// The path shown in messages.
    public let path: String
    let root: JSONValue
    /// The path templates of `paths`, split into segments: `/pets/{id}` is `["pets", "{id}"]`.
    private let templates: [(written: String, segments: [String])]

    /// Reads the document at `path`: nil with the problem, located where it can be, when it
    /// cannot be read or is not an OpenAPI 3 document.
    public static func read(path: String) -> Reading {
        let shown = ScreenDirectory.shown(path)
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(
                Diagnostic(
                    code: .unreadableFile, file: shown,
                    message: "the upstream's OpenAPI document cannot be read; check the path config.json gives its \"openapi\""))
        }
        let file = SourceFile(path: shown, bytes: Array(data))
        let node: JSONNode
        do {
            node =
                path.hasSuffix(".json") || file.bytes.first(where: { !$0.isWhitespace }) == UInt8(ascii: "{")
                ? try JSONParser.parse(file.bytes)
                : try YAMLReader.parse(
                    file,
                    refusingAliases:
                        "YAML anchors and aliases (&name, *name) are not read in an OpenAPI document; give its JSON form (python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' DOCUMENT.yaml > DOCUMENT.json), which has them expanded"
                )
        } catch {
            return .failure(
                Diagnostic(code: .syntax, file: shown, location: file.location(ofOffset: error.offset), message: error.message))
        }
        let version = node["openapi"]?.value.stringValue ?? ""
        guard version.hasPrefix("3."), node["paths"]?.members != nil else {
            return .failure(
                Diagnostic(
                    code: .invalidSchema, file: shown, location: file.location(ofOffset: node.offset),
                    message: (version.isEmpty
                        ? "this is not an OpenAPI 3 document (it has no \"openapi\": \"3.x\" and \"paths\")"
                        : "OpenAPI \(version) is not read; give the upstream's OpenAPI 3.0 or 3.1 document")
                        + "; convert a Swagger 2.0 document with the swagger2openapi tool"))
        }
        let problems = SchemaShapes.problems(in: node)
        if let first = problems.first {
            let more = problems.count > 1 ? " (and \(problems.count - 1) more)" : ""
            return .failure(
                Diagnostic(
                    code: .invalidSchema, file: shown, location: file.location(ofOffset: first.node.offset),
                    message: first.message + more + "; the document's $refs are read before any source is checked against it"))
        }
        return .success(OpenAPIDocument(path: shown, root: node.value))
    }

    /// A document read, or why it could not be.
    public enum Reading: Sendable {
        case success(OpenAPIDocument)
        case failure(Diagnostic)
    }

    init(path: String, root: JSONValue) {
        self.path = path
        self.root = root
        self.templates = (root["paths"]?.objectValue ?? [:]).keys.sorted().map { ($0, Self.segments($0)) }
    }

    /// `/pets/{id}/` as `["pets", "{id}"]`: a trailing slash is not told apart.
    static func segments(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// Why `method path` of `upstream` is no operation of this document, with the fix and the
    /// path most likely meant: a source's and an action call's message alike.
    func notFound(_ method: String, _ path: String, upstream: String) -> String {
        "\(method) \(path) is not in the OpenAPI document of upstream \"\(upstream)\" (\(self.path)); "
            + "fix the path, or get the API's current document" + (suggestion(for: path).map { " (did you mean \"\($0)\"?)" } ?? "")
    }

    /// The path of the document most like `path`, comparing both with their parameters' names left
    /// out (`/pets/{id}` is near `/pet/{petId}`); nil when none is close.
    private func suggestion(for path: String) -> String? {
        let shape = { (template: String) in template.replacingOccurrences(of: "\\{[^}]*\\}", with: "{}", options: .regularExpression) }
        let byShape = Dictionary(templates.map { (shape($0.written), $0.written) }, uniquingKeysWith: { first, _ in first })
        return NameSuggestion.closest(to: shape(path), among: Array(byShape.keys)).flatMap { byShape[$0] }
    }

    /// What looking an operation up finds.
    enum Lookup {
        /// The operation, with what its success response answers (nil when it says nothing of its body).
        case found(template: String, answer: KnownAnswer?)
        /// No path template matches (``notFound(_:_:upstream:)`` says so, with the path meant).
        case noPath
        /// The path is there without the method; the methods it has.
        case noMethod(template: String, methods: [String])
    }

    /// The operation that answers `method` on `path` (a source's path, `{name}` for its
    /// parameters): a literal segment matches itself or a template (`{petId}`, `p-{id}`); a
    /// parameter matches a template. Where several match, the one with the most literal segments.
    func operation(_ method: String, _ path: String) -> Lookup {
        let wanted = Self.segments(path)
        var best: (template: String, literals: Int)?
        for (written, segments) in templates where segments.count == wanted.count {
            var literals = 0
            var matches = true
            for (mine, theirs) in zip(wanted, segments) {
                if !theirs.contains("{") {
                    guard mine == theirs else {
                        matches = false
                        break
                    }
                    literals += 1
                } else if !mine.contains("{") {
                    guard let pattern = HTTPSourceReader.segmentPattern(theirs), mine.range(of: pattern, options: .regularExpression) != nil
                    else {
                        matches = false
                        break
                    }
                }
            }
            if matches, literals > (best?.literals ?? -1) { best = (written, literals) }
        }
        guard let template = best?.template, let item = root["paths"]?[template].map({ resolved($0) }) else {
            return .noPath
        }
        guard let operation = item[method.lowercased()] else {
            let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"].filter { item[$0] != nil }
            return .noMethod(template: template, methods: methods.map { $0.uppercased() })
        }
        let origin = "\(self.path) (\(method.uppercased()) \(template)"
        guard let (status, schema) = successSchema(of: operation) else { return .found(template: template, answer: nil) }
        return .found(
            template: template,
            answer: KnownAnswer(
                shape: SchemaShapes(document: root).shape(of: schema), origin: origin + ", \(status))",
                fix: "if the API answers it, its OpenAPI document is out of date: get the current one"))
    }

    /// What the operation `method` on `template` answers with `status` (a source's `answers`): the
    /// response of that status, else of its class (`4XX`), else `default`; for a class, its
    /// responses together. Nil when the document says nothing of that body.
    func answer(_ method: String, _ template: String, status: HTTPSource.StatusMatch) -> KnownAnswer? {
        guard let operation = root["paths"]?[template].map({ resolved($0) })?[method.lowercased()] else { return nil }
        let responses = operation["responses"]?.objectValue ?? [:]
        let keys: [String]
        switch status {
        case .status(let code):
            keys = [String(code), "\(code / 100)XX", "\(code / 100)xx", "default"].filter { responses[$0] != nil }.prefix(1).map { $0 }
        case .statusClass(let digit):
            let own = responses.keys.filter { $0.count == 3 && $0.hasPrefix(String(digit)) }.sorted()
            keys = own.isEmpty ? ["default"].filter { responses[$0] != nil } : own
        }
        let schemas = keys.compactMap { responses[$0].map { resolved($0) }.flatMap(jsonSchema(of:)) }
        guard !schemas.isEmpty else { return nil }
        let shapes = SchemaShapes(document: root)
        return KnownAnswer(
            shape: .union(schemas.map { shapes.shape(of: $0) }),
            origin: "\(path) (\(method.uppercased()) \(template), \(keys.joined(separator: ", ")))",
            fix: "if the API answers it, its OpenAPI document is out of date: get the current one")
    }

    /// The names of the query parameters the operation `method` on `template` takes (its own and
    /// its path item's, `$ref`s resolved), sorted; nil when the document has no such operation.
    func queryParameters(_ method: String, _ template: String) -> [String]? {
        guard let item = root["paths"]?[template].map({ resolved($0) }), let operation = item[method.lowercased()].map({ resolved($0) })
        else { return nil }
        let declared = (item["parameters"]?.arrayValue ?? []) + (operation["parameters"]?.arrayValue ?? [])
        let names = declared.map { resolved($0) }.compactMap { parameter -> String? in
            guard parameter["in"]?.stringValue == "query" else { return nil }
            return parameter["name"]?.stringValue
        }
        return Set(names).sorted()
    }

    /// The JSON body schema of a response object.
    private func jsonSchema(of response: JSONValue) -> JSONValue? {
        let content = response["content"]?.objectValue ?? [:]
        let json = content.keys.sorted().first { $0.hasPrefix("application/json") } ?? content.keys.sorted().first { $0.contains("json") }
        return json.flatMap { content[$0]?["schema"] }
    }

    /// The status and JSON body schema of the operation's success response: the lowest 2xx, else `2XX`.
    private func successSchema(of operation: JSONValue) -> (String, JSONValue)? {
        let responses = operation["responses"]?.objectValue ?? [:]
        let statuses = responses.keys.filter { $0.count == 3 && $0.hasPrefix("2") && Int($0) != nil }.sorted() + ["2XX", "2xx"]
        guard let status = statuses.first(where: { responses[$0] != nil }), let response = responses[status].map({ resolved($0) }),
            let schema = jsonSchema(of: response)
        else { return nil }
        return (status, schema)
    }

    /// An object that is a `$ref` (to a path item, a response) as what it points at.
    private func resolved(_ value: JSONValue) -> JSONValue {
        var current = value
        for _ in 0..<8 {
            guard case .string(let reference)? = current["$ref"], let target = SchemaShapes.pointer(reference, in: root) else { break }
            current = target
        }
        return current
    }
}

/// Reads JSON Schema, as OpenAPI 3.0 (`nullable`) and 3.1 (`type: [string, "null"]`) write it, into
/// ``AnswerShape``s, with `$ref`s into the same document resolved (a reference to itself, as a
/// tree's children are, is left unknown below its first level).
///
/// Bounded whatever the document: each `$ref` is read once (what it points at is kept, so `allOf`
/// naming the next level twice costs no more than once), nesting past ``maximumDepth`` and
/// schemas past ``maximumSchemas`` are left unknown (not judged); ``problems(in:)`` says why a
/// document is refused first (a `$ref` cycle, a chain of `$ref`s past the depth).
final class SchemaShapes {
    let document: JSONValue
    /// Nesting read at most; deeper is unknown.
    static let maximumDepth = 64
    /// Schemas read at most for one document.
    static let maximumSchemas = 200_000
    /// What each `$ref` points at, read.
    private var resolved: [String: AnswerShape] = [:]
    private var resolving: Set<String> = []
    private var depth = 0
    private var read = 0

    init(document: JSONValue) { self.document = document }

    func shape(of schema: JSONValue) -> AnswerShape {
        guard case .object(let members) = schema, depth < Self.maximumDepth, read < Self.maximumSchemas else { return .unknown }
        read += 1
        depth += 1
        defer { depth -= 1 }
        if case .string(let reference)? = members["$ref"] {
            if let known = resolved[reference] { return known }
            guard !resolving.contains(reference), let target = Self.pointer(reference, in: document) else { return .unknown }
            resolving.insert(reference)
            let shape = shape(of: target)
            resolving.remove(reference)
            resolved[reference] = shape
            return shape
        }
        var shapes: [AnswerShape] = []
        if case .array(let all)? = members["allOf"] {
            shapes.append(Self.intersection(all.map { shape(of: $0) }))
        }
        for key in ["oneOf", "anyOf"] {
            if case .array(let any)? = members[key] { shapes.append(.union(any.map { shape(of: $0) })) }
        }
        var types: [String] = []
        switch members["type"] {
        case .string(let type)?: types = [type]
        case .array(let list)?: types = list.compactMap(\.stringValue)
        default:
            if members["properties"] != nil || members["additionalProperties"] != nil { types = ["object"] }
            if members["items"] != nil { types = ["array"] }
            if case .array(let values)? = members["enum"] { return .union(values.map(AnswerShape.init(example:))) }
            if let constant = members["const"] { return AnswerShape(example: constant) }
        }
        for type in types {
            switch type {
            case "null": shapes.append(.null)
            case "boolean": shapes.append(.bool)
            case "integer": shapes.append(.integer)
            case "number": shapes.append(.number)
            case "string": shapes.append(.string)
            case "array": shapes.append(.array(of: members["items"].map { shape(of: $0) } ?? .unknown))
            case "object": shapes.append(object(members))
            default: shapes.append(.unknown)
            }
        }
        if shapes.isEmpty { return .unknown }
        if members["nullable"] == .bool(true) { shapes.append(.null) }
        return .union(shapes)
    }

    /// Why a document's `$ref`s cannot be read, each with the node to point at: a `$ref` that
    /// leads back to itself through `$ref`s alone (`A: {$ref: B}`, `B: {$ref: A}`: no schema at
    /// all), or a chain of more than ``maximumDepth`` of them. A tree whose children refer to
    /// their parent through `properties` or `items` is no cycle: it is a recursive type.
    static func problems(in root: JSONNode) -> [(node: JSONNode, message: String)] {
        var problems: [(node: JSONNode, message: String)] = []
        var checked: Set<String> = []
        let document = root.value
        func visit(_ node: JSONNode) {
            if let members = node.members {
                if let reference = members.first(where: { $0.key == "$ref" })?.value, let first = reference.stringValue,
                    checked.insert(first).inserted
                {
                    var chain = [first]
                    var current = first
                    while let target = pointer(current, in: document), case .string(let next)? = target["$ref"] {
                        if let loop = chain.firstIndex(of: next) {
                            guard problems.count < 5 else { break }
                            problems.append(
                                (
                                    reference,
                                    "a $ref cycle: \((chain[loop...] + [next]).joined(separator: " -> ")); each $ref must lead to a schema"
                                ))
                            break
                        }
                        chain.append(next)
                        checked.insert(next)
                        guard chain.count <= maximumDepth else {
                            guard problems.count < 5 else { break }
                            problems.append(
                                (
                                    reference,
                                    "a chain of more than \(maximumDepth) $refs from \(first); point each $ref at a schema, not at another $ref"
                                ))
                            break
                        }
                        current = next
                    }
                }
                for member in members { visit(member.value) }
            } else if let elements = node.elements {
                for element in elements { visit(element) }
            }
        }
        visit(root)
        return problems
    }

    /// An object schema: its properties are what it has; one that may have others (an
    /// `additionalProperties` schema beside properties) or names none is not judged.
    private func object(_ members: [String: JSONValue]) -> AnswerShape {
        let properties = members["properties"]?.objectValue ?? [:]
        let additional = members["additionalProperties"]
        if properties.isEmpty {
            if let additional, case .object = additional { return .map(of: shape(of: additional)) }
            return additional == .bool(false) ? .object([:], required: []) : .unknown
        }
        if let additional, additional != .bool(false) { return .unknown }
        let required = Set((members["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        return .object(properties.mapValues { shape(of: $0) }, required: required)
    }

    /// What every one of `shapes` is (`allOf`): objects' properties together, each required key required.
    static func intersection(_ shapes: [AnswerShape]) -> AnswerShape {
        var properties: [String: AnswerShape] = [:]
        var required: Set<String> = []
        var sawObject = false
        for shape in shapes {
            switch shape {
            case .unknown: continue
            case .object(let more, let requiredHere):
                sawObject = true
                properties.merge(more) { first, _ in first }
                required.formUnion(requiredHere ?? [])
            default:
                // Not objects: the first that says something is what it is.
                if !sawObject { return shape }
            }
        }
        return sawObject ? .object(properties, required: required) : .unknown
    }

    /// The value a local reference (`#/components/schemas/Pet`) points at; nil for another document's.
    static func pointer(_ reference: String, in document: JSONValue) -> JSONValue? {
        guard reference.hasPrefix("#") else { return nil }
        var current = document
        for token in reference.dropFirst().split(separator: "/", omittingEmptySubsequences: true) {
            let key = (String(token).removingPercentEncoding ?? String(token))
                .replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(key), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default: return nil
            }
        }
        return current
    }
}

extension UInt8 {
    fileprivate var isWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}
