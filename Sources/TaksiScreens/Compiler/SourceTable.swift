import TaksiSchema

/// The sources a binding's root may name while one part of a screen is read (the screen's
/// components, an action's call body or one of its answers), and which of them bindings used.
///
/// ``ScreenCompiler`` owns one; its sub-compilers (``FragmentExpander``, ``TextCompiler``) take a
/// copy and return the names their bindings used, which it marks, so "declared but never used" and
/// the data plan's sources are decided from one place.
struct SourceTable {
    /// What may be bound: the screen's sources (`path` for its path parameters), or an action's
    /// inputs, response and errors while it is read.
    private(set) var declared: [String: SourceDefinition]
    /// Sources declared with errors: bindings to them are not reported again.
    private(set) var invalid: Set<String>
    /// While an action is read: what reads the bindings (`the ok answer of action submit`), for
    /// messages; nil for the screen's own components.
    let context: String?
    /// The declared sources bindings named (loop variables are not sources).
    private(set) var used: Set<String> = []
    /// What sources (and, while their templates are read, loop variables) are known to hold:
    /// a binding's keys, and the type of what it reads, are checked against them.
    var answers: [String: KnownAnswer] = [:]
    /// What the sources answer with the statuses of their `answers`, where that is known (the
    /// upstream's OpenAPI document): a status's patch binds into that body, not the success answer.
    var statusAnswers: [String: [HTTPSource.StatusMatch: KnownAnswer]] = [:]

    init(declared: [String: SourceDefinition] = [:], invalid: Set<String> = [], context: String? = nil) {
        self.declared = declared
        self.invalid = invalid
        self.context = context
    }

    subscript(name: String) -> SourceDefinition? { declared[name] }

    /// Adds the sources read from a screen's `sources` (and those declared with errors).
    mutating func declare(_ sources: [String: SourceDefinition], invalid: Set<String> = [], answers: [String: KnownAnswer] = [:]) {
        declared.merge(sources) { _, read in read }
        self.invalid.formUnion(invalid)
        self.answers.merge(answers) { _, read in read }
    }

    /// Records names as used: what a sub-compiler's bindings used, or (without a checked binding)
    /// the loosely read roots of a component that failed to compile, so they are not also reported
    /// as never used.
    mutating func markUsed(_ names: some Sequence<String>) {
        used.formUnion(names)
    }

    /// A binding path (`source.key.list[0]`) whose root is known here, recorded as used; nil when
    /// it is not a path or names nothing known (reported).
    mutating func valuePath(_ node: JSONNode, at path: JSONPath, scope: Set<String>, reader: inout DefinitionReader) -> ValuePath? {
        guard let text = reader.string(node, at: path, what: "a binding path") else { return nil }
        guard let valuePath = ValuePath(parsing: text) else {
            reader.report(
                .invalidBinding, at: node, path: path,
                "\"\(text)\" is not a binding path; write source.key.key or source.list[0].key"
            )
            return nil
        }
        return check(valuePath, node: node, at: path, scope: scope, reader: &reader) ? valuePath : nil
    }

    /// Whether `valuePath`'s root is a loop variable in `scope` or a source (then recorded as
    /// used); when it is neither, reports it (unless its declaration was reported already).
    mutating func check(
        _ valuePath: ValuePath, node: JSONNode, at path: JSONPath, scope: Set<String>, reader: inout DefinitionReader
    ) -> Bool {
        if scope.contains(valuePath.root) { return checkKeys(valuePath, node: node, at: path, reader: &reader) }
        if declared[valuePath.root] != nil {
            used.insert(valuePath.root)
            return checkKeys(valuePath, node: node, at: path, reader: &reader)
        }
        // Its declaration is already reported; a binding to it is not a second mistake.
        if invalid.contains(valuePath.root) { return false }
        let known = Array(declared.keys) + Array(scope)
        let message =
            if let context {
                "\"\(valuePath.root)\" is not a value \(context) reads; use one of \(known.sorted().joined(separator: ", ")) (the screen's own sources are not called for an action)"
            } else {
                "\"\(valuePath.root)\" is not a source of this screen"
                    + (known.isEmpty
                        ? "; declare it under \"sources\""
                        : "; declare it under \"sources\" or use one of \(known.sorted().joined(separator: ", "))")
            }
        reader.report(.unknownSource, at: node, path: path, message + NameSuggestion.hint(for: valuePath.root, among: known))
        // The source it most likely meant is not also reported as never used: one mistake, one report.
        if let meant = NameSuggestion.closest(to: valuePath.root, among: known), declared[meant] != nil { used.insert(meant) }
        return false
    }

    /// Whether the keys of `valuePath` are in what its root is known to hold (true when nothing is
    /// known of it); a key it does not have, or a step into a value that is not an object or an
    /// array, is reported, with the keys there are.
    func checkKeys(_ valuePath: ValuePath, node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> Bool {
        guard let known = answers[valuePath.root] else { return true }
        switch known.walk(valuePath.steps) {
        case .found:
            return true
        case .missing(let key, let before, let keys):
            let owner = ValuePath(root: valuePath.root, steps: before).description
            reader.report(
                .unknownAnswerField, at: node, path: path,
                "\"\(key)\" is not in \(owner) as \(known.origin) has it"
                    + (keys.isEmpty ? "" : "; its keys are \(keys.joined(separator: ", "))") + NameSuggestion.hint(for: key, among: keys)
                    + "; \(known.fix)"
            )
        case .mismatch(let before, let found, let step):
            let owner = ValuePath(root: valuePath.root, steps: before).description
            let wanted = if case .key = step { "an object" } else { "an array" }
            reader.report(
                .unknownAnswerField, at: node, path: path,
                "\(owner) is \(found.described) as \(known.origin) has it, not \(wanted), so \(valuePath) finds nothing; "
                    + "bind \(owner) itself, or \(known.fix)"
            )
        }
        return false
    }

    /// Whether what `valuePath` reads fits a field of `type` as its root is known to hold (true
    /// when nothing is known); a value of another type is an error; one the source may leave out
    /// or send as null, bound into a field the client requires with no `default`, a warning.
    func checkFit(
        _ valuePath: ValuePath, as type: FieldType, fillsRequiredField: Bool, hasDefault: Bool, node: JSONNode, at path: JSONPath,
        reader: inout DefinitionReader
    ) -> Bool {
        guard let known = answers[valuePath.root], case .found(let shape, let optional) = known.walk(valuePath.steps) else {
            return true
        }
        if let misfit = shape.misfit(for: type) {
            reader.report(
                .answerTypeMismatch, at: node, path: path,
                "\(valuePath) is \(misfit) as \(known.origin) has it, but this field is \(type.name.withArticle), "
                    + "which the client cannot decode from it; bind a value of that type"
            )
            return false
        }
        if let optional, fillsRequiredField, !hasDefault {
            let owner = ValuePath(root: valuePath.root, steps: optional).description
            reader.report(
                .optionalAnswerField, at: node, path: path,
                "\(owner) may be missing or null as \(known.origin) has it, and this field is required, so the component would be left out; "
                    + "add a default: {$bind: \(valuePath), default: ...}",
                severity: .warning)
        }
        return true
    }

    /// Whether what `valuePath` reads can be spliced into text (true when nothing is known); an
    /// object or an array is reported.
    func checkText(_ valuePath: ValuePath, node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> Bool {
        guard let known = answers[valuePath.root], case .found(let shape, _) = known.walk(valuePath.steps), !shape.isText else {
            return true
        }
        reader.report(
            .answerTypeMismatch, at: node, path: path,
            "{\(valuePath)} is \(shape.described) as \(known.origin) has it, which cannot be written as text; "
                + "name one of its values, or list it with $each"
        )
        return false
    }
}
