import TaksiSchema

// Reading string tables (`strings/<locale>.yaml`).
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
            table.keyOffsets[member.key] = member.keyOffset.byte
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
