import Foundation
import TaksiSchema
import Testing

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test("keys are sorted and there is no whitespace")
    func sortedCompact() {
        let value: JSONValue = ["b": 1, "a": [true, nil, "x"], "c": ["z": 1, "y": 2]]
        #expect(JSONWriter.string(value) == #"{"a":[true,null,"x"],"b":1,"c":{"y":2,"z":1}}"#)
    }

    @Test("integral numbers have no fraction, others keep theirs")
    func numbers() {
        #expect(JSONWriter.string([4, 4.5, -0.25, 1e21, 12345678901]) == "[4,4.5,-0.25,1e+21,12345678901]")
    }

    @Test("strings are escaped as JSON requires and slashes are left alone")
    func escaping() {
        let text = "quote \" backslash \\ line\nbreak tab\t bell\u{07} url https://a/b é 🍜"
        let written = JSONWriter.string(.string(text))
        #expect(written == #""quote \" backslash \\ line\nbreak tab\t bell\u0007 url https://a/b é 🍜""#)
        let decoded = try? JSONDecoder().decode(String.self, from: Data(written.utf8))
        #expect(decoded == text)
    }

    @Test("pretty output is indented and ends with a newline")
    func pretty() {
        #expect(JSONWriter.string(["a": [1, 2], "b": [:]], pretty: true) == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}\n")
    }

    @Test("the same value always gives the same bytes, and Foundation reads them back equal")
    func roundTrip() throws {
        let value: JSONValue = ["components": [["name": "label_component", "content": ["value": "Hi", "kind": "title"]]]]
        let bytes = JSONWriter.bytes(value)
        #expect(bytes == JSONWriter.bytes(value))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == value)
    }
}
