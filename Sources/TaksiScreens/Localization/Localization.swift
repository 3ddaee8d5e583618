import TaksiSchema

/// A screen set's string tables (`strings/<locale>.yaml`) and how a request's `Accept-Language`
/// picks one. Every locale has every message with the same placeholders (checked at load), so a
/// screen compiles in each locale, and its skeletons are precomputed per locale.
public struct Localization: Sendable {
    /// The locale served when nothing in `Accept-Language` matches.
    public let defaultLocale: String
    /// The pseudo-locale built from the default one (accented, longer text), when enabled.
    public let pseudoLocale: String?
    /// Every locale served, the default first, then by tag.
    public let locales: [String]
    let tables: [String: StringTable]

    /// The tables' files (and the locales file), as diagnostics name them.
    public var files: [String] { tables.values.map(\.file.path) + [settingsFile].compactMap { $0 } }
    var settingsFile: String?

    /// The message ids, in the default table's order.
    var keys: [String] { tables[defaultLocale]?.keys ?? [] }

    /// The locale for an `Accept-Language` value (RFC 9110 with RFC 4647 lookup): ranges in order
    /// of their `q` (ties in the order written; `q=0` excluded); each is tried as written, then
    /// with its last subtag cut off (`pt-BR`, then `pt`), then as a prefix of a served locale
    /// (`pt` finds `pt-BR`); `*` takes the default. No match, or no header: the default locale.
    ///
    /// The work is linear in the header's length: a range that is not a language range (longer
    /// than ``maximumRangeLength``, or with other characters) is skipped before it is looked at,
    /// since trying every truncation of a 15 KB "tag" took a sixth of a second.
    public func negotiate(_ acceptLanguage: String?) -> String {
        for range in Self.languageRanges(acceptLanguage) {
            if range == "*" { return defaultLocale }
            let candidates = Self.truncations(of: range.lowercased())
            for candidate in candidates {
                if let found = locales.first(where: { $0.lowercased() == candidate }) { return found }
            }
            // A language served only with a region: es-MX and es both find es-419.
            for candidate in candidates {
                if let found = locales.first(where: { $0.lowercased().hasPrefix(candidate + "-") && $0 != pseudoLocale }) { return found }
            }
        }
        return defaultLocale
    }

    /// The language ranges of an `Accept-Language` value, most preferred first (by `q`, ties in
    /// the order written; `q=0`, malformed weights and what is not a language range left out).
    public static func languageRanges(_ acceptLanguage: String?) -> [String] {
        guard let acceptLanguage, !acceptLanguage.isEmpty else { return [] }
        var ranges: [(tag: String, q: Double, position: Int)] = []
        for (position, item) in acceptLanguage.split(separator: ",").enumerated() {
            let parts = item.split(separator: ";")
            guard let first = parts.first else { continue }
            let tag = first.trimmingWhitespace
            guard tag == "*" || Self.isLanguageRange(tag) else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingWhitespace.lowercased() == "q" else { continue }
                // A malformed weight makes the range unusable rather than preferred.
                q = Self.qValue(pair[1].trimmingWhitespace) ?? 0
            }
            if q > 0 { ranges.append((tag, q, position)) }
        }
        ranges.sort { $0.q != $1.q ? $0.q > $1.q : $0.position < $1.position }
        return ranges.map(\.tag)
    }

    /// The longest language range read; BCP 47 asks implementations to handle tags of 35
    /// characters, and real ones are shorter (`zh-Hant-TW`, `sr-Latn-RS-u-nu-latn`).
    public static let maximumRangeLength = 64

    /// RFC 4647's language range: subtags of 1 to 8 letters or digits (the first letters only),
    /// separated by `-`, at most ``maximumRangeLength`` characters.
    static func isLanguageRange(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...maximumRangeLength).contains(bytes.count) else { return false }
        var subtag = 0
        var first = true
        for byte in bytes {
            if byte == UInt8(ascii: "-") {
                guard subtag > 0 else { return false }
                subtag = 0
                first = false
                continue
            }
            let isLetter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard isLetter || (isDigit && !first) else { return false }
            subtag += 1
            guard subtag <= 8 else { return false }
        }
        return subtag > 0
    }

    /// RFC 9110's weight: `0`, `1`, or `0.` / `1.` with up to three digits (`1.` only zeros).
    /// Nil for anything else (`0x1`, `1e0`, `.5`, `inf`, which a number parser would take).
    static func qValue(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard let head = bytes.first, head == UInt8(ascii: "0") || head == UInt8(ascii: "1") else { return nil }
        guard bytes.count > 1 else { return head == UInt8(ascii: "1") ? 1 : 0 }
        let digits = bytes.dropFirst(2)
        guard bytes[1] == UInt8(ascii: "."), digits.count <= 3,
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        if head == UInt8(ascii: "1") { return digits.allSatisfy { $0 == UInt8(ascii: "0") } ? 1 : nil }
        return digits.reversed().reduce(0.0) { ($0 + Double($1 - UInt8(ascii: "0"))) / 10 }
    }

    /// `pt-br-u-nu-latn`, `pt-br`, `pt`: a range with its last subtag cut off, one at a time (a
    /// single-letter subtag is cut off with the one after it, as RFC 4647 lookup does).
    static func truncations(of tag: String) -> [String] {
        var candidates: [String] = []
        var candidate = tag[...]
        while !candidate.isEmpty {
            candidates.append(String(candidate))
            guard let dash = candidate.lastIndex(of: "-") else { break }
            candidate = candidate[..<dash]
            if let dash = candidate.lastIndex(of: "-"), candidate.distance(from: dash, to: candidate.endIndex) == 2 {
                candidate = candidate[..<dash]
            }
        }
        return candidates
    }

    /// The message `key` in `locale` (the pseudo-locale's made from the default's). A message a
    /// table lacks or could not read is already an error there; the default's stands in for it.
    func message(_ key: String, in locale: String) -> LocalizedMessage? {
        if locale == pseudoLocale { return tables[defaultLocale]?.messages[key].map(Self.pseudo) }
        return tables[locale]?.messages[key] ?? tables[defaultLocale]?.messages[key]
    }

    /// The rules the locale's messages follow (the pseudo-locale follows the default's).
    func rules(for locale: String) -> LanguageRules {
        LanguageRules(tag: formattingLocale(for: locale))
    }

    /// The locale whose CLDR data writes numbers and dates for `locale`: itself, or the default
    /// locale's for the pseudo-locale.
    public func formattingLocale(for locale: String) -> String {
        locale == pseudoLocale ? defaultLocale : locale
    }

    /// A pseudo-localized message: accented letters and 40% more length, in brackets, so text the
    /// layout truncates or leaves untranslated stands out; placeholders stay as they are.
    static func pseudo(_ message: LocalizedMessage) -> LocalizedMessage {
        var copy = message
        copy.forms = message.forms.mapValues { pieces in
            let length = pieces.reduce(0) { count, piece in if case .text(let text) = piece { count + text.count } else { count + 4 } }
            var accented: [LocalizedMessage.Piece] = pieces.map { piece in
                guard case .text(let text) = piece else { return piece }
                return .text(String(text.map { accents[$0] ?? $0 }))
            }
            accented.insert(.text("["), at: 0)
            accented.append(.text(" " + String(repeating: "·", count: max(1, length * 2 / 5)) + "]"))
            return accented
        }
        return copy
    }

    private static let accents: [Character: Character] = {
        let plain = Array("aceinouyACEINOUYgklrstzGKLRSTZ")
        let marked = Array("åçéîñöûýÅÇÉÎÑÖÛÝĝķļŕšţžĜĶĻŔŠŢŽ")
        return Dictionary(uniqueKeysWithValues: zip(plain, marked))
    }()
}

extension Localization {
    /// Reads the string tables among `files` (paths relative to the screens directory) and checks
    /// them against each other: every message in every locale, with the same placeholders and the
    /// same kind (text or plural). Nil when there are no tables.
    ///
    /// Its findings are returned rather than appended to the caller's list: `parse` reports syntax
    /// errors into that list itself, and an `inout` list would be accessed twice at once (Swift's
    /// exclusivity check stops the process on the first table that does not parse).
    static func read(
        files: [String], parse: (String) -> (SourceFile, JSONNode)?, root: String
    ) -> (localization: Localization?, diagnostics: [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        let folder = StringTable.folder + "/"
        var tables: [String: StringTable] = [:]
        var settings: (file: SourceFile, node: JSONNode)?
        for relative in files where relative.hasPrefix(folder) {
            let name = String(relative.dropFirst(folder.count))
            if StringTable.settingsFiles.contains(name) {
                settings = parse(relative)
                continue
            }
            guard let (file, node) = parse(relative) else { continue }
            let locale = String(name.prefix { $0 != "." })
            var reader = DefinitionReader(file: file)
            if name.contains("/") || !isLanguageTag(locale) {
                reader.report(
                    .invalidName, at: node, path: .root,
                    "a string table is named by its locale's tag, like strings/en.yaml or strings/pt-BR.yaml (a language, then optional subtags, separated by '-')"
                )
            } else if let other = tables.keys.first(where: { $0.lowercased() == locale.lowercased() }) {
                reader.report(
                    .invalidName, at: node, path: .root, "locale \(locale) also has the table \(tables[other]!.file.path); keep one")
            } else if let table = reader.readStringTable(node, locale: locale) {
                tables[locale] = table
            }
            diagnostics += reader.diagnostics
        }
        guard !tables.isEmpty || settings != nil else { return (nil, diagnostics) }

        var defaultLocale: String?
        var pseudoLocale: String?
        if let (file, node) = settings {
            let found = readSettings(node, in: file, tables: tables, root: root)
            (defaultLocale, pseudoLocale) = (found.defaultLocale, found.pseudoLocale)
            diagnostics += found.diagnostics
        } else if tables.count == 1 {
            defaultLocale = tables.keys.first
        } else if tables["en"] != nil {
            defaultLocale = "en"
        } else {
            diagnostics.append(
                Diagnostic(
                    code: .missingKey, file: "\(root)/\(folder)locales.yaml",
                    message:
                        "several string tables and none for en: name the default locale in \(root)/\(folder)locales.yaml, like default: \(tables.keys.sorted().first ?? "pt")"
                )
            )
        }
        guard let defaultLocale, let reference = tables[defaultLocale] else { return (nil, diagnostics) }
        checkAgainst(reference, tables: tables, root: root, diagnostics: &diagnostics)
        let locales = [defaultLocale] + (tables.keys.filter { $0 != defaultLocale } + [pseudoLocale].compactMap { $0 }).sorted()
        return (
            Localization(
                defaultLocale: defaultLocale, pseudoLocale: pseudoLocale, locales: locales, tables: tables,
                settingsFile: settings?.file.path),
            diagnostics
        )
    }

    /// `strings/locales.yaml`: the default locale (one with a table) and an optional pseudo-locale
    /// (a tag no table uses).
    private static func readSettings(
        _ node: JSONNode, in file: SourceFile, tables: [String: StringTable], root: String
    ) -> (defaultLocale: String?, pseudoLocale: String?, diagnostics: [Diagnostic]) {
        let folder = StringTable.folder + "/"
        var defaultLocale: String?
        var pseudoLocale: String?
        var reader = DefinitionReader(file: file)
        if let members = reader.object(
            node, at: .root, what: "the locales file", allowed: ["default", "pseudo"], required: ["default"])
        {
            let member = { (key: String) in members.first { $0.key == key }?.value }
            if let node = member("default"), let tag = reader.string(node, at: JSONPath.root.appending("default"), what: "default") {
                if tables[tag] == nil {
                    reader.report(
                        .missingKey, at: node, path: JSONPath.root.appending("default"),
                        "the default locale \(tag) has no table; add \(root)/\(folder)\(tag).yaml"
                            + (tables.isEmpty ? "" : " or name one of \(tables.keys.sorted().joined(separator: ", "))")
                            + NameSuggestion.hint(for: tag, among: tables.keys)
                    )
                } else {
                    defaultLocale = tag
                }
            }
            if let node = member("pseudo"), let tag = reader.string(node, at: JSONPath.root.appending("pseudo"), what: "pseudo") {
                if !isLanguageTag(tag) || tables[tag] != nil {
                    reader.report(
                        .invalidName, at: node, path: JSONPath.root.appending("pseudo"),
                        "the pseudo-locale is a tag no table uses, like en-XA (the one Android uses)"
                    )
                } else {
                    pseudoLocale = tag
                }
            }
        }
        return (defaultLocale, pseudoLocale, reader.diagnostics)
    }

    /// The unknown keys of a table that get a "did you mean" hint: the first this many.
    static let hintedUnknownKeys = 20

    /// Every table has every message of the default one and no other, with the same placeholders
    /// and kind. A missing message is reported at its line in the default table, the other
    /// problems at the line in the table that differs.
    private static func checkAgainst(_ reference: StringTable, tables: [String: StringTable], root: String, diagnostics: inout [Diagnostic])
    {
        for (locale, table) in tables.sorted(by: { $0.key < $1.key }) where locale != reference.locale {
            var referenceReader = DefinitionReader(file: reference.file)
            var reader = DefinitionReader(file: table.file)
            for key in reference.keys where table.keyOffsets[key] == nil {
                referenceReader.report(
                    .missingText, offset: reference.keyOffsets[key] ?? 0, path: JSONPath.root.appending(key),
                    "message \"\(key)\" is missing from \(table.file.path); every locale has every message, so add it there"
                )
            }
            var unknown = 0
            for key in table.keys {
                let path = JSONPath.root.appending(key)
                let offset = table.keyOffsets[key] ?? 0
                guard reference.keyOffsets[key] != nil else {
                    // A typo is worth a hint; past a few, the tables are not of one screen set (and
                    // each hint reads every key of the default table).
                    unknown += 1
                    reader.report(
                        .missingText, offset: offset, path: path,
                        "message \"\(key)\" is not in \(reference.file.path), the default locale's table; add it there or remove it here"
                            + (unknown <= Self.hintedUnknownKeys ? NameSuggestion.hint(for: key, among: reference.keys) : "")
                    )
                    continue
                }
                guard let message = table.messages[key], let expected = reference.messages[key] else { continue }
                if message.placeholders != expected.placeholders {
                    let written = { (names: Set<String>) in
                        names.isEmpty ? "none" : names.sorted().map { "{\($0)}" }.joined(separator: ", ")
                    }
                    reader.report(
                        .invalidText, offset: offset, path: path,
                        "placeholders \(written(message.placeholders)) here, but \(written(expected.placeholders)) in \(reference.file.path); a message has the same placeholders in every locale"
                    )
                } else if message.isPlural != expected.isPlural, LanguageRules(tag: locale).categories != [.other] {
                    reader.report(
                        .invalidText, offset: offset, path: path,
                        message.isPlural
                            ? "plural forms here, but text in \(reference.file.path); make both plural or both text"
                            : "text here, but plural forms in \(reference.file.path); give this locale's forms (\(LanguageRules(tag: locale).categories.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
            }
            diagnostics += referenceReader.diagnostics + reader.diagnostics
        }
    }

    /// `en`, `pt-BR`, `zh-Hant-TW`: a 2-3 letter language, then subtags of 1-8 letters or digits.
    static func isLanguageTag(_ tag: String) -> Bool {
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = subtags.first, (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return false
        }
        return subtags.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}

extension Substring {
    /// Without the spaces and tabs HTTP allows around list items and parameters.
    fileprivate var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
