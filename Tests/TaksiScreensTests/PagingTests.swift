import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiScreens

/// Lists that continue: a source's `pages` declaration as a screen file writes it, checked against
/// what the source answers (PokéAPI's real OpenAPI document, an example file) and the screen's
/// lists, and the next page's request made from an answer.
@Suite("Lists that continue")
struct PagingTests {
    static let pokeapi = repositoryRoot.appendingPathComponent("Tests/Fixtures/openapi/pokeapi.yml").path

    /// One screen with the source `mons` (PokéAPI's offset-paged `GET /api/v2/pokemon/`) whose
    /// `pages` is `pages`, and a collection of its `results`.
    func load(
        pages: String, each: String = #""$each": "mons.results", "as": "mon", "template": {"value": {"$bind": "mon.name"}}"#,
        parameters: String = ""
    )
        -> ScreenSetLoad
    {
        let screen = """
            {"name": "mons", "entry": true,
             "sources": {"mons": {"type": "http", "upstream": "pokeapi", "path": "/api/v2/pokemon/", "query": {"limit": 20}\(parameters),
                                  "pages": \(pages)}},
             "components": [{"name": "collection_component", "identifier": "list",
                             "content": {"component_name": "label_component", "values": {\(each)}}}]}
            """
        return ScreenSetLoader.load(
            files: ["mons.json": Array(screen.utf8)], upstreams: ["pokeapi"], upstreamDocuments: ["pokeapi": Self.pokeapi])
    }

    @Test("a declaration that fits the API and a list loads, and the list is the plan's paged list")
    func valid() throws {
        let load = load(pages: #"{"kind": "offset", "items": "results", "parameter": "offset", "size": 20}"#)
        let screen = try #require(load.screenSet?.screens["mons"]?.all.first, "\(load.diagnostics)")
        #expect(screen.dataPlan.pagedLists == [PagedList(identifier: "list", field: "values", source: "mons")])
        guard case .http(let source)? = screen.dataPlan.sources["mons"] else {
            Issue.record("no http source")
            return
        }
        let expected = HTTPSource.Paging(items: JSONPath(segments: [.key("results")]), next: .offset(parameter: "offset", size: 20))
        #expect(source.pages == expected)
    }

    @Test(
        "each wrong declaration is one error at its place, with the fix",
        arguments: [
            (#"{"kind": "scroll", "items": "results"}"#, "invalid_source", #"is not a kind of paging; use cursor"#),
            (#"{"kind": "offset", "items": "results", "size": 20}"#, "missing_key", #"pages of kind offset need "parameter""#),
            (#"{"kind": "page", "items": "results", "parameter": "page"}"#, "missing_key", #"need "size""#),
            (
                #"{"kind": "link", "items": "results", "parameter": "offset"}"#, "unknown_key",
                "parameter is not read for pages of kind link"
            ),
            (#"{"kind": "cursor", "items": "results", "parameter": "after"}"#, "missing_key", #"need "cursor""#),
            (#"{"kind": "offset", "items": "results", "parameter": "offset", "size": 0}"#, "invalid_source", "size is the number of items"),
            (
                #"{"kind": "offset", "items": "reslts", "parameter": "offset", "size": 20}"#, "unknown_answer_field",
                #"did you mean "results"?"#
            ),
            (#"{"kind": "offset", "items": "count", "parameter": "offset", "size": 20}"#, "answer_type_mismatch", "items is the array"),
            (#"{"kind": "offset", "items": "results", "parameter": "ofset", "size": 20}"#, "unknown_operation", #"did you mean "offset"?"#),
            (
                #"{"kind": "cursor", "items": "results", "cursor": "nxt", "parameter": "offset"}"#, "unknown_answer_field",
                #"did you mean "next"?"#
            ),
            (#"{"kind": "offset", "items": "results", "parameter": "offset", "size": 20, "per": 1}"#, "unknown_key", "allowed keys are"),
        ]
    )
    func wrong(pages: String, code: String, message: String) throws {
        let errors = load(pages: pages).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(errors)")
        let error = try #require(errors.first)
        #expect(error.code.rawValue == code, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.path?.description.hasPrefix("sources.mons.pages") == true, "\(error)")
        #expect(error.location != nil)
    }

    @Test("pages no list shows, a list that shows fewer items than a page holds, and a parameter named page are errors")
    func listsAndParameters() throws {
        let unshown = load(
            pages: #"{"kind": "offset", "items": "results", "parameter": "offset", "size": 20}"#,
            each: #""$each": "mons.results[0].url", "as": "mon", "template": {"value": {"$bind": "mon"}}"#)
        #expect(unshown.diagnostics.contains { $0.message.contains("no list of this screen shows these pages") }, "\(unshown.diagnostics)")
        let short = load(
            pages: #"{"kind": "offset", "items": "results", "parameter": "offset", "size": 20}"#,
            each: #""$each": "mons.results", "as": "mon", "limit": 10, "template": {"value": {"$bind": "mon.name"}}"#)
        let shortError = try #require(short.diagnostics.first { $0.severity == .error })
        #expect(shortError.message.contains("items 11 to 20 of every page would never be shown; raise its limit to 20"), "\(shortError)")
        #expect(shortError.path?.description == "sources.mons.pages.size")
        let clash = load(
            pages: #"{"kind": "offset", "items": "results", "parameter": "offset", "size": 20}"#,
            parameters: #", "parameters": {"page": {"type": "integer", "default": 1}}"#)
        let clashError = try #require(clash.diagnostics.first { $0.severity == .error })
        #expect(clashError.code == .invalidName)
        #expect(clashError.message.contains("?page= carries the token of the next page"), "\(clashError)")
    }

    @Test("the next page's request, from each kind's answer; the last page has none")
    func nextTarget() {
        let items = JSONPath(segments: [.key("items")])
        let full: JSONValue = ["items": [1, 2, 3], "meta": ["next": "c2"]]
        let short: JSONValue = ["items": [1], "meta": ["next": .null]]
        let cursor = HTTPSource.Paging(
            items: items, next: .cursor(at: JSONPath(segments: [.key("meta"), .key("next")]), parameter: "after"))
        #expect(cursor.nextTarget(after: "/r?q=a%20b", answer: full, link: nil) == "/r?q=a%20b&after=c2")
        #expect(cursor.nextTarget(after: "/r?after=c1&q=x", answer: full, link: nil) == "/r?after=c2&q=x")
        #expect(cursor.nextTarget(after: "/r", answer: short, link: nil) == nil)
        #expect(cursor.nextTarget(after: "/r?after=c2", answer: full, link: nil) == nil, "the same cursor again ends the list")
        #expect(
            cursor.nextTarget(after: "/r", answer: ["items": [], "meta": ["next": "a/b&c"]], link: nil) == "/r?after=a%2Fb%26c",
            "a cursor is percent-encoded")
        let page = HTTPSource.Paging(items: items, next: .page(parameter: "page", first: 1, size: 3))
        #expect(page.nextTarget(after: "/r?per=3", answer: full, link: nil) == "/r?per=3&page=2")
        #expect(page.nextTarget(after: "/r?page=2", answer: full, link: nil) == "/r?page=3")
        #expect(page.nextTarget(after: "/r?page=2", answer: short, link: nil) == nil, "a short page is the last")
        let offset = HTTPSource.Paging(items: items, next: .offset(parameter: "offset", size: 3))
        #expect(offset.nextTarget(after: "/r", answer: full, link: nil) == "/r?offset=3")
        #expect(offset.nextTarget(after: "/r?offset=3", answer: full, link: nil) == "/r?offset=6")
        #expect(offset.nextTarget(after: "/r?offset=3", answer: ["items": []], link: nil) == nil)
        let link = HTTPSource.Paging(items: items, next: .link)
        #expect(link.nextTarget(after: "/r", answer: full, link: "/r?page=2") == "/r?page=2")
        #expect(link.nextTarget(after: "/r?page=2", answer: full, link: "/r?page=2") == nil)
        #expect(link.nextTarget(after: "/r", answer: full, link: nil) == nil)
    }
}
