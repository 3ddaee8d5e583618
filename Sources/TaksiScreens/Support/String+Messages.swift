extension String {
    /// The string without leading and trailing spaces (only U+0020: tabs and newlines are errors elsewhere).
    var trimmingSpaces: String {
        String(unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed().map(Character.init))
    }

    /// The word after its indefinite article, for messages: `an integer`, `a string`.
    var withArticle: String {
        (["a", "e", "i", "o", "u"].contains(first.map(String.init) ?? "") ? "an " : "a ") + self
    }
}
