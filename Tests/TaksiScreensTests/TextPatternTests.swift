import TaksiScreens
import Testing

/// `pattern` of string parameters: a one-class pattern is tested byte by byte, and must agree with
/// Swift's regex engine on every input; other patterns go to the engine.
@Suite("Text patterns")
struct TextPatternTests {
    static let patterns = [
        "[a-z0-9-]+", "[a-z0-9-]*", "[A-Za-z0-9_.-]{3,39}", "[0-9]{4}", "[0-9]{2,}", "\\d+", "\\w{1,5}", "[-a]+", "[a-]?",
        "[\\d_]+", "[\\-.]+", "[a-c-e]+", "[0-9--5]+", "[^a-z]+", "[a-z]+?", "[a-z]++", "(?i)[a-z]+", "[a-z]{1, 3}", "[a-z]{+2}",
        "[[:alpha:]]+", "[a-z&&[^b]]+", "abc", "[a-z]+x", "\\p{L}+", "[\\n]+", "\\s+", "[a-z]{3,1}X", "[a-z]{0}", "[.]+", "[$]+",
    ]
    static let inputs = [
        "", "a", "abc", "ABC", "a-b", "0", "1234", "12345", "12", "a_b", "x.y", "-", "--", "-.-", "é", "ab1", "d", "5", "é1", "日本",
        "٣٤", "abcdefghijklmnopqrstuvwxyz0123456789", "a b", "a\nb", "$", ".", "aaa", "A_b9", "__", "b",
    ]

    @Test("every pattern, on every input, agrees with Swift's regex engine", arguments: patterns)
    func agrees(pattern: String) throws {
        guard let engine = try? Regex(pattern) else {
            #expect(throws: (any Error).self) { try TextPattern(pattern) }
            return
        }
        let compiled = try TextPattern(pattern)
        for input in Self.inputs {
            #expect(compiled.matches(input) == ((try? engine.wholeMatch(in: input)) != nil), "\(pattern) on \(input.debugDescription)")
        }
    }
}
