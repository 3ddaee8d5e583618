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

@Suite("Request targets read from heads")
struct RequestTargetHeadTests {
    private func target(_ uri: String) throws -> RequestTarget {
        try RequestTarget(RequestHead(method: .GET, uri: uri, headers: ["Host": "x"]))
    }

    @Test("one parameter is read as the whole query has it, without decoding the others")
    func value() throws {
        let uris = [
            "/screens/home/data?name=Ada", "/screens/home/data?a=1&name=S%C3%A3o+Paulo&name=2", "/screens/home/data?n%61me=x",
            "/screens/home/data?na+me=y&name", "/screens/home/data?&&name=&x", "/screens/home/data", "/screens/home/data?",
            "/screens/home/data?version=2.0&version=3", "/screens/home/data?a=b=c&name=%2B",
        ]
        for uri in uris {
            let target = try target(uri)
            for name in ["name", "na me", "version", "a", "missing"] {
                #expect(target.value(of: name) == target.query[name], "\(uri): \(name)")
            }
        }
        #expect(try target("/screens/home/data?n%61me=x&name=y").value(of: "name") == "x", "an escaped name is its decoded name")
        #expect(try target("/screens/home/data?name").value(of: "name") == "", "a name without = has an empty value")
    }

    @Test("a head's target reads as its text does: path, query, absolute form")
    func sameAsText() throws {
        for uri in ["/screens/home", "/screens/home?city=Oslo&page=2", "http://example.com/screens/home?city=Oslo", "/screens/a%20b?x=%7E"]
        {
            let text = try RequestTarget(uri)
            let head = try target(uri)
            #expect(head.path == text.path, "\(uri)")
            #expect(head.query == text.query, "\(uri)")
        }
    }

    @Test("a malformed escape in the query is refused when the target is read, wherever it lies")
    func malformed() throws {
        for uri in ["/screens/home?a=%E2%9C", "/screens/home?%zz=1", "/screens/home?version=1&b=%4"] {
            #expect(throws: APIError.self, "\(uri)") { try target(uri) }
            #expect(throws: APIError.self, "\(uri)") { try RequestTarget(uri) }
        }
    }
}
