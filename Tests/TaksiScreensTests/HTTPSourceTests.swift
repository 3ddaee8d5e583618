import TaksiSchema
import TaksiScreens
import Testing

/// `http` sources: what a definition may say, and the upstream URL a request produces.
@Suite("HTTP sources")
struct HTTPSourceTests {
    func load(_ source: String, upstreams: Set<String>? = ["citybikes"]) -> ScreenSetLoad {
        let screen = """
            {"name": "home", "entry": true, "sources": {"bikes": \(source)},
             "components": [{"name": "label_component", "identifier": "t", "content": {"value": {"$bind": "bikes.name"}}}]}
            """
        return ScreenSetLoader.load(files: ["home.json": Array(screen.utf8)], upstreams: upstreams)
    }

    @Test(
        "a wrong http source gets one diagnostic that says how to fix it",
        arguments: [
            (#"{"type": "http", "upstream": "citybike", "path": "/v2"}"#, "unknown_upstream", #"did you mean "citybikes"?"#),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/n/{network}"}"#, "invalid_source",
                "{network} is not a parameter of this source"
            ),
            (#"{"type": "http", "upstream": "citybikes", "path": "v2"}"#, "invalid_source", #"starts with "/""#),
            (#"{"type": "http", "upstream": "citybikes", "path": "/v2", "headers": ["Host"]}"#, "invalid_source", "never forwarded"),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "headers": ["Bad Header"]}"#, "invalid_source",
                "not a header name"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "timeout": 0}"#, "invalid_source",
                "timeout is a number of seconds"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "max_bytes": 1.5}"#, "invalid_source",
                "max_bytes is a whole number"
            ),
            (#"{"type": "http", "upstream": "citybikes", "path": "/v2/{x"}"#, "invalid_source", "never closed"),
            (#"{"type": "http", "upstream": "citybikes", "path": "/v2", "retries": 3}"#, "unknown_key", "allowed keys are"),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "parameters": {"sort": {"one_of": ["a", "b"], "default": "c"}}}"#,
                "invalid_source", "one of the one_of values"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "parameters": {"version": {"type": "string"}}}"#,
                "invalid_name", "?version= is the app version"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"200": {"data": []}}}"#, "invalid_source",
                "a 2xx is the source's value"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"404": {"ttl": -1}}}"#, "invalid_source",
                "ttl is a number of seconds from 0 to 86400 (default 10)"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"404": {"patch": []}}}"#, "unknown_key",
                "allowed keys are ttl, data, summary"
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"404": {"data": [{"identifier": "x", "content": {"value": "Gone"}}]}}}"#,
                "invalid_patch", #"not a component of this screen"#
            ),
            (
                #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"404": {"data": [{"identifier": "t", "content": {"value": 3}}]}}}"#,
                "wrong_type", "string"
            ),
        ]
    )
    func rejects(source: String, code: String, messagePart: String) throws {
        let result = load(source)
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(result.diagnostics.report)")
        let error = try #require(errors.first)
        #expect(error.code.rawValue == code)
        #expect(error.message.contains(messagePart), "\(error.message)")
        #expect(error.path?.description.hasPrefix("sources.bikes") == true)
    }

    @Test("a request parameter named version is refused at its key, with the fix")
    func reservedVersion() throws {
        let screen = """
            {"name": "home", "entry": true,
             "sources": {"query": {"type": "request", "parameters": {"version": {"type": "string"}}}},
             "components": [{"name": "label_component", "identifier": "t", "content": {"value": {"$bind": "query.version", "default": "-"}}}]}
            """
        let result = ScreenSetLoader.load(files: ["home.json": Array(screen.utf8)])
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(
            errors.map(\.description) == [
                #"Screens/home.json:2:58: error: sources.query.parameters.version: "version" is reserved: ?version= is the app version (when no X-Taksi-Version header is sent); name the parameter otherwise, like app_version or api_version"#
            ], "\(result.diagnostics.report)")
    }

    @Test("without a configuration any upstream name passes validation")
    func unconfigured() {
        #expect(load(#"{"type": "http", "upstream": "anything", "path": "/v2"}"#, upstreams: nil).screenSet != nil)
    }

    @Test("parameters fill the path and query percent-encoded, typed, with defaults; bad values are request errors")
    func target() throws {
        let result = load(
            """
            {"type": "http", "upstream": "citybikes", "path": "/v2/networks/{network}", "query": {"page": "{page}", "fields": "id,name", "sort": "{sort}"},
             "parameters": {"network": {"required": true}, "page": {"type": "integer", "default": 1}, "sort": {"one_of": ["name", "city"], "default": "name"}}}
            """
        )
        let screen = try #require(result.screenSet?["home"])
        let calls = try screen.dataPlan.upstreamCalls(query: ["network": "a/b c&d", "page": "2"])
        #expect(calls.map(\.target) == ["/v2/networks/a%2Fb%20c%26d?page=2&fields=id,name&sort=name"])
        #expect(calls.first?.source == "bikes")
        #expect(throws: DataRequestError.missingParameter(name: "network", kind: "string")) {
            try screen.dataPlan.upstreamCalls(query: [:])
        }
        #expect(throws: DataRequestError.invalidParameter(name: "sort", expected: "one of name, city", found: "size")) {
            try screen.dataPlan.upstreamCalls(query: ["network": "x", "sort": "size"])
        }
        #expect(screen.staticData == nil, "data from an upstream is never precomputed")
    }

    @Test("a source's answers by status: a patch per status, exact before class, at their file:line:col")
    func answers() throws {
        let source = """
            {"type": "http", "upstream": "citybikes", "path": "/v2/{id}", "parameters": {"id": {"required": true}},
             "answers": {"4xx": {"data": [{"identifier": "t", "content": {"value": "Unavailable"}}]},
                         "404": {"ttl": 5, "data": [{"identifier": "t", "content": {"value": {"$bind": "bikes.message", "default": "Gone"}}}]}}}
            """
        let result = load(source)
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let screen = try #require(set["home"])
        let call = try #require(try screen.dataPlan.upstreamCalls(query: ["id": "7"]).first)
        #expect(
            call.definition.answers == [.init(status: .status(404), ttl: .seconds(5)), .init(status: .statusClass(4), ttl: .seconds(10))])
        #expect(call.definition.answer(for: 404)?.ttl == .seconds(5))
        #expect(call.definition.answer(for: 410)?.status == .statusClass(4))
        #expect(call.definition.answer(for: 500) == nil, "an unknown status stays a failure")

        let title = { (plan: DataPlan, values: [String: JSONValue]) in
            plan.build(values: values, catalog: set.catalog).data.entries.first?.content
        }
        #expect(title(screen.dataPlan.answering(["bikes": 404]), ["bikes": JSONValue.null]) == ["value": "Gone"])
        #expect(title(screen.dataPlan.answering(["bikes": 404]), ["bikes": ["message": "Closed"]]) == ["value": "Closed"])
        #expect(title(screen.dataPlan.answering(["bikes": 403]), ["bikes": JSONValue.null]) == ["value": "Unavailable"])

        let broken = load(
            #"{"type": "http", "upstream": "citybikes", "path": "/v2", "answers": {"404": {"data": [{"identifier": "t", "content": {"value": {"$bind": "bike.name"}}}]}}}"#
        )
        #expect(
            broken.diagnostics.filter { $0.severity == .error }.map(\.description).first?.hasPrefix(
                #"Screens/home.json:1:191: error: sources.bikes.answers["404"].data[0].content.value.$bind: "bike" is not a source of this screen"#
            ) == true,
            "\(broken.diagnostics.report)")
    }
}
