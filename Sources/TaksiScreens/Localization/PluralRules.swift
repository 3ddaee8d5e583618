import TaksiSchema

/// A CLDR plural category: which form of a message a count takes (`1 restaurant`, `2 restaurants`).
public enum PluralCategory: String, Sendable, Hashable, CaseIterable {
    case zero, one, two, few, many, other
}

/// How a language writes counts and numbers: its CLDR plural rules (cardinal, for the languages
/// listed in docs/localization.md; any other language uses English's) and its decimal separator.
public struct LanguageRules: Sendable, Hashable {
    /// The language subtag, lowercased: `pt` for `pt-BR`.
    public let language: String
    /// The categories the language's messages must give forms for.
    public let categories: [PluralCategory]
    /// Whether CLDR rules for this language are built in (else English's are used).
    public let isKnown: Bool

    public init(tag: String) {
        let language = String(tag.lowercased().prefix { $0 != "-" && $0 != "_" })
        self.language = language
        let known = Self.categoriesByLanguage[language]
        self.categories = known ?? [.one, .other]
        self.isKnown = known != nil
    }

    private static let categoriesByLanguage: [String: [PluralCategory]] = {
        var table: [String: [PluralCategory]] = [:]
        for language in ["en", "de", "nl", "sv", "it", "fi", "et", "ca", "es", "el", "hu", "nb", "no", "tr", "bg", "da", "pt"] {
            table[language] = [.one, .other]
        }
        for language in ["ja", "zh", "ko", "th", "vi", "id", "ms"] { table[language] = [.other] }
        for language in ["ru", "uk", "pl"] { table[language] = [.one, .few, .many, .other] }
        for language in ["cs", "sk"] { table[language] = [.one, .few, .many, .other] }
        table["fr"] = [.one, .many, .other]
        table["he"] = [.one, .two, .other]
        table["ar"] = [.zero, .one, .two, .few, .many, .other]
        return table
    }()

    /// Languages that write a decimal comma (`4,5`); the others write a point.
    private static let decimalComma: Set<String> = [
        "pt", "fr", "de", "es", "it", "ru", "uk", "pl", "cs", "sk", "nl", "da", "fi", "sv", "nb", "no", "tr", "el", "hu", "bg", "ca",
        "et", "id", "vi",
    ]

    /// `4,5` in Portuguese, `4.5` in English: a number as written in JSON with this language's
    /// decimal separator (no grouping, so `1234.5` is `1234,5`).
    public func format(_ number: Double) -> String {
        let text = JSONWriter.string(.number(number))
        return Self.decimalComma.contains(language) ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    /// The category of `number` under this language's rules.
    public func category(for number: Double) -> PluralCategory {
        // CLDR's operands: n the absolute value, i its integer digits, v how many fraction digits are written.
        let n = abs(number)
        guard n.isFinite else { return .other }
        let i = Self.integerDigits(of: n)
        // A whole number has none, however JSON writes it (1e+21); else the digits after the point.
        let v =
            n == n.rounded() ? 0 : JSONWriter.string(.number(n)).split(separator: ".", maxSplits: 1).last?.prefix { $0.isNumber }.count ?? 0
        let i10 = i % 10
        let i100 = i % 100
        switch language {
        case "ja", "zh", "ko", "th", "vi", "id", "ms":
            return .other
        case "pt":
            return (i == 0 || i == 1) ? .one : .other
        case "fr":
            if i == 0 || i == 1 { return .one }
            return i != 0 && i % 1_000_000 == 0 && v == 0 ? .many : .other
        case "es", "el", "hu", "nb", "no", "tr", "bg":
            return n == 1 ? .one : .other
        case "da":
            return n == 1 || (i == 0 && v > 0) ? .one : .other
        case "ru", "uk":
            guard v == 0 else { return .other }
            if i10 == 1, i100 != 11 { return .one }
            if (2...4).contains(i10), !(12...14).contains(i100) { return .few }
            return .many
        case "pl":
            guard v == 0 else { return .other }
            if i == 1 { return .one }
            if (2...4).contains(i10), !(12...14).contains(i100) { return .few }
            return .many
        case "cs", "sk":
            if v != 0 { return .many }
            if i == 1 { return .one }
            return (2...4).contains(i) ? .few : .other
        case "he":
            if i == 1, v == 0 { return .one }
            return i == 2 && v == 0 ? .two : .other
        case "ar":
            guard n == n.rounded() else { return .other }
            let n100 = i % 100
            switch i {
            case 0: return .zero
            case 1: return .one
            case 2: return .two
            default: return (3...10).contains(n100) ? .few : (11...99).contains(n100) ? .many : .other
            }
        default:
            return i == 1 && v == 0 ? .one : .other
        }
    }

    /// CLDR's operand i of a finite `n` of zero or more: its integer digits, exactly below 10^18.
    /// Past that (a count from an upstream's data may be anything, and `Int(_:)` traps past
    /// 2^63), a number as large with the same last six digits, which is all any rule reads of it.
    static func integerDigits(of n: Double) -> Int {
        let whole = n.rounded(.towardZero)
        guard whole >= 1e18 else { return Int(whole) }
        return 1_000_000_000_000_000_000 + Int(whole.truncatingRemainder(dividingBy: 1_000_000))
    }
}
