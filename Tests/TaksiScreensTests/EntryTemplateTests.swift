import TaksiSchema
import TaksiScreens
import Testing

/// Data entries compiled to byte templates: made only where the bytes are certain at load, and
/// always the bytes (and problems) of building the entry in full.
@Suite("Entry templates")
struct EntryTemplateTests {
    static let card =
        #"{"name": "card", "fields": [{"name": "title", "type": "string", "required": true, "dynamic": true}, {"name": "subtitle", "type": "string", "dynamic": true}, {"name": "count", "type": "integer", "dynamic": true}, {"name": "link", "type": "url", "dynamic": true}, {"name": "tone", "type": "enum", "values": ["calm", "loud"], "dynamic": true}, {"name": "tags", "type": "array", "items": {"type": "string"}, "dynamic": true}]}"#

    static let components = """
        [
          {"name": "label_component", "identifier": "greeting", "content": {"value": {"$template": "Hi, {q.name}! {feed.headline}"}}},
          {"name": "label_component", "identifier": "headline", "content": {"value": {"$bind": "feed.headline"}, "kind": "title"}},
          {"name": "card", "identifier": "card", "content": {"title": {"$template": "{q.name} ({q.count})"}, "subtitle": {"$bind": "q.nick"}, "count": {"$bind": "feed.count"}, "tags": ["a", "b\\"c"]}},
          {"name": "label_component", "identifier": "count_text", "content": {"value": {"$bind": "q.count"}}},
          {"name": "card", "identifier": "linked", "content": {"title": "Link", "link": {"$template": "https://example.com/{q.name}"}}},
          {"name": "card", "identifier": "toned", "content": {"title": "Tone", "tone": {"$bind": "q.tone"}}},
          {"name": "card", "identifier": "counted", "content": {"title": "Count", "count": {"$bind": "q.count"}}},
          {"name": "collection_component", "identifier": "items", "content": {"component_name": "label_component", "values": {"$each": "feed.items", "template": {"value": {"$bind": "item"}}}}},
          {"name": "collection_component", "identifier": "mine", "content": {"component_name": "label_component", "values": [{"value": {"$bind": "q.name"}}]}},
          {"name": "label_component", "identifier": "broken", "content": {"value": {"$bind": "feed.missing", "placeholder": "..."}}},
          {"name": "card", "identifier": "sparse", "content": {"title": {"$bind": "feed.headline"}, "subtitle": {"$bind": "feed.nothing"}}},
          {"name": "collection_component", "identifier": "dropped", "content": {"component_name": "label_component", "values": {"$each": "feed.items", "template": {"value": {"$bind": "item.name"}}}}}
        ]
        """

    static let sources = """
        {"q": {"type": "request", "parameters": {"name": {"default": "friend"}, "count": {"type": "integer", "default": 3}, "nick": {}, "tone": {"default": "calm"}}},
         "feed": {"type": "fixture", "value": {"headline": "Open \\"now\\"", "count": 7, "items": ["one", "two"]}}}
        """

    func plan() throws -> (DataPlan, ComponentCatalog) {
        let result = loadScreen(components: Self.components, sources: Self.sources, extraFiles: ["components/card.json": Self.card])
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        return (try #require(set["home"]?.dataPlan), set.catalog)
    }

    @Test(
        "text fields from the request and constants from fixtures are templates; request values anywhere else, and entries that fail the check, are not"
    )
    func whichEntries() throws {
        let (plan, _) = try plan()
        let templated = plan.entries.filter { $0.template != nil }.map(\.identifier)
        // "dropped" has items the check drops: built every time, so the check reports it.
        #expect(templated == ["greeting", "headline", "card", "count_text", "items", "sparse"])
        // A constant's problems at load (an optional value missing) are kept, to report with each request.
        let templates = Dictionary(uniqueKeysWithValues: plan.entries.compactMap { entry in entry.template.map { (entry.identifier, $0) } })
        #expect(templates["sparse"]?.problems.map(\.field) == ["subtitle"])
        #expect(templates["greeting"]?.problems.isEmpty == true)
    }

    static let queries: [[String: String]] = [
        [:],
        ["name": "Ada"],
        ["name": "Ada", "nick": "the countess", "count": "12"],
        ["name": "\"quoted\" \\ back\nslash\t\u{1}\u{1F}", "nick": ""],
        ["name": "Zoë 🚲 ジ", "count": "-4", "tone": "loud"],
        ["name": "", "tone": "shouting", "nick": "</script>"],
    ]

    @Test("rendered bytes and problems are those of the full build", arguments: queries)
    func sameAsBuild(query: [String: String]) throws {
        let (plan, catalog) = try plan()
        let values = plan.staticValues.merging(try plan.requestValues(query: query)) { $1 }
        let built = plan.build(values: values, catalog: catalog)
        let rendered = plan.render(values: values, catalog: catalog)
        #expect(String(decoding: rendered.body, as: UTF8.self) == JSONWriter.string(built.data.jsonValue))
        #expect(rendered.problems == built.problems)
        // A request's own slots, as the server renders it: the same bytes and problems, a missing
        // value explained as the table of every source explains it.
        let slots = try plan.readRequest(parameter: { query[$0] })
        let fromSlots = plan.render(request: slots, catalog: catalog)
        #expect(fromSlots.body == rendered.body)
        #expect(fromSlots.problems == built.problems)
        #expect(plan.sourceValues(of: slots).merging(plan.staticValues) { $1 } == values)
        // The same for some of the entries only (?only=), templates kept.
        let only = plan.restricted(to: ["card", "toned", "greeting"])
        #expect(only.entries.filter { $0.template != nil }.map(\.identifier) == ["greeting", "card"])
        #expect(
            only.render(values: values, catalog: catalog).body
                == JSONWriter.bytes(only.build(values: values, catalog: catalog).data.jsonValue))
    }

    @Test("a hole is filled with the value's text, escaped; a value that is not there gives no bytes, so the entry is built in full")
    func holes() throws {
        let (plan, _) = try plan()
        let entries = Dictionary(uniqueKeysWithValues: plan.entries.map { ($0.identifier, $0) })
        let values = plan.staticValues.merging(try plan.requestValues(query: ["name": "A\"da", "nick": "N"])) { $1 }

        var output: [UInt8] = []
        #expect(try #require(entries["greeting"]?.template).write(into: &output, values: values))
        #expect(String(decoding: output, as: UTF8.self) == #"{"content":{"value":"Hi, A\"da! Open \"now\""},"identifier":"greeting"}"#)

        output = []
        #expect(try #require(entries["card"]?.template).write(into: &output, values: values))
        #expect(
            String(decoding: output, as: UTF8.self)
                == #"{"content":{"count":7,"subtitle":"N","tags":["a","b\"c"],"title":"A\"da (3)"},"identifier":"card"}"#)

        // No nick, no default: this request's card is built in full (its optional subtitle left out).
        output = Array("[".utf8)
        let withoutNick = plan.staticValues.merging(try plan.requestValues(query: ["name": "Ada"])) { $1 }
        #expect(try #require(entries["card"]?.template).write(into: &output, values: withoutNick) == false)
        #expect(output == Array("[".utf8))
    }

    @Test("a request's slots hold its path and query parameters in their sources' order, and render as the table of every source does")
    func slots() throws {
        let result = load([
            "shop.yaml": """
            name: shops/{id}
            parameters:
              id: {type: integer}
            sources:
              q: {type: request, parameters: {name: {default: friend}, nick: {}, count: {type: integer}}}
              shop: {type: fixture, value: {title: Corner, tags: [a, b]}}
              none: {type: request, parameters: {}}
            components:
              - {name: label_component, identifier: hello, content: {value: {$template: "{shop.title} #{path.id}: {q.name}"}}}
              - {name: label_component, identifier: nick, content: {value: {$bind: q.nick, default: none}}}
              - {name: label_component, identifier: count, content: {value: {$bind: q.count}}}
              - {name: label_component, identifier: tag, content: {value: {$bind: "shop.tags[1]"}}}
            """
        ])
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let plan = try #require(set["shops/{id}"]?.dataPlan)
        let path: [String: JSONValue] = ["id": 7]
        for query: [String: String] in [[:], ["name": "Ada", "nick": "A", "count": "3"], ["nick": "\"x\""]] {
            let slots = try plan.readRequest(parameter: { query[$0] }, path: path)
            // `path.id`, then `q`'s parameters by name.
            #expect(
                slots.values == [
                    7, query["count"].flatMap(Double.init).map(JSONValue.number), query["name"].map(JSONValue.string) ?? "friend",
                    query["nick"].map(JSONValue.string),
                ])
            let values = plan.staticValues.merging(try plan.requestValues(query: query, path: path)) { $1 }
            let built = plan.build(values: values, catalog: set.catalog)
            let rendered = plan.render(request: slots, catalog: set.catalog)
            #expect(String(decoding: rendered.body, as: UTF8.self) == JSONWriter.string(built.data.jsonValue))
            #expect(rendered.problems == built.problems)
        }
        // Every request and path source of the plan has a value, an object even when it declares
        // no parameter or none has a value, as it always had.
        let requestSources = plan.sources.filter { _, source in
            switch source {
            case .request, .path: true
            case .fixture, .http: false
            }
        }
        #expect(try plan.requestValues(query: [:], path: path).mapValues { _ in 0 } == requestSources.mapValues { _ in 0 })
        // A parameter that does not convert is the first error in sorted order, as before.
        #expect(throws: DataRequestError.invalidParameter(name: "count", expected: "integer", found: "x")) {
            try plan.readRequest(parameter: { ["count": "x", "name": "Ada"][$0] }, path: path)
        }
    }
}
