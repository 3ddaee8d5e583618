import Testing

@testable import TaksiServer

@Suite("Request targets")
struct RequestTargetTests {
    @Test("a query's fields: split on & and the first =, percent-decoded, + a space, the first of a name wins")
    func fields() throws {
        #expect(try RequestTarget.fields("a=1&b=x+y") == ["a": "1", "b": "x y"])
        #expect(try RequestTarget.fields("a=1&&b=2&") == ["a": "1", "b": "2"], "empty pairs are skipped")
        #expect(try RequestTarget.fields("a=1&a=2") == ["a": "1"])
        #expect(try RequestTarget.fields("a=b=c") == ["a": "b=c"])
        #expect(try RequestTarget.fields("flag&=x") == ["flag": "", "": "x"])
        #expect(try RequestTarget.fields("name=S%C3%A3o+Paulo&%E2%9C%93=1") == ["name": "São Paulo", "✓": "1"])
        #expect(try RequestTarget.fields("") == [:])
        #expect(throws: (any Error).self) { try RequestTarget.fields("a=%E2%9C") }
        let target = try RequestTarget("http://example.com/screens/home?city=Oslo&page=2")
        #expect(target.path == "/screens/home")
        #expect(target.query == ["city": "Oslo", "page": "2"])
    }
}
