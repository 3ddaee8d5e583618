public import TaksiSchema

/// A component's content as written in a screen file: literal JSON with dynamic bindings in it.
///
/// In a screen file a binding is an object with one `$` key:
/// - `{"$bind": "user.name"}`: the value at a path in a data source;
/// - `{"$template": "Hello, {user.name}!"}`: text with values spliced in (`{{` and `}}` for braces);
/// - `{"$each": "feed.items", "as": "item", "template": {...}, "limit": 20}`: an array made from
///   another, one element per item, with the template evaluated with `item` bound to the item.
///
/// In a navigation action's `interface_identifier`, a `$template` makes a ``target(_:)``.
///
/// `$bind` and `$template` also take `default` (used when the value is missing or null) and
/// `placeholder` (sent in the skeleton instead of the type's neutral value).
public indirect enum ContentExpression: Sendable, Hashable {
    case literal(JSONValue)
    case object([String: ContentExpression])
    case array([ContentExpression])
    case bind(ValuePath, BindingOptions)
    case template([TemplatePart], BindingOptions)
    case each(ValuePath, variable: String, template: ContentExpression, limit: Int?)
    /// A navigation target from a `$template` (`bikes/stations/{network.id}`): every value fills
    /// one whole path segment, percent-encoded, so any text gives one valid segment.
    case target([TemplatePart])
    /// A localized message (`{$text: key, with: {...}}`) in one locale: its text or, chosen by a
    /// count, one of its plural forms, with values spliced in and numbers written the locale's way.
    case localized(forms: [PluralCategory: [TemplatePart]], count: ValuePath?, rules: LanguageRules)
    /// A value chosen by comparing data (`{$when: [{if: {value: stock.count, equals: 0}, then: Sold out}], else: ...}`):
    /// the first branch whose test passes gives it, else `otherwise`; with neither, it is missing.
    case when([Branch], otherwise: ContentExpression?)

    /// One branch of a `$when`: a test of the value at `path`, and the value it gives.
    public struct Branch: Sendable, Hashable {
        public var path: ValuePath
        public var test: Test
        public var value: ContentExpression

        public init(path: ValuePath, test: Test, value: ContentExpression) {
            self.path = path
            self.test = test
            self.value = value
        }
    }

    /// How a branch compares the value: equal to a JSON value, one of several, above or below a
    /// number, present (not missing, not null) or absent.
    public enum Test: Sendable, Hashable {
        case equals(JSONValue)
        case oneOf([JSONValue])
        case above(Double)
        case below(Double)
        case present(Bool)

        /// Whether `value` (nil when missing) passes.
        func passes(_ value: JSONValue?) -> Bool {
            let present = value.map { $0 != .null } ?? false
            switch self {
            case .present(let wanted): return present == wanted
            case .equals(let expected): return present && value == expected
            case .oneOf(let expected): return present && expected.contains { $0 == value }
            case .above(let bound): return value?.numberValue.map { $0 > bound } ?? false
            case .below(let bound): return value?.numberValue.map { $0 < bound } ?? false
            }
        }
    }

    /// Options of `$bind` and `$template`.
    public struct BindingOptions: Sendable, Hashable {
        /// Used when the bound value is missing or null.
        public var defaultValue: JSONValue?
        /// Sent in the skeleton instead of the field type's neutral placeholder.
        public var placeholder: JSONValue?

        public init(defaultValue: JSONValue? = nil, placeholder: JSONValue? = nil) {
            self.defaultValue = defaultValue
            self.placeholder = placeholder
        }
    }

    /// A piece of a `$template`.
    public enum TemplatePart: Sendable, Hashable {
        case text(String)
        case value(ValuePath)
        /// A value written in a format of the response's locale: `{shop.price | currency EUR}`.
        /// Boxed: a format holds Foundation's format styles, and unboxed they made every part
        /// that large, so each copy of any part (a template's hole, on every data request) copied
        /// them field by field.
        indirect case formatted(ValuePath, ValueFormat)

        /// The path of the value it splices in, if any.
        var path: ValuePath? {
            switch self {
            case .text: nil
            case .value(let path), .formatted(let path, _): path
            }
        }
    }

    /// Whether the expression is plain JSON, with no binding in it.
    public var isLiteral: Bool {
        if case .literal = self { return true }
        return false
    }

    /// Whether the value depends on the moment it is made (a `| relative` time): then the data
    /// is made for each request, never computed at load or kept.
    public var dependsOnTime: Bool {
        func timed(_ parts: [TemplatePart]) -> Bool {
            parts.contains { if case .formatted(_, let format) = $0 { format.dependsOnTime } else { false } }
        }
        switch self {
        case .literal, .bind, .target: return false
        case .object(let members): return members.values.contains { $0.dependsOnTime }
        case .array(let elements): return elements.contains { $0.dependsOnTime }
        case .template(let parts, _): return timed(parts)
        case .localized(let forms, _, _): return forms.values.contains(where: timed)
        case .each(_, _, let template, _): return template.dependsOnTime
        case .when(let branches, let otherwise):
            return branches.contains { $0.value.dependsOnTime } || otherwise?.dependsOnTime == true
        }
    }

    /// The names of the data sources the expression reads (loop variables excluded).
    public var sourceNames: Set<String> {
        switch self {
        case .literal: []
        case .object(let members): members.values.reduce(into: []) { $0.formUnion($1.sourceNames) }
        case .array(let elements): elements.reduce(into: []) { $0.formUnion($1.sourceNames) }
        case .bind(let path, _): [path.root]
        case .template(let parts, _), .target(let parts):
            Set(parts.compactMap { $0.path?.root })
        case .localized(let forms, let count, _):
            Set(forms.values.flatMap { $0.compactMap { $0.path?.root } } + [count?.root].compactMap { $0 })
        case .each(let path, let variable, let template, _):
            template.sourceNames.subtracting([variable]).union([path.root])
        case .when(let branches, let otherwise):
            branches.reduce(into: otherwise?.sourceNames ?? []) { names, branch in
                names.insert(branch.path.root)
                names.formUnion(branch.value.sourceNames)
            }
        }
    }
}

/// The outcome of evaluating an expression against data: the value (nil when it could not be
/// made) and what went missing on the way, for logs and load-time diagnostics.
public struct Evaluation: Sendable, Equatable {
    public var value: JSONValue?
    public var problems: [String]
    /// The problems where the data had another shape than the binding reads (an object where an
    /// array is bound, text where an object is walked), or where an item was dropped for it: the
    /// data is at fault, not a value that is merely absent. A subset of ``problems``.
    public var shapeFaults: [String] = []

    public init(value: JSONValue?, problems: [String], shapeFaults: [String] = []) {
        self.value = value
        self.problems = problems
        self.shapeFaults = shapeFaults
    }
}

extension Evaluation {
    /// No value, for why a lookup found none.
    init(_ failure: ContentExpression.LookupFailure) {
        self.init(value: nil, problems: [failure.message], shapeFaults: failure.isShapeFault ? [failure.message] : [])
    }
}

extension ContentExpression {
    /// Evaluates the expression with `values` holding each available source's (and loop
    /// variable's) value. A source that failed is simply absent: bindings to it are missing.
    public func evaluate(_ values: [String: JSONValue]) -> Evaluation {
        switch self {
        case .literal(let value):
            return Evaluation(value: value, problems: [])
        case .object(let members):
            var output: [String: JSONValue] = [:]
            var problems: [String] = []
            var faults: [String] = []
            for (key, member) in members {
                let result = member.evaluate(values)
                problems += result.problems
                faults += result.shapeFaults
                if let value = result.value { output[key] = value }
            }
            return Evaluation(value: .object(output), problems: problems, shapeFaults: faults)
        case .array(let elements):
            var output: [JSONValue] = []
            var problems: [String] = []
            var faults: [String] = []
            for element in elements {
                let result = element.evaluate(values)
                problems += result.problems
                faults += result.shapeFaults
                guard let value = result.value else { return Evaluation(value: nil, problems: problems, shapeFaults: faults) }
                output.append(value)
            }
            return Evaluation(value: .array(output), problems: problems, shapeFaults: faults)
        case .bind(let path, let options):
            switch Self.resolve(path, in: values) {
            case .success(let value):
                return Evaluation(value: value, problems: [])
            case .failure(let problem):
                if let fallback = options.defaultValue { return Evaluation(value: fallback, problems: []) }
                return Evaluation(value: nil, problems: [problem.message], shapeFaults: problem.isShapeFault ? [problem.message] : [])
            }
        case .template(let parts, let options):
            return Self.template(parts, options: options, values)
        case .target(let parts):
            return Self.target(parts, values)
        case .localized(let forms, let count, let rules):
            return Self.localized(forms, count: count, rules: rules, values)
        case .each(let path, let variable, let template, let limit):
            return Self.each(path, as: variable, template, limit: limit, values)
        case .when(let branches, let otherwise):
            // A value a test reads may be missing: that is a test's answer, not a problem.
            for branch in branches {
                let tested: JSONValue? = if case .success(let value) = Self.resolve(branch.path, in: values) { value } else { nil }
                if branch.test.passes(tested) { return branch.value.evaluate(values) }
            }
            return otherwise?.evaluate(values) ?? Evaluation(value: nil, problems: ["no $when test passed, and it has no else"])
        }
    }

    /// A `$template`: its text with each value spliced in, or its default when one is missing.
    private static func template(_ parts: [TemplatePart], options: BindingOptions, _ values: [String: JSONValue]) -> Evaluation {
        var text = ""
        if let failure = appendText(of: parts, in: values, to: &text) {
            if let fallback = options.defaultValue { return Evaluation(value: fallback, problems: []) }
            return Evaluation(failure)
        }
        return Evaluation(value: .string(text), problems: [])
    }

    /// Appends the text of a template's or a message's parts to `output`: literal text as it
    /// is, each value as ``text(of:in:number:)`` says; the failure of the first value that makes
    /// none (then what was appended is not the text). The one way such text is made, whether
    /// into a string (``evaluate(_:)``) or into a data entry's bytes (``writeText(_:into:)``).
    private static func appendText(
        of parts: [TemplatePart], in values: some ValueLookup, number: ((Double) -> String)? = nil, to output: inout some TextOutput
    ) -> LookupFailure? {
        for part in parts {
            switch part {
            case .text(let literal):
                output.append(literal)
            case .value, .formatted:
                switch text(of: part, in: values, number: number) {
                case .success(let piece): output.append(piece)
                case .failure(let failure): return failure
                }
            }
        }
        return nil
    }

    /// The plural form of a message that `count` (a number, or text that is one) chooses; `other`
    /// without a count.
    private static func form(
        of forms: [PluralCategory: [TemplatePart]], count: ValuePath?, rules: LanguageRules, _ values: some ValueLookup
    ) -> Result<[TemplatePart], LookupFailure> {
        var category = PluralCategory.other
        if let count {
            switch values.resolve(count) {
            case .success(let value):
                guard let number = value.numberValue ?? value.stringValue.flatMap(Double.init) else {
                    return .failure(
                        LookupFailure(
                            message: "\(count) is \(value.typeName), not a number, so it cannot choose a plural form", isShapeFault: true))
                }
                category = rules.category(for: number)
            case .failure(let failure):
                return .failure(failure)
            }
        }
        return .success(forms[category] ?? forms[.other] ?? [])
    }

    /// Writes the text this expression makes into `output` as a JSON string, as a string field
    /// takes it: what ``evaluate(_:)`` gives, a number or Boolean written as in JSON (the data
    /// check's conversion). A template's or a message's text is escaped into the bytes as it is
    /// made, with no string nor value made first. False, with nothing written, when it makes no
    /// text without a problem.
    public func writeText(_ values: [String: JSONValue], into output: inout [UInt8]) -> Bool {
        writeText(in: values, into: &output)
    }

    /// ``writeText(_:into:)`` with the values looked up in `values`: a data request's own slots
    /// (``PlanValues``), with no table of the sources made.
    func writeText(in values: some ValueLookup, into output: inout [UInt8]) -> Bool {
        switch self {
        case .template(let parts, let options):
            if Self.write(parts, in: values, into: &output) { return true }
            return options.defaultValue.map { Self.write($0, asTextInto: &output) } ?? false
        case .localized(let forms, let count, let rules):
            guard case .success(let form) = Self.form(of: forms, count: count, rules: rules, values) else { return false }
            return Self.write(form, in: values, number: rules.format, into: &output)
        case .bind(let path, let options):
            // What ``evaluate(_:)`` gives a binding: its value, else its default.
            switch values.resolve(path) {
            case .success(let value): return Self.write(value, asTextInto: &output)
            case .failure: return options.defaultValue.map { Self.write($0, asTextInto: &output) } ?? false
            }
        default:
            let result = evaluate(values.sourceValues)
            guard result.problems.isEmpty, let value = result.value else { return false }
            return Self.write(value, asTextInto: &output)
        }
    }

    /// Writes the text of `parts` as a JSON string; false, with nothing written, when a value
    /// makes none.
    private static func write(
        _ parts: [TemplatePart], in values: some ValueLookup, number: ((Double) -> String)? = nil, into output: inout [UInt8]
    ) -> Bool {
        let start = output.count
        output.append(UInt8(ascii: "\""))
        var escaped = EscapedJSONText(taking: &output)
        let failure = appendText(of: parts, in: values, number: number, to: &escaped)
        output = escaped.bytes
        guard failure == nil else {
            output.removeSubrange(start...)
            return false
        }
        output.append(UInt8(ascii: "\""))
        return true
    }

    /// Writes `value` as a string field's JSON: text as it is, a number or Boolean as written in
    /// JSON; false for anything else.
    private static func write(_ value: JSONValue, asTextInto output: inout [UInt8]) -> Bool {
        guard let text = value.stringValue ?? ComponentCatalog.losslessString(value) else { return false }
        JSONWriter.writeString(text, into: &output)
        return true
    }

    /// An `$each`: the template evaluated for each item of the array at `path` (at most `limit`);
    /// an item that fails is dropped (the client would drop it too).
    private static func each(
        _ path: ValuePath, as variable: String, _ template: ContentExpression, limit: Int?, _ values: [String: JSONValue]
    ) -> Evaluation {
        let items: [JSONValue]
        switch resolve(path, in: values) {
        case .success(.array(let array)):
            items = array
        case .success(let value):
            let problem = "\(path) is \(value.typeName), not an array"
            return Evaluation(value: nil, problems: [problem], shapeFaults: [problem])
        case .failure(let problem):
            return Evaluation(value: nil, problems: [problem.message], shapeFaults: problem.isShapeFault ? [problem.message] : [])
        }
        var output: [JSONValue] = []
        var problems: [String] = []
        var faults: [String] = []
        var scope = values
        for (index, item) in items.prefix(limit ?? .max).enumerated() {
            scope[variable] = item
            let result = template.evaluate(scope)
            let itemProblems = result.problems.map { "item \(index) of \(path): \($0)" }
            problems += itemProblems
            if let value = result.value {
                output.append(value)
                faults += result.shapeFaults.map { "item \(index) of \(path): \($0)" }
            } else {
                // The item is dropped: whatever made it fail is the data's fault.
                faults += itemProblems
            }
        }
        return Evaluation(value: .array(output), problems: problems, shapeFaults: faults)
    }

    /// A localized message: the plural form its count chooses, with each value spliced in (a
    /// number in the locale's way).
    private static func localized(
        _ forms: [PluralCategory: [TemplatePart]], count: ValuePath?, rules: LanguageRules, _ values: [String: JSONValue]
    ) -> Evaluation {
        switch form(of: forms, count: count, rules: rules, values) {
        case .success(let form):
            var text = ""
            if let failure = appendText(of: form, in: values, number: rules.format, to: &text) { return Evaluation(failure) }
            return Evaluation(value: .string(text), problems: [])
        case .failure(let failure):
            return Evaluation(failure)
        }
    }

    /// A navigation target: the template's text as written, each value percent-encoded as one
    /// segment. A value that cannot be a segment (empty, `.`, `..`, a control character, or
    /// `data` as the last segment, which is the data endpoint) makes no target: the action, and
    /// so the item holding it, is left out rather than sent as a broken link.
    private static func target(_ parts: [TemplatePart], _ values: [String: JSONValue]) -> Evaluation {
        var text = ""
        for (index, part) in parts.enumerated() {
            switch part {
            case .text(let literal):
                text += literal
            // A target's values are segments as they are (the compiler refuses a format there).
            case .value(let path), .formatted(let path, _):
                let problem: String
                switch Self.text(at: path, in: values, cannot: "fill a path segment") {
                case .success(let segment):
                    if let reason = ScreenPattern.segmentProblem(segment) {
                        problem = "\(path) cannot be a path segment of a navigation target: \(reason)"
                    } else if index == parts.count - 1, segment == "data" {
                        problem = "\(path) is \"data\", which as the last segment of a target would name the data endpoint"
                    } else {
                        text += PercentEncoding.encode(segment)
                        continue
                    }
                case .failure(let failure):
                    problem = failure.message
                }
                // Whatever the reason, the link would be broken: the data is at fault.
                return Evaluation(value: nil, problems: [problem], shapeFaults: [problem])
            }
        }
        return Evaluation(value: .string(text), problems: [])
    }

    /// The text a value at `path` gives a `$template` or a target: a string as it is, a number or
    /// Boolean as written in JSON. An array or object cannot be text (a shape fault).
    /// - Parameter number: how a number is written (as JSON writes it unless a locale says otherwise).
    private static func text(
        at path: ValuePath, in values: some ValueLookup, cannot use: String, number: ((Double) -> String)? = nil
    ) -> Result<String, LookupFailure> {
        switch values.resolve(path) {
        case .success(.string(let string)):
            .success(string)
        case .success(let value) where value.numberValue != nil || value.boolValue != nil:
            .success(value.numberValue.flatMap { written in number?(written) } ?? JSONWriter.string(value))
        case .success(let value):
            .failure(
                LookupFailure(
                    message: "\(path) is \(value.typeName == "object" ? "an" : "a") \(value.typeName), which cannot \(use)",
                    isShapeFault: true)
            )
        case .failure(let failure):
            .failure(failure)
        }
    }

    /// The text a part of a `$template` or a message gives: its value as ``text(at:in:cannot:number:)``
    /// says, or written in its format (a value that does not fit the format is a shape fault).
    private static func text(
        of part: TemplatePart, in values: some ValueLookup, number: ((Double) -> String)? = nil
    )
        -> Result<String, LookupFailure>
    {
        switch part {
        case .text(let text): return .success(text)
        case .value(let path): return text(at: path, in: values, cannot: "be spliced into text", number: number)
        case .formatted(let path, let format):
            switch values.resolve(path) {
            case .success(let value):
                return format.format(value).mapError {
                    LookupFailure(message: "\(path) cannot be written as | \(format): \($0.message)", isShapeFault: true)
                }
            case .failure(let failure):
                return .failure(failure)
            }
        }
    }

    /// Where the text of a template or a message goes as it is made (``appendText(of:in:number:to:)``).
    protocol TextOutput {
        mutating func append(_ piece: String)
    }

    /// Text written into a JSON string's bytes, escaped as each piece comes.
    struct EscapedJSONText: TextOutput {
        var bytes: [UInt8]

        /// Takes `output`'s bytes, leaving it empty, so appending copies nothing; give them back
        /// from ``bytes``.
        init(taking output: inout [UInt8]) {
            bytes = []
            swap(&bytes, &output)
        }

        mutating func append(_ piece: String) {
            JSONWriter.writeEscaped(piece, into: &bytes)
        }
    }

    struct LookupFailure: Error {
        var message: String
        /// The data has another shape than the path walks (not an object, not an array); false
        /// when a key, an element or the source is simply absent, or the value is null.
        var isShapeFault = false
    }

    /// The expression that makes the value at `path` of this one's value (an `$each`'s template for
    /// any of its items); nil when no single expression does.
    func expression(at path: JSONPath) -> ContentExpression? {
        var current = self
        for segment in path.segments {
            switch (current, segment) {
            case (.object(let members), .key(let key)):
                guard let next = members[key] else { return nil }
                current = next
            case (.array(let elements), .index(let index)):
                guard elements.indices.contains(index) else { return nil }
                current = elements[index]
            case (.each(_, _, let template, _), .index): current = template
            default: return nil
            }
        }
        return current
    }

    /// The value at `path`, or why it is missing, naming the nearest key that exists.
    static func resolve(_ path: ValuePath, in values: [String: JSONValue]) -> Result<JSONValue, LookupFailure> {
        guard let value = values[path.root] else {
            return .failure(LookupFailure(message: "source \"\(path.root)\" has no value (it failed or is not available)"))
        }
        return walk(path, from: value, at: 0)
    }

    /// The value at `path`, walked from `value`, the value at its first `step` steps (the
    /// source's own value at 0); or why it is missing, as ``resolve(_:in:)`` says it.
    static func walk(_ path: ValuePath, from value: JSONValue, at step: Int) -> Result<JSONValue, LookupFailure> {
        var current = value
        let segments = path.steps.segments
        // The part of the path found so far, made only for a message: a lookup that succeeds
        // (every data request's) builds no path.
        var step = step
        var walked: ValuePath { ValuePath(root: path.root, steps: JSONPath(segments: Array(segments[..<step]))) }
        for segment in segments[step...] {
            switch segment {
            case .key(let key):
                guard case .object(let members) = current else {
                    return .failure(
                        LookupFailure(message: "\(walked) is \(current.typeName), so it has no key \"\(key)\"", isShapeFault: true)
                    )
                }
                guard let next = members[key] else {
                    return .failure(
                        LookupFailure(
                            message: "\(walked) has no key \"\(key)\"" + NameSuggestion.hint(for: key, among: members.keys)
                        )
                    )
                }
                current = next
            case .index(let index):
                guard case .array(let elements) = current else {
                    return .failure(LookupFailure(message: "\(walked) is \(current.typeName), not an array", isShapeFault: true))
                }
                guard elements.indices.contains(index) else {
                    return .failure(LookupFailure(message: "\(walked) has \(elements.count) elements, so no [\(index)]"))
                }
                current = elements[index]
            }
            step += 1
        }
        if current.isNull { return .failure(LookupFailure(message: "\(path) is null")) }
        return .success(current)
    }
}

/// Text made into a string, as ``ContentExpression/evaluate(_:)`` gives it.
extension String: ContentExpression.TextOutput {}
