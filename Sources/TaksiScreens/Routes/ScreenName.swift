/// The rules for a screen's name: segments separated by `/`, each either literal text (letters,
/// digits, `-` and `_`) or a typed parameter in braces (`{network}`, a letter, digit or `_` name);
/// 1 to 80 characters, no final segment `data` (that path is the screen's data endpoint) and no
/// `actions` just before the last segment (`<name>/actions/<action>` is an action's endpoint).
///
/// `home`, `bikes/networks`, `bikes/stations/{network}`, `repositories/{owner}/{repo}`.
public enum ScreenName {
    public static let maximumLength = 80

    /// Why `name` is not a valid screen name, or nil when it is.
    public static func problem(with name: String) -> String? {
        if name.isEmpty || name.utf8.count > maximumLength {
            return "a screen name has 1 to \(maximumLength) characters"
        }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: \.isEmpty) {
            return "a screen name may not start or end with '/' or hold '//'"
        }
        var parameters: Set<Substring> = []
        for segment in segments {
            if segment.first == "{" {
                guard segment.count > 2, segment.last == "}", isIdentifier(segment.dropFirst().dropLast()) else {
                    return
                        "\"\(segment)\" is not a parameter segment; a parameter fills a whole segment and is a name in braces, like {network}"
                }
                guard parameters.insert(segment.dropFirst().dropLast()).inserted else {
                    return "parameter \(segment) appears twice; give each segment its own name"
                }
            } else if !segment.utf8.allSatisfy(isLiteralByte) {
                return "a screen name may only hold letters, digits, '-', '_' and '/', and parameters in braces like {network}"
            }
        }
        if segments.last == "data" {
            return "a screen name may not end in the segment \"data\": /screens/<name>/data is the data endpoint"
        }
        if segments.count > 1, segments[segments.count - 2] == "actions" {
            return
                "the segment before a screen name's last may not be \"actions\": /screens/<name>/actions/<action> is an action's endpoint"
        }
        return nil
    }

    /// Whether `name` is a valid screen name.
    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }

    /// Whether a byte may appear in a literal segment.
    static func isLiteralByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    private static func isIdentifier(_ text: Substring) -> Bool {
        text.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar)
    }
}
