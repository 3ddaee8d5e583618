import Foundation

/// A screen's path as an app gives it, split and made safe to put in a URL.
///
/// An app names a screen by its path (`home`, `products/espresso-cups`), the path a navigation
/// action carries (already percent-encoded: `repositories/a%2Fb`), optionally with the query of
/// its data (`repositories?q=swift nio`). Anything in it that a URL cannot carry is
/// percent-encoded, an escape already there is kept, so no path or query makes a request fail to
/// build.
public struct ScreenPath: Hashable, Sendable, CustomStringConvertible {
    /// The screen's path without its query, percent-encoded: `products/Tea%20pot`.
    public let screen: String
    /// The data request's query, percent-encoded, if any: `q=swift%20nio`.
    public let query: String?

    /// Reads `"name?query"`: `"home"`, `"home?name=Ada"`, `"repositories?q=swift nio"`. Leading
    /// and trailing slashes of the path are dropped (`/home/` is `home`).
    public init(_ path: String) {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts.first.map(String.init) ?? ""
        let trimmed = name.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        screen = Self.encoded(trimmed, allowing: Self.pathAllowed)
        query = parts.count > 1 && !parts[1].isEmpty ? Self.encoded(String(parts[1]), allowing: Self.queryAllowed) : nil
    }

    /// Whether it names no screen (`""`, `"/"`, `"?q=1"`): nothing to ask the server for.
    public var isEmpty: Bool { screen.isEmpty }

    /// `screen?query`, as given to ``init(_:)`` but encoded.
    public var description: String { query.map { "\(screen)?\($0)" } ?? screen }

    /// What a path may carry as it is: RFC 3986's unreserved and sub-delims, `:`, `@` and `/`.
    static let pathAllowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/")
    /// What a query may carry as it is: a path's characters and `?`.
    static let queryAllowed = pathAllowed.union(CharacterSet(charactersIn: "?"))
    /// What one query value may carry as it is: the unreserved characters only (`+`, `&`, `=`
    /// and `%` encoded, which a query would read otherwise).
    static let valueAllowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` with every character outside `allowed` percent-encoded (its UTF-8 bytes), and a `%`
    /// that starts no `%XX` escape too: `swift nio` as `swift%20nio`, `%C3%A9` as it is. With
    /// `keepingEscapes` false, every `%` is encoded: a value sent as it was (a whole link).
    static func encoded(_ text: String, allowing allowed: CharacterSet, keepingEscapes: Bool = true) -> String {
        let scalars = Array(text.unicodeScalars)
        var output = ""
        for (index, scalar) in scalars.enumerated() {
            let escape =
                keepingEscapes && scalar == "%" && index + 2 < scalars.count && scalars[index + 1].properties.isASCIIHexDigit
                && scalars[index + 2].properties.isASCIIHexDigit
            if escape || (scalar != "%" && allowed.contains(scalar)) {
                output.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { output += "%" + String(byte, radix: 16, uppercase: true).leftPadded() }
            }
        }
        return output
    }
}

extension String {
    /// Two hex digits: `"9"` as `"09"`.
    fileprivate func leftPadded() -> String { count < 2 ? "0" + self : self }
}
