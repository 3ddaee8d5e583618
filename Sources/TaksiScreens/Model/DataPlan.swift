public import TaksiSchema

/// How to build a screen's data response: which sources it reads and, for every dynamic
/// component, the expressions of its dynamic fields.
public struct DataPlan: Sendable {
    /// One data entry to build: the dynamic fields of one component.
    public struct Entry: Sendable {
        public var identifier: String
        public var componentName: String
        /// The component's literal content in the skeleton, which some checks depend on (the type
        /// of a collection's items is its static `component_name`).
        public var staticContent: [String: JSONValue]
        /// Every dynamic field of the component, literal or bound (the client decodes them all).
        public var fields: [String: ContentExpression]
        /// The entry's bytes with holes for request values, when it can be written that way
        /// (``compilingTemplates(catalog:)``); nil builds it from ``fields`` every time.
        public var template: EntryTemplate? = nil
    }

    /// The sources the entries read, by name.
    public var sources: [String: SourceDefinition] {
        didSet {
            staticValues = Self.staticValues(of: sources)
            requestSlots = RequestSlots(sources: sources)
        }
    }
    /// The values of the sources known at load time (fixtures), made once rather than for every
    /// data response rendered.
    public private(set) var staticValues: [String: JSONValue]
    /// Where a request's values go (``readRequest(parameter:path:)``).
    public private(set) var requestSlots: RequestSlots
    /// The entries, in skeleton order.
    public var entries: [Entry]
    /// The patches of the `http` sources' answers by status (``HTTPSource/StatusAnswer``), by source name.
    public var answers: [String: [HTTPSource.StatusMatch: [Entry]]] = [:]
    /// The lists that continue, page after page (``PagedList``), in the order of their sources' names.
    public var pagedLists: [PagedList] = []

    public init(sources: [String: SourceDefinition], entries: [Entry], answers: [String: [HTTPSource.StatusMatch: [Entry]]] = [:]) {
        self.sources = sources
        self.staticValues = Self.staticValues(of: sources)
        self.requestSlots = RequestSlots(sources: sources)
        self.entries = entries
        self.answers = answers
    }

    /// The plan for some of the entries only (`?only=`): the sources they read, nothing else, so
    /// a refresh of one list calls only that list's upstreams.
    public func restricted(to identifiers: Set<String>) -> DataPlan {
        let kept = entries.filter { identifiers.contains($0.identifier) }
        let read = kept.reduce(into: Set<String>()) { names, entry in
            for expression in entry.fields.values { names.formUnion(expression.sourceNames) }
        }
        // An answer's patch keeps what it says about these components only.
        let keptAnswers = answers.filter { read.contains($0.key) }.mapValues { patches in
            patches.mapValues { $0.filter { identifiers.contains($0.identifier) } }
        }
        var plan = DataPlan(sources: sources.filter { read.contains($0.key) }, entries: kept, answers: keptAnswers)
        plan.pagedLists = pagedLists.filter { identifiers.contains($0.identifier) }
        return plan
    }

    /// The plan for a response in which some sources answered a status they declare: the entries
    /// of the components bound to them, and of those their patches name, give way to the patches'
    /// entries (the first patch to name a component wins, by source name). Bindings read the
    /// answered source's value as given (the status's JSON body, or null).
    public func answering(_ statuses: [String: Int]) -> DataPlan {
        var patchEntries: [Entry] = []
        var patched: Set<String> = []
        for (source, status) in statuses.sorted(by: { $0.key < $1.key }) {
            guard let patches = answers[source], let match = patches.keys.sorted().first(where: { $0.matches(status) }) else { continue }
            for entry in patches[match] ?? [] where patched.insert(entry.identifier).inserted {
                patchEntries.append(entry)
            }
        }
        let answered = Set(statuses.keys)
        var plan = self
        plan.entries =
            entries.filter { entry in
                !patched.contains(entry.identifier) && entry.fields.values.allSatisfy { $0.sourceNames.isDisjoint(with: answered) }
            } + patchEntries
        return plan
    }

    /// Whether every source is known at load time and nothing depends on the moment, so the
    /// data can be computed once.
    public var isStatic: Bool { sources.values.allSatisfy(\.isStatic) && !dependsOnTime }

    /// Whether a value depends on the moment it is made (``ContentExpression/dependsOnTime``).
    public var dependsOnTime: Bool {
        let entries = entries + answers.values.flatMap { $0.values.flatMap { $0 } }
        return entries.contains { $0.fields.values.contains(where: \.dependsOnTime) }
    }

    /// Why a value was left out of a data response, for logs (and load-time errors for static plans).
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var identifier: String
        public var message: String
        /// Whether something was left out of the payload because of it (an entry, a field or a
        /// collection item); otherwise it explains a value that was missing and may be optional.
        public var isLoss: Bool
        /// The field the problem is in, when known.
        public var field: String? = nil
        /// The sources the field (or, when no field is known, the entry) is bound to, sorted; nil
        /// when neither is known.
        public var sources: [String]? = nil
        public var description: String { "component \"\(identifier)\": \(message)" }
    }

    /// The plan with each entry that can be compiled to an ``EntryTemplate`` compiled: what
    /// ``render(values:catalog:unavailable:)`` writes without building a value tree.
    public func compilingTemplates(catalog: ComponentCatalog) -> DataPlan {
        let staticValues = staticValues
        var plan = self
        for index in plan.entries.indices {
            plan.entries[index].template = plan.entries[index].template(sources: sources, staticValues: staticValues, catalog: catalog)
        }
        return plan
    }

    /// Builds the data envelope from the sources' values. A source missing from `values` (it
    /// failed) leaves its components without an entry, so they keep their placeholders; every entry
    /// that is produced has been checked to decode.
    /// - Parameter unavailable: sources that failed; components bound to them get no entry.
    public func build(
        values: [String: JSONValue], catalog: ComponentCatalog, unavailable: Set<String> = []
    ) -> (data: InterfaceData, problems: [Problem]) {
        var entries: [DataEntry] = []
        var problems: [Problem] = []
        for entry in self.entries {
            let (built, found) = build(entry, values: values, catalog: catalog, unavailable: unavailable)
            problems += found
            if let built { entries.append(built) }
        }
        return (InterfaceData(entries: entries), problems)
    }

    /// The data envelope's bytes, as `JSONWriter` writes what ``build(values:catalog:unavailable:)``
    /// gives: the entries compiled to templates written with their holes filled, the others built.
    public func render(
        values: [String: JSONValue], catalog: ComponentCatalog, unavailable: Set<String> = []
    ) -> (body: [UInt8], problems: [Problem]) {
        render(in: values, catalog: catalog, unavailable: unavailable)
    }

    /// ``render(values:catalog:unavailable:)`` for one data request: its values in their slots
    /// (``readRequest(parameter:path:)``), the fixtures', and `upstream`, the values of the
    /// `http` sources that answered (or their fallbacks). A template's holes read the slots
    /// where they lie; a table of every source's values is made only for an entry built in full.
    public func render(
        request: RequestValues, upstream: [String: JSONValue] = [:], catalog: ComponentCatalog, unavailable: Set<String> = []
    ) -> (body: [UInt8], problems: [Problem]) {
        let named = upstream.isEmpty ? staticValues : staticValues.merging(upstream) { _, answered in answered }
        return render(in: PlanValues(slots: requestSlots, request: request, named: named), catalog: catalog, unavailable: unavailable)
    }

    private func render(
        in values: some ValueLookup, catalog: ComponentCatalog, unavailable: Set<String>
    ) -> (body: [UInt8], problems: [Problem]) {
        // Room for a small response made up front: growing from the opening bytes would copy.
        var output: [UInt8] = []
        output.reserveCapacity(512)
        output.append(contentsOf: #"{"interface_data":["#.utf8)
        var problems: [Problem] = []
        var written = 0
        var sourceValues: [String: JSONValue]?
        // By index: a copy of an entry would retain each of its parts, shared by every event loop.
        for index in entries.indices {
            let start = output.count
            if written > 0 { output.append(UInt8(ascii: ",")) }
            if let template = entries[index].template, template.write(into: &output, in: values) {
                if !template.problems.isEmpty { problems += template.problems }
                written += 1
                continue
            }
            // Every source's values by name, made once, for the entries built in full.
            if sourceValues == nil { sourceValues = values.sourceValues }
            let (built, found) = build(entries[index], values: sourceValues ?? [:], catalog: catalog, unavailable: unavailable)
            problems += found
            if let built {
                JSONWriter.write(built.jsonValue, into: &output)
                written += 1
            } else {
                output.removeSubrange(start...)
            }
        }
        output.append(contentsOf: "]}".utf8)
        return (output, problems)
    }

    /// One entry from the sources' values, checked to decode, or nil (with why) when it cannot be
    /// sent or reads a source that failed.
    private func build(
        _ entry: Entry, values: [String: JSONValue], catalog: ComponentCatalog, unavailable: Set<String>
    ) -> (entry: DataEntry?, problems: [Problem]) {
        // Computed only when needed: this runs on every data request that is not kept.
        var entrySources: Set<String> { entry.fields.values.reduce(into: Set<String>()) { $0.formUnion($1.sourceNames) } }
        if !unavailable.isEmpty, !entrySources.isDisjoint(with: unavailable) { return (nil, []) }
        var problems: [Problem] = []
        var content: [String: JSONValue] = [:]
        // Why a field has no value, so a check that fails for it names the binding, not the screen.
        var unresolved: [String: String] = [:]
        for (name, expression) in entry.fields.sorted(by: { $0.key < $1.key }) {
            let result = expression.evaluate(values)
            problems += Self.problems(of: result, field: name, expression: expression, entry: entry.identifier)
            if let value = result.value {
                content[name] = value
            } else if let first = result.problems.first {
                unresolved[name] = first
            }
        }
        let checked = catalog.check(
            dataContent: .object(content), of: entry.componentName, staticContent: entry.staticContent, mode: .data
        )
        problems += checked.violations.map { violation in
            let field: String? = if case .key(let key)? = violation.path.segments.first { key } else { nil }
            let sources = field.flatMap { entry.fields[$0] }.map { $0.sourceNames.sorted() }
            // A field the data left out is the binding's story, not the schema's: what it read and
            // from which source, where a binding made it (inside an $each's items too).
            let message =
                field.flatMap { unresolved[$0] }.map { "\(field ?? ""): \($0), and the field is required" }
                ?? Self.unboundMessage(violation, in: entry)
            return Problem(
                identifier: entry.identifier, message: message ?? violation.description, isLoss: true, field: field,
                sources: sources ?? entrySources.sorted()
            )
        }
        guard let value = checked.value else {
            problems.append(
                Problem(identifier: entry.identifier, message: "no entry sent; the component keeps its placeholder", isLoss: true)
            )
            return (nil, problems)
        }
        return (DataEntry(identifier: entry.identifier, content: value), problems)
    }

    /// For a required field missing inside a bound value (an `$each` item's `name`), the binding
    /// that should have filled it and its source, with the fix; nil for any other violation.
    static func unboundMessage(_ violation: SchemaViolation, in entry: Entry) -> String? {
        guard violation.code == .missingField, case .key(let field)? = violation.path.segments.first,
            let fieldExpression = entry.fields[field],
            let binding = fieldExpression.expression(at: JSONPath(segments: Array(violation.path.segments.dropFirst())))
        else { return nil }
        let read: ValuePath
        switch binding {
        case .bind(let path, _): read = path
        case .template(let parts, _):
            guard let first = parts.lazy.compactMap(\.path).first else { return nil }
            read = first
        default: return nil
        }
        let sources = fieldExpression.sourceNames.sorted()
        return "\(violation.path): the required field's binding \(read) found nothing in what "
            + (sources.count == 1 ? "source \(sources[0])" : "sources \(sources.joined(separator: ", "))")
            + " answered; check its path against the answer (validate checks it when the upstream's files, OpenAPI document or an example are known), or give it a default"
    }

    /// What evaluating one field of an entry found missing or dropped, as the entry's problems.
    static func problems(of result: Evaluation, field name: String, expression: ContentExpression, entry identifier: String) -> [Problem] {
        guard !result.problems.isEmpty else { return [] }
        let sources = expression.sourceNames.sorted()
        return result.problems.map {
            // A shape fault drops a value (or an item) the source should have had.
            Problem(
                identifier: identifier, message: "\(name): \($0)", isLoss: result.shapeFaults.contains($0), field: name, sources: sources)
        }
    }

    /// The values of the request-dependent sources for a data request's query parameters and
    /// path parameters (already typed, see ``ScreenPattern/values(_:)``).
    /// - Throws: ``DataRequestError`` when a required parameter is missing or one does not convert.
    public func requestValues(query: [String: String], path: [String: JSONValue] = [:]) throws(DataRequestError) -> [String: JSONValue] {
        sourceValues(of: try readRequest(parameter: { query[$0] }, path: path))
    }

    /// The upstream calls of the `http` sources for a data request, in the sources' order: each
    /// source's path and query with the request's query parameters and the screen's path
    /// parameters filled in.
    /// - Throws: ``DataRequestError`` when a required parameter is missing or one does not convert.
    public func upstreamCalls(query: [String: String], path: [String: JSONValue] = [:]) throws(DataRequestError) -> [UpstreamCall] {
        try upstreamCalls(parameter: { query[$0] }, path: path)
    }

    /// ``upstreamCalls(query:path:)`` with each query parameter read by `parameter`.
    public func upstreamCalls(
        parameter query: (String) -> String?, path: [String: JSONValue] = [:]
    ) throws(DataRequestError) -> [UpstreamCall] {
        var sources: [(name: String, definition: HTTPSource)] = []
        for (sourceName, source) in self.sources {
            if case .http(let http) = source { sources.append((sourceName, http)) }
        }
        guard !sources.isEmpty else { return [] }
        if sources.count > 1 { sources.sort { $0.name < $1.name } }
        var calls: [UpstreamCall] = []
        calls.reserveCapacity(sources.count)
        for (sourceName, http) in sources {
            var values = try Self.parameterValues(http.parameters, query: query)
            // A source never declares a path parameter's name itself (the compiler refuses it).
            values.merge(path) { query, _ in query }
            calls.append(UpstreamCall(source: sourceName, definition: http, target: try http.checkedTarget(parameters: values)))
        }
        return calls
    }

    /// The parameters' values from the query (or their defaults). The error, when there is one, is
    /// the first in the parameters' sorted order: they are read in the dictionary's order (no
    /// sort per request), and again sorted only to find it.
    private static func parameterValues(
        _ parameters: [String: RequestParameter], query: (String) -> String?, sorted: Bool = false
    ) throws(DataRequestError) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        if sorted {
            for (name, parameter) in parameters.sorted(by: { $0.key < $1.key }) {
                try read(name, parameter, query: query, into: &object)
            }
            return object
        }
        do {
            for (name, parameter) in parameters { try read(name, parameter, query: query, into: &object) }
        } catch {
            return try parameterValues(parameters, query: query, sorted: true)
        }
        return object
    }

    private static func read(
        _ name: String, _ parameter: RequestParameter, query: (String) -> String?, into object: inout [String: JSONValue]
    ) throws(DataRequestError) {
        if let value = try read(name, parameter, query: query) { object[name] = value }
    }

    /// One parameter's value: its text from `query` converted to its kind, else its default;
    /// nil when it has neither and is not required.
    static func read(_ name: String, _ parameter: RequestParameter, query: (String) -> String?) throws(DataRequestError) -> JSONValue? {
        if let text = query(name) {
            guard let value = parameter.convert(text) else {
                throw .invalidParameter(name: name, expected: parameter.expectation, found: text)
            }
            return value
        } else if let fallback = parameter.defaultValue {
            return fallback
        } else if parameter.isRequired {
            throw .missingParameter(name: name, kind: parameter.kind.rawValue)
        }
        return nil
    }

    private static func staticValues(of sources: [String: SourceDefinition]) -> [String: JSONValue] {
        sources.reduce(into: [:]) { values, source in
            if case .fixture(let value) = source.value { values[source.key] = value }
        }
    }
}

/// One upstream request a data request needs.
public struct UpstreamCall: Sendable, Hashable {
    /// The source's name in the screen.
    public var source: String
    public var definition: HTTPSource
    /// Path and query, percent-encoded, to append to the upstream's base URL.
    public var target: String
}

/// A data request the plan cannot serve: its query parameters are wrong. Answered with 400.
public enum DataRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    case missingParameter(name: String, kind: String)
    case invalidParameter(name: String, expected: String, found: String)
    /// A value that would fill a path segment of an upstream request with something that is not
    /// one segment's worth of text (`..`, `.`, nothing, a control character).
    case invalidPathValue(name: String, found: String, reason: String)
    /// A segment of the request's path that does not fit the screen's parameter there.
    case invalidPathParameter(name: String, screen: String, problem: String)

    /// A stable code for the error body.
    public var code: String {
        switch self {
        case .missingParameter: "missing_parameter"
        case .invalidParameter, .invalidPathValue, .invalidPathParameter: "invalid_parameter"
        }
    }

    /// What is wrong with a path parameter, as a clause: `network of bikes/stations/{network} is empty`.
    var pathProblem: String {
        switch self {
        case .invalidPathParameter(let name, _, let problem): "{\(name)} does not fit: \(problem)"
        default: description
        }
    }

    public var description: String {
        switch self {
        case .missingParameter(let name, let kind):
            "query parameter \"\(name)\" (\(kind)) is required; add ?\(name)=..."
        case .invalidParameter(let name, let expected, let found):
            "query parameter \"\(name)\" must be \(expected.hasPrefix("one of") ? "" : expected == "integer" ? "an " : "a ")\(expected), found \"\(found)\""
        case .invalidPathParameter(let name, let screen, let problem):
            "path parameter \"\(name)\" of screen \(screen) does not fit: \(problem)"
        case .invalidPathValue(let name, let found, let reason):
            "query parameter \"\(name)\" cannot be \"\(ScreenPattern.printable(found))\": \(reason)"
        }
    }
}
