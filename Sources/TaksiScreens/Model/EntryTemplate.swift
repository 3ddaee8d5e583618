public import TaksiSchema

/// A data entry compiled at load to the bytes it is sent as, with a hole for each text field whose
/// value comes from the request (`"Hello, {query.name}!"`). A request writes the bytes and fills
/// each hole with its text, escaped: no `JSONValue` tree, no schema check, the bytes a full
/// ``DataPlan/build(values:catalog:unavailable:)`` of the entry would give.
///
/// Made only where that is certain at load (``DataPlan/Entry/template(sources:staticValues:catalog:)``):
/// every other field is a constant from fixtures or the file, evaluated and checked once (with the
/// problems its evaluation found, which a request reports as a full build would); each hole
/// is a field the schema types as a plain string, so any text the request gives decodes, and
/// nothing else's check depends on it. A hole whose value is not text for one request (a
/// parameter with no default left out, a number where a count was expected) gives no bytes, and
/// that entry is built the full way, with its problems, for that request.
public struct EntryTemplate: Sendable {
    enum Segment: Sendable {
        case bytes([UInt8])
        /// A string field's value from the request, written as a JSON string.
        case text(ContentExpression)
    }

    let segments: [Segment]
    /// What the constant fields' evaluation found missing or dropped at load (an optional value a
    /// fixture lacks): the same every time, reported with every request as a full build would.
    public let problems: [DataPlan.Problem]

    /// Appends the entry's bytes with each hole filled from `values`; false, with nothing
    /// appended, when a hole's value is not text.
    public func write(into output: inout [UInt8], values: [String: JSONValue]) -> Bool {
        write(into: &output, in: values)
    }

    /// ``write(into:values:)`` with the holes' values looked up in `values` (a data request's
    /// slots, ``PlanValues``).
    func write(into output: inout [UInt8], in values: some ValueLookup) -> Bool {
        let start = output.count
        for segment in segments {
            switch segment {
            case .bytes(let bytes):
                output.append(contentsOf: bytes)
            case .text(let expression):
                // What the data check turns a string field's value into: text as it is, a number
                // or Boolean as written in JSON.
                guard expression.writeText(in: values, into: &output) else {
                    output.removeSubrange(start...)
                    return false
                }
            }
        }
        return true
    }
}

extension DataPlan.Entry {
    /// The entry as a template, or nil when it must be built per request: a field reads an
    /// upstream, a request value sits somewhere other than a whole string field (in a list, an
    /// action, a number field, a collection's component name), or the entry would not pass the
    /// schema check.
    /// - Parameters:
    ///   - sources: the plan's sources, by name.
    ///   - staticValues: the fixture sources' values.
    func template(sources: [String: SourceDefinition], staticValues: [String: JSONValue], catalog: ComponentCatalog) -> EntryTemplate? {
        guard let schema = catalog.schema(named: componentName), !fields.values.contains(where: \.dependsOnTime) else { return nil }
        let requestSources = Set(
            sources.compactMap { name, source -> String? in
                switch source {
                case .request, .path: name
                case .fixture, .http: nil
                }
            })
        let known = requestSources.union(staticValues.keys)
        var constants: [String: JSONValue] = [:]
        var holes: [String: ContentExpression] = [:]
        var problems: [DataPlan.Problem] = []
        // In the order a full build evaluates the fields, so the problems come in its order.
        for (name, expression) in fields.sorted(by: { $0.key < $1.key }) {
            let read = expression.sourceNames
            guard read.isSubset(of: known) else { return nil }
            if read.isDisjoint(with: requestSources) {
                let result = expression.evaluate(staticValues)
                problems += DataPlan.problems(of: result, field: name, expression: expression, entry: identifier)
                // A constant with no value is left out, as a full build leaves it out.
                if let value = result.value { constants[name] = value }
            } else {
                guard Self.isText(expression), schema.dynamicFields.first(where: { $0.name == name })?.type == .string,
                    !Self.choosesType(name, in: schema)
                else { return nil }
                holes[name] = expression
            }
        }
        // The check a request's build runs, once: the constants with any text in the holes.
        let probe = constants.merging(holes.mapValues { _ in .string("") }) { constant, _ in constant }
        let checked = catalog.check(dataContent: .object(probe), of: componentName, staticContent: staticContent, mode: .data)
        guard checked.violations.isEmpty, case .object(let content)? = checked.value else { return nil }

        var segments: [EntryTemplate.Segment] = []
        var pending = Array(#"{"content":{"#.utf8)
        // In the order JSONWriter writes an object's keys, so the bytes are the built entry's.
        for (index, (name, value)) in content.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { pending.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(name, into: &pending)
            pending.append(UInt8(ascii: ":"))
            if let hole = holes[name] {
                segments.append(.bytes(pending))
                segments.append(.text(hole))
                pending = []
            } else {
                JSONWriter.write(value, into: &pending)
            }
        }
        pending.append(contentsOf: #"},"identifier":"#.utf8)
        JSONWriter.writeString(identifier, into: &pending)
        pending.append(UInt8(ascii: "}"))
        segments.append(.bytes(pending))
        return EntryTemplate(segments: segments, problems: problems)
    }

    /// Whether the expression makes text: a template, a localized message or one bound value.
    private static func isText(_ expression: ContentExpression) -> Bool {
        switch expression {
        case .template, .localized, .bind: true
        case .literal, .object, .array, .each, .target, .when: false
        }
    }

    /// Whether a field of `schema` takes its items' type from the field `name` (a collection's
    /// `component_name`): then the field's value decides another's check.
    private static func choosesType(_ name: String, in schema: ComponentSchema) -> Bool {
        schema.fields.contains { field in
            if case .componentContents(let nameField) = field.type { nameField == name } else { false }
        }
    }
}
