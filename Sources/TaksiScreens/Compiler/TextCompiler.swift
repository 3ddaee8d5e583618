import TaksiSchema

extension ScreenCompiler {
    static let textKey = "$text"

    /// A `$text` (see ``TextCompiler``).
    mutating func compileText(_ node: JSONNode, as type: FieldType?, at path: JSONPath, scope: Set<String>) -> ContentExpression? {
        let text = TextCompiler.compile(
            node, as: type, at: path, scope: scope, localization: context.localization, locale: locale, sources: sourceTable,
            reporting: &reader)
        made.textsUsed.formUnion(text.textsUsed)
        made.formatsUsed = made.formatsUsed || text.formatsUsed
        sourceTable.markUsed(text.sourcesUsed)
        return text.expression
    }
}

/// Compiles localized text: `{$text: greeting, with: {name: query.name}}` is the message
/// `greeting` of the locale being compiled, with its placeholders filled from binding paths (or
/// literals). Without bindings it is a literal, so a static field can hold it; a screen that uses
/// it is compiled once per locale. A sub-compiler of ``ScreenCompiler``: it takes what it reads and
/// returns what it made (``Result``), reporting into the screen's reader.
struct TextCompiler {
    /// One `$text`, compiled.
    struct Result {
        /// The expression; nil when the `$text` has errors (reported).
        var expression: ContentExpression?
        /// The message ids used.
        var textsUsed: Set<String>
        /// Whether an argument is written in a format (`| currency EUR`).
        var formatsUsed: Bool
        /// The sources its arguments read.
        var sourcesUsed: Set<String>
    }

    /// Compiles the `$text` `node` for a field of `type` in `locale`; its arguments may read
    /// `sources` and the loop variables in `scope`.
    static func compile(
        _ node: JSONNode, as type: FieldType?, at path: JSONPath, scope: Set<String>, localization: Localization?, locale: String?,
        sources: SourceTable, reporting reader: inout DefinitionReader
    ) -> Result {
        var compiler = TextCompiler(reader: reader, localization: localization, locale: locale, sources: sources)
        let expression = compiler.compile(node, as: type, at: path, scope: scope)
        reader = compiler.reader
        return Result(
            expression: expression, textsUsed: compiler.textsUsed, formatsUsed: compiler.formatsUsed, sourcesUsed: compiler.sources.used)
    }

    /// The screen's reader, for the length of one ``compile(_:as:at:scope:localization:locale:sources:reporting:)``.
    private var reader: DefinitionReader
    private let localization: Localization?
    /// The locale being compiled.
    private let locale: String?
    /// The screen's sources, which arguments may read; records what they read.
    private var sources: SourceTable
    private var textsUsed: Set<String> = []
    private var formatsUsed = false

    private init(reader: DefinitionReader, localization: Localization?, locale: String?, sources: SourceTable) {
        self.reader = reader
        self.localization = localization
        self.locale = locale
        self.sources = sources
    }

    private mutating func compile(_ node: JSONNode, as type: FieldType?, at path: JSONPath, scope: Set<String>) -> ContentExpression? {
        let textKey = ScreenCompiler.textKey
        let keyPath = path.appending(textKey)
        guard
            let members = reader.object(node, at: path, what: "a $text", allowed: [textKey, Fragment.argumentsKey]),
            let keyNode = members.first(where: { $0.key == textKey })?.value,
            let key = reader.string(keyNode, at: keyPath, what: "a message id")
        else { return nil }
        guard let localization, let locale else {
            reader.report(
                .unknownText, at: keyNode, path: keyPath,
                "there are no string tables; add strings/en.yaml (one file per locale) with \(key): \"...\""
            )
            return nil
        }
        if let type, type != .string, type != .url {
            reader.report(
                .invalidBinding, at: node, path: path,
                "$text makes text, but this field is \(type.name.withArticle)")
            return nil
        }
        guard let message = localization.message(key, in: locale) else {
            let table = "\(StringTable.folder)/\(localization.defaultLocale)"
            reader.report(
                .unknownText, at: keyNode, path: keyPath,
                "message \"\(key)\" is not in the string tables; add it to \(table).yaml and every other locale's"
                    + NameSuggestion.hint(for: key, among: localization.keys)
            )
            return nil
        }
        textsUsed.insert(key)
        let rules = localization.rules(for: locale)
        let argumentsNode = members.first { $0.key == Fragment.argumentsKey }?.value
        guard
            let (arguments, literalCount) = readTextArguments(
                argumentsNode, of: message, key: key, node: node, at: path, rules: rules, scope: scope)
        else { return nil }
        return Self.textExpression(message, arguments: arguments, literalCount: literalCount, rules: rules)
    }

    /// A binding path of an argument, recorded as used.
    private mutating func readValuePath(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> ValuePath? {
        sources.valuePath(node, at: path, scope: scope, reader: &reader)
    }

    /// The values of a message's placeholders (`with:`): each a binding path, or a literal number
    /// or Boolean; every placeholder needs one. Nil when one is wrong (reported).
    private mutating func readTextArguments(
        _ argumentsNode: JSONNode?, of message: LocalizedMessage, key: String, node: JSONNode, at path: JSONPath, rules: LanguageRules,
        scope: Set<String>
    ) -> (arguments: [String: ContentExpression.TemplatePart], literalCount: Double?)? {
        var arguments: [String: ContentExpression.TemplatePart] = [:]
        var literalCount: Double?
        var valid = true
        let argumentsPath = path.appending(Fragment.argumentsKey)
        // The default locale's message is the reference: a locale whose placeholders differ is the
        // string table's error (reported there), not the screen's, which must not be told to copy it.
        let expected =
            localization.flatMap { $0.message(key, in: $0.defaultLocale)?.placeholders } ?? message.placeholders
        if let argumentsNode {
            guard let argumentMembers = argumentsNode.members else {
                reader.report(
                    .wrongType, at: argumentsNode, path: argumentsPath,
                    "with must be an object of placeholders and binding paths, like {name: query.name}")
                return nil
            }
            let placeholders = expected.sorted()
            for argument in argumentMembers {
                let argumentPath = argumentsPath.appending(argument.key)
                guard expected.contains(argument.key) else {
                    reader.report(
                        .invalidText, offset: argument.keyOffset, path: argumentPath,
                        "message \"\(key)\" has no placeholder {\(argument.key)}"
                            + (placeholders.isEmpty
                                ? "; remove it" : "; its placeholders are \(placeholders.map { "{\($0)}" }.joined(separator: ", "))")
                            + NameSuggestion.hint(for: argument.key, among: placeholders)
                    )
                    valid = false
                    continue
                }
                switch argument.value.value {
                case .string(let text):
                    // `shop.price | currency EUR`: a path, and a format of this locale.
                    let (pathText, formatText) = ScreenCompiler.splitFormat(text)
                    let pathNode =
                        formatText == nil ? argument.value : JSONNode(.string(pathText.trimmingSpaces), offset: argument.value.offset)
                    guard let valuePath = readValuePath(pathNode, at: argumentPath, scope: scope) else {
                        valid = false
                        continue
                    }
                    guard let formatText else {
                        arguments[argument.key] = .value(valuePath)
                        continue
                    }
                    switch ValueFormat.parse(formatText, locale: localization?.formattingLocale(for: locale ?? "") ?? "en") {
                    case .success(let format):
                        arguments[argument.key] = .formatted(valuePath, format)
                        formatsUsed = true
                    case .failure(let error):
                        reader.report(.invalidText, at: argument.value, path: argumentPath, "| \(formatText): \(error.message)")
                        valid = false
                    }
                case .number(let number):
                    arguments[argument.key] = .text(rules.format(number))
                    if argument.key == LocalizedMessage.countPlaceholder { literalCount = number }
                case .bool(let flag):
                    arguments[argument.key] = .text(flag ? "true" : "false")
                default:
                    reader.report(
                        .wrongType, at: argument.value, path: argumentPath,
                        "a placeholder's value is a binding path (like query.name) or a number, found \(argument.value.typeName)"
                    )
                    valid = false
                }
            }
        }
        let missing = expected.subtracting(arguments.keys).sorted()
        if valid, !missing.isEmpty {
            reader.report(
                .invalidText, at: argumentsNode ?? node, path: argumentsNode == nil ? path : argumentsPath,
                "message \"\(key)\" needs \(missing.map { "{\($0)}" }.joined(separator: ", ")); add with: {\(missing.map { "\($0): source.path" }.joined(separator: ", "))}"
            )
            return nil
        }
        guard valid else { return nil }
        return (arguments, literalCount)
    }

    /// The expression of a message with its arguments: a literal when nothing is bound, else its
    /// forms (one per plural category when the count is bound).
    private static func textExpression(
        _ message: LocalizedMessage, arguments: [String: ContentExpression.TemplatePart], literalCount: Double?, rules: LanguageRules
    ) -> ContentExpression {
        var forms = message.forms.mapValues { pieces in
            pieces.map { piece -> ContentExpression.TemplatePart in
                switch piece {
                case .text(let text): .text(text)
                // Every placeholder has an argument (checked when they were read).
                case .placeholder(let name): arguments[name] ?? .text("{\(name)}")
                }
            }
        }
        var count: ValuePath?
        if message.isPlural {
            if let literalCount {
                forms = [.other: forms[rules.category(for: literalCount)] ?? forms[.other] ?? []]
            } else if case .value(let path)? = arguments[LocalizedMessage.countPlaceholder] {
                count = path
            }
        }
        if count == nil, let parts = forms[.other] ?? forms.values.first,
            parts.allSatisfy({ if case .text = $0 { true } else { false } })
        {
            return .literal(.string(parts.map { if case .text(let text) = $0 { text } else { "" } }.joined()))
        }
        return .localized(forms: forms, count: count, rules: rules)
    }
}
