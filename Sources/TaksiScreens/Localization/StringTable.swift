import TaksiSchema

/// One message of a string table in one locale: text with `{placeholders}`, or plural forms by
/// CLDR category, chosen by the placeholder `count`.
///
/// ```yaml
/// # Screens/strings/en.yaml
/// greeting: "Hello, {name}!"
/// restaurants_count:
///   one: "{count} restaurant"
///   other: "{count} restaurants"
/// ```
public struct LocalizedMessage: Sendable, Hashable {
    public enum Piece: Sendable, Hashable {
        case text(String)
        case placeholder(String)
    }

    /// A plain message has one form, under `other`.
    public var forms: [PluralCategory: [Piece]]
    public var isPlural: Bool

    /// The placeholder that chooses a plural form.
    public static let countPlaceholder = "count"

    /// The placeholders, over every form.
    public var placeholders: Set<String> {
        Set(forms.values.flatMap { $0.compactMap { if case .placeholder(let name) = $0 { name } else { nil } } })
    }

    /// Splits `{name}` placeholders out of `text`; `{{` and `}}` are literal braces.
    /// - Returns: the pieces, or why the text is malformed.
    static func pieces(of text: String) -> Result<[Piece], TextError> {
        switch TemplateText.pieces(of: text) {
        case .failure(let malformed):
            return .failure(TextError(malformed.message("")))
        case .success(let pieces):
            var found: [Piece] = []
            for piece in pieces {
                switch piece {
                case .text(let text):
                    found.append(.text(text))
                case .reference(let reference):
                    let name = reference.trimmingSpaces
                    guard !name.isEmpty, name.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar) else {
                        return .failure(TextError("{\(reference)} is not a placeholder; placeholders are names like {name} or {count}"))
                    }
                    found.append(.placeholder(name))
                }
            }
            return .success(found)
        }
    }

    struct TextError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}

/// One locale's messages, as read from `strings/<locale>.yaml` (or `.json`).
struct StringTable: Sendable {
    /// The folder of string tables in a screens directory.
    static let folder = "strings"
    /// The optional file that names the default locale and the pseudo-locale.
    static let settingsFiles = ["locales.yaml", "locales.yml", "locales.json"]

    /// The locale's tag as the file names it: `en`, `pt-BR`.
    var locale: String
    var file: SourceFile
    var messages: [String: LocalizedMessage]
    /// Where each message's key is written.
    var keyOffsets: [String: Int]
    /// The keys in the file's order.
    var keys: [String]
}

extension DefinitionReader {
    /// Reads a string table: message ids (letters, digits, `_`, `.`, `-`) to text or plural forms.
    mutating func readStringTable(_ root: JSONNode, locale: String) -> StringTable? {
        guard let members = root.members else {
            report(
                .wrongType, at: root, path: .root,
                "a string table is an object of message ids and texts, like {greeting: \"Hello, {name}!\"}")
            return nil
        }
        var table = StringTable(locale: locale, file: file, messages: [:], keyOffsets: [:], keys: [])
        for member in members {
            let path = JSONPath.root.appending(member.key)
            guard !member.key.isEmpty, member.key.unicodeScalars.allSatisfy({ Self.isIdentifierScalar($0) || $0 == "." || $0 == "-" })
            else {
                report(
                    .invalidName, offset: member.keyOffset, path: path,
                    "message ids use letters, digits, '_', '.' and '-' (like home.greeting)")
                continue
            }
            table.keyOffsets[member.key] = member.keyOffset
            table.keys.append(member.key)
            if let message = readMessage(member.value, at: path, locale: locale) { table.messages[member.key] = message }
        }
        return table
    }

    private mutating func readMessage(_ node: JSONNode, at path: JSONPath, locale: String) -> LocalizedMessage? {
        func pieces(_ node: JSONNode, at path: JSONPath) -> [LocalizedMessage.Piece]? {
            guard let text = node.stringValue else {
                report(
                    .wrongType, at: node, path: path,
                    "a message is text (or plural forms by category, like {one: \"{count} item\", other: \"{count} items\"}), found \(node.typeName)"
                )
                return nil
            }
            switch LocalizedMessage.pieces(of: text) {
            case .success(let pieces): return pieces
            case .failure(let error):
                report(.invalidText, at: node, path: path, "\"\(text)\": \(error.message)")
                return nil
            }
        }
        guard let members = node.members else {
            return pieces(node, at: path).map { LocalizedMessage(forms: [.other: $0], isPlural: false) }
        }
        let rules = LanguageRules(tag: locale)
        var forms: [PluralCategory: [LocalizedMessage.Piece]] = [:]
        var valid = true
        for member in members {
            guard let category = PluralCategory(rawValue: member.key), rules.categories.contains(category) else {
                report(
                    .invalidText, offset: member.keyOffset, path: path.appending(member.key),
                    "\"\(member.key)\" is not a plural category of \(locale); its categories are \(rules.categories.map(\.rawValue).joined(separator: ", "))"
                )
                valid = false
                continue
            }
            guard let formPieces = pieces(member.value, at: path.appending(member.key)) else {
                valid = false
                continue
            }
            forms[category] = formPieces
        }
        guard valid else { return nil }
        let missing = rules.categories.filter { forms[$0] == nil }
        if !missing.isEmpty {
            report(
                .invalidText, at: node, path: path,
                "plural forms for \(locale) need \(rules.categories.map(\.rawValue).joined(separator: ", ")); add \(missing.map(\.rawValue).joined(separator: ", "))"
                    + (rules.isKnown ? "" : " (\(rules.language) has no built-in plural rules, so English's are used)")
            )
            return nil
        }
        let message = LocalizedMessage(forms: forms, isPlural: true)
        if !message.placeholders.contains(LocalizedMessage.countPlaceholder), rules.categories != [.other] {
            report(.invalidText, at: node, path: path, "plural forms are chosen by the placeholder {count}; use it in the forms")
            return nil
        }
        return message
    }
}
