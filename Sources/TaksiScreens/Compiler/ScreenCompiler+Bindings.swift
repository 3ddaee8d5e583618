import TaksiSchema

// Compiling bindings (`$bind`, `$template`, `$each`): their paths, options and templates, and
// the check that each one reads a declared source or loop variable.

extension ScreenCompiler {
    /// A `$bind`, `$template`, `$each` or `$text` in a field of type `type`.
    mutating func compileBinding(
        _ node: JSONNode, key: String, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>,
        fillsRequiredField: Bool
    ) -> ContentExpression? {
        let bindingPath = path.appending(key)
        switch key {
        case "$bind":
            guard
                let members = reader.object(node, at: path, what: "a $bind binding", allowed: ["$bind", "default", "placeholder"]),
                let pathNode = members.first(where: { $0.key == "$bind" })?.value,
                let valuePath = readValuePath(pathNode, at: bindingPath, scope: scope)
            else { return nil }
            guard let options = readOptions(members, as: type, at: path) else { return nil }
            if let type,
                !sourceTable.checkFit(
                    valuePath, as: type, fillsRequiredField: fillsRequiredField, hasDefault: options.defaultValue != nil, node: pathNode,
                    at: bindingPath, reader: &reader)
            {
                return nil
            }
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
                    "a $template makes text, but this field is \(type.name.withArticle); use $bind"
                )
                return nil
            }
            guard let parts = readTemplate(text, node: textNode, at: bindingPath, scope: scope),
                let options = readOptions(members, as: type, at: path)
            else { return nil }
            return .template(parts, options)
        case "$each":
            return compileEach(node, as: type, at: path, siblings: siblings, scope: scope, fillsRequiredField: fillsRequiredField)
        case "$when":
            return compileWhen(node, as: type, at: path, siblings: siblings, scope: scope, fillsRequiredField: fillsRequiredField)
        case Self.textKey:
            return compileText(node, as: type, at: path, scope: scope)
        default:
            reader.report(
                .invalidBinding, at: node, path: bindingPath,
                "unknown binding \"\(key)\"; use $bind, $template, $each, $text or $when"
                    + NameSuggestion.hint(for: key, among: Self.bindingKeys)
            )
            return nil
        }
    }

    /// A `$when`: branches of `{if: {value: PATH, equals|one_of|above|below|present: ...}, then: VALUE}`
    /// and an optional `else`, each value compiled as one of the field's type.
    private mutating func compileWhen(
        _ node: JSONNode, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>,
        fillsRequiredField: Bool
    ) -> ContentExpression? {
        guard let members = reader.object(node, at: path, what: "a $when binding", allowed: ["$when", "else"], required: ["$when"]),
            let list = members.first(where: { $0.key == "$when" })?.value
        else { return nil }
        let listPath = path.appending("$when")
        guard let elements = list.elements, !elements.isEmpty else {
            reader.report(
                .invalidBinding, at: list, path: listPath,
                "$when takes a non-empty list of {if: {value: source.path, equals: 0}, then: value}, tried in order")
            return nil
        }
        var branches: [ContentExpression.Branch] = []
        var valid = true
        for (index, element) in elements.enumerated() {
            let branchPath = listPath.appending(index)
            guard
                let branch = reader.object(
                    element, at: branchPath, what: "a $when branch", allowed: ["if", "then"], required: ["if", "then"]),
                let condition = branch.first(where: { $0.key == "if" })?.value,
                let thenNode = branch.first(where: { $0.key == "then" })?.value,
                let (valuePath, test) = readTest(condition, at: branchPath.appending("if"), scope: scope),
                let value = compileValue(
                    thenNode, as: type, at: branchPath.appending("then"), siblings: siblings, scope: scope,
                    fillsRequiredField: fillsRequiredField)
            else {
                valid = false
                continue
            }
            branches.append(ContentExpression.Branch(path: valuePath, test: test, value: value))
        }
        var otherwise: ContentExpression?
        if let elseNode = members.first(where: { $0.key == "else" })?.value {
            otherwise = compileValue(
                elseNode, as: type, at: path.appending("else"), siblings: siblings, scope: scope, fillsRequiredField: fillsRequiredField)
            if otherwise == nil { valid = false }
        }
        return valid ? .when(branches, otherwise: otherwise) : nil
    }

    /// `{value: PATH, equals: 0}`: the value tested and the one comparison.
    private mutating func readTest(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> (ValuePath, ContentExpression.Test)? {
        let comparisons = ["equals", "one_of", "above", "below", "present"]
        guard let members = reader.object(node, at: path, what: "a $when test", allowed: ["value"] + comparisons, required: ["value"]),
            let valueNode = members.first(where: { $0.key == "value" })?.value,
            let valuePath = readValuePath(valueNode, at: path.appending("value"), scope: scope)
        else { return nil }
        let given = members.filter { comparisons.contains($0.key) }
        guard given.count == 1, let comparison = given.first else {
            reader.report(
                .invalidBinding, at: node, path: path,
                "a test compares the value one way: give exactly one of equals, one_of, above, below or present")
            return nil
        }
        let operand = comparison.value
        let operandPath = path.appending(comparison.key)
        switch comparison.key {
        case "equals":
            return (valuePath, .equals(operand.value))
        case "one_of":
            guard let elements = operand.elements, !elements.isEmpty else {
                reader.report(.wrongType, at: operand, path: operandPath, "one_of takes a non-empty list of values, like [new, used]")
                return nil
            }
            return (valuePath, .oneOf(elements.map(\.value)))
        case "above", "below":
            guard let number = operand.value.numberValue else {
                reader.report(.wrongType, at: operand, path: operandPath, "\(comparison.key) takes a number, like 4.5")
                return nil
            }
            return (valuePath, comparison.key == "above" ? .above(number) : .below(number))
        default:
            guard case .bool(let wanted) = operand.value else {
                reader.report(.wrongType, at: operand, path: operandPath, "present takes true (there, not null) or false (missing or null)")
                return nil
            }
            return (valuePath, .present(wanted))
        }
    }

    /// An `$each`: a list read from a binding path, each element made from `template` with the
    /// loop variable (`as`, `item` by default) in scope, at most `limit` of them.
    private mutating func compileEach(
        _ node: JSONNode, as type: FieldType?, at path: JSONPath, siblings: [JSONNode.Member], scope: Set<String>,
        fillsRequiredField: Bool
    ) -> ContentExpression? {
        guard
            let members = reader.object(
                node, at: path, what: "an $each binding", allowed: ["$each", "as", "template", "limit"],
                required: ["template"]
            ),
            let pathNode = members.first(where: { $0.key == "$each" })?.value,
            let valuePath = readValuePath(pathNode, at: path.appending("$each"), scope: scope),
            let templateNode = members.first(where: { $0.key == "template" })?.value
        else { return nil }
        // What it iterates must be an array; one that may be missing leaves an empty list, which is no mistake.
        guard
            sourceTable.checkFit(
                valuePath, as: .array(items: nil), fillsRequiredField: false, hasDefault: false, node: pathNode,
                at: path.appending("$each"),
                reader: &reader)
        else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        let variable = reader.string(member("as"), at: path.appending("as"), what: "as") ?? "item"
        if sourceTable[variable] != nil || scope.contains(variable)
            || !variable.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar)
        {
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
        // While the template is read, the loop variable is known to hold what the array's elements do.
        let outerAnswer = sourceTable.answers[variable]
        sourceTable.answers[variable] = sourceTable.answers[valuePath.root]?.elements(at: valuePath.steps)
        defer { sourceTable.answers[variable] = outerAnswer }
        let template: ContentExpression?
        switch type {
        case .componentContents(let nameField):
            guard let itemSchema = itemSchema(nameField: nameField, siblings: siblings, at: path) else { return nil }
            template = compileContent(templateNode, schema: itemSchema, at: templatePath, topLevel: false, scope: innerScope)
                .map { Self.normalized(.object($0)) }
        case .array(let items):
            template = compileValue(
                templateNode, as: items, at: templatePath, siblings: [], scope: innerScope, fillsRequiredField: fillsRequiredField)
        case nil:
            template = compileValue(
                templateNode, as: nil, at: templatePath, siblings: [], scope: innerScope, fillsRequiredField: fillsRequiredField)
        case let type?:
            reader.report(
                .invalidBinding, at: node, path: path,
                "$each makes an array, but this field is \(type.name.withArticle); use $bind or $template"
            )
            return nil
        }
        guard let template else { return nil }
        return .each(valuePath, variable: variable, template: template, limit: limit)
    }

    private mutating func readOptions(
        _ members: [JSONNode.Member], as type: FieldType?, at path: JSONPath
    ) -> ContentExpression.BindingOptions? {
        var options = ContentExpression.BindingOptions()
        for key in ["default", "placeholder"] {
            guard let node = members.first(where: { $0.key == key })?.value else { continue }
            var value = node.value
            // A localized default or placeholder: the message in the locale being compiled (each
            // locale compiles the screen again), so it must be literal text.
            if node[Self.textKey] != nil {
                guard let compiled = compileText(node, as: type, at: path.appending(key), scope: []) else { return nil }
                guard case .literal(let text) = compiled else {
                    reader.report(
                        .invalidBinding, at: node, path: path.appending(key),
                        "a \(key) is used when the value is missing, so its $text cannot take values from data; give it literal values (with: {count: 2}) or none"
                    )
                    return nil
                }
                value = text
            }
            if let type {
                let result = catalog.check(value, as: type, mode: .definition)
                reader.report(result.violations, in: node, at: path.appending(key))
                guard result.isValid else { return nil }
            }
            if key == "default" { options.defaultValue = value } else { options.placeholder = value }
        }
        return options
    }

    mutating func readValuePath(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> ValuePath? {
        sourceTable.valuePath(node, at: path, scope: scope, reader: &reader)
    }

    mutating func checkRoot(_ valuePath: ValuePath, node: JSONNode, at path: JSONPath, scope: Set<String>) -> Bool {
        sourceTable.check(valuePath, node: node, at: path, scope: scope, reader: &reader)
    }

    mutating func readTemplate(_ text: String, node: JSONNode, at path: JSONPath, scope: Set<String>) -> [ContentExpression.TemplatePart]? {
        let pieces: [TemplateText.Piece]
        switch TemplateText.pieces(of: text) {
        case .success(let found): pieces = found
        case .failure(let malformed):
            reader.report(.invalidBinding, at: node, path: path, malformed.message("in the template"))
            return nil
        }
        var parts: [ContentExpression.TemplatePart] = []
        for piece in pieces {
            switch piece {
            case .text(let literal):
                parts.append(.text(literal))
            case .reference(let reference):
                let (pathText, formatText) = Self.splitFormat(reference)
                guard let valuePath = ValuePath(parsing: pathText.trimmingSpaces) else {
                    reader.report(
                        .invalidBinding, at: node, path: path,
                        "{\(reference)} in the template is not a binding path; write {source.key}, or {source.key | format} to format it"
                    )
                    return nil
                }
                guard checkRoot(valuePath, node: node, at: path, scope: scope),
                    sourceTable.checkText(valuePath, node: node, at: path, reader: &reader)
                else { return nil }
                if let formatText {
                    guard let format = readFormat(formatText, node: node, at: path) else { return nil }
                    parts.append(.formatted(valuePath, format))
                } else {
                    parts.append(.value(valuePath))
                }
            }
        }
        return parts
    }

    /// A reference's path and, after a `|`, its format: `shop.price | currency EUR`.
    static func splitFormat(_ reference: String) -> (path: String, format: String?) {
        guard let bar = reference.firstIndex(of: "|") else { return (reference, nil) }
        return (String(reference[..<bar]), String(reference[reference.index(after: bar)...]).trimmingSpaces)
    }

    /// A format of the locale this compilation is for (the default locale, or English without
    /// string tables); nil when it is not one (reported).
    mutating func readFormat(_ text: String, node: JSONNode, at path: JSONPath) -> ValueFormat? {
        let tag = locale.map { context.localization?.formattingLocale(for: $0) ?? $0 } ?? "en"
        switch ValueFormat.parse(text, locale: tag) {
        case .success(let format):
            made.formatsUsed = true
            return format
        case .failure(let error):
            reader.report(.invalidBinding, at: node, path: path, "| \(text): \(error.message)")
            return nil
        }
    }
}
