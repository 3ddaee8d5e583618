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
