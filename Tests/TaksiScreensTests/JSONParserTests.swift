import TaksiSchema
import Testing

@testable import TaksiScreens

@Suite("JSONParser")
struct JSONParserTests {
    func error(_ text: String) -> (location: String, message: String)? {
        do {
            _ = try JSONParser.parse(Array(text.utf8))
            return nil
        } catch {
            let location = SourceFile(path: "f", bytes: Array(text.utf8)).location(ofOffset: error.offset)
            return ("\(location)", error.message)
        }
    }

    @Test("valid JSON parses to the same value Foundation reads")
    func valid() throws {
        let text = #"{"a": [1, -2.5e3, true, false, null], "b": {"c": "\u00e9\ud83c\udf5c\n"}}"#
        let node = try JSONParser.parse(Array(text.utf8))
        #expect(node.value == ["a": [1, -2500, true, false, nil], "b": ["c": "é🍜\n"]])
    }

    @Test(
        "errors say where and what",
        arguments: [
            ("", "1:1", "the file is empty"),
            ("   \n  ", "2:3", "the file is empty"),
            (#"{"a": [1, 2"#, "1:12", "ends inside an array (truncated?)"),
            (#"{"a": "abc"#, "1:7", "never closed"),
            ("{\"a\": 1,\n  }", "2:3", "remove the trailing comma"),
            ("[1, 2,]", "1:7", "remove the trailing comma"),
            (#"{"a": 1, "a": 2}"#, "1:10", "duplicate key \"a\""),
            ("{\"a\": 01}", "1:7", "may not start with 0"),
            ("{\"a\": tru}", "1:7", "did you mean true?"),
            ("// comment\n{}", "1:1", "JSON has no comments"),
            ("{\"a\": \"line\nbreak\"}", "1:12", "control character"),
            ("{} {}", "1:4", "after the end of the document"),
            (#"{"a": "\x"}"#, "1:8", "unknown escape"),
            (#"["\ud800"]"#, "1:3", "lone UTF-16 surrogate"),
            ("{\"é\": x}", "1:7", "a value was expected"),
        ])
    func errors(_ text: String, _ location: String, _ part: String) {
        let found = error(text)
        #expect(found?.location == location, "\(String(describing: found))")
        #expect(found?.message.contains(part) == true, "\(String(describing: found))")
    }

    @Test("absurd nesting is refused, not a stack overflow")
    func depth() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(error(text)?.message.contains("nesting is deeper than 64 levels") == true)
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(error(fine) == nil)
    }

    @Test("a byte that is not UTF-8 inside a string is reported")
    func invalidUTF8() {
        var bytes = Array(#"{"a": "x"#.utf8)
        bytes += [0xFF, UInt8(ascii: "\""), UInt8(ascii: "}")]
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(bytes) }
    }

    @Test("columns count characters, not bytes")
    func columns() {
        let file = SourceFile(path: "f", bytes: Array("é🍜x\nab".utf8))
        #expect(file.location(ofOffset: 6) == TaksiScreens.SourceLocation(line: 1, column: 3))
        #expect(file.location(ofOffset: 8) == TaksiScreens.SourceLocation(line: 2, column: 1))
    }
}
