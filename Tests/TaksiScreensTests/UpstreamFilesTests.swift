import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiScreens

/// Sources of `file:` upstreams checked against the files: a path with no file and a folder that
/// does not exist are errors at the source, and bindings must name keys the files have. Each
/// mistake is one error, located, with the fix.
@Suite("Upstream files")
struct UpstreamFilesTests {
    /// A shop API as files: `GET /products` and `GET /products/{id}` for two products.
    static func makeUpstream() throws -> String {
        let directory = Scratch.path("upstream")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("products"), withIntermediateDirectories: true)
        let files = [
            "products.json":
                #"{"products": [{"id": "cups", "name": "Cups", "price": 24}, {"id": "mill", "name": "Mill", "price": 249, "badge": "new"}]}"#,
            "products/cups.json": #"{"product": {"id": "cups", "name": "Cups", "stock": 12}}"#,
            "products/mill.json": #"{"product": {"id": "mill", "name": "Mill", "stock": null}}"#,
            "orders.POST.json": #"{"answers": [{"status": 201, "body": {}}]}"#,
            ".json": "{}",
            "products/p-cups.json": #"{"product": {"id": "cups", "grams": 300}}"#,
        ]
        for (path, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(path)) }
        return directory.path
    }

    /// Loads one screen whose sources and components are given, with `shop` (and `gone`, a folder that does not exist) as file upstreams.
    func load(sources: String, components: String, directories: [String: String]? = nil) throws -> ScreenSetLoad {
        let upstream = try Self.makeUpstream()
        let screen = #"{"name": "shop", "entry": true, "sources": {\#(sources)}, "components": [\#(components)]}"#
        return ScreenSetLoader.load(
            files: ["shop.json": Array(screen.utf8)], upstreams: ["shop", "gone"],
            upstreamDirectories: directories ?? ["shop": upstream, "gone": upstream + "/gone"])
    }

    /// The one error of a load, its code and path checked; fails when there are others.
    func onlyError(of load: ScreenSetLoad, code: Diagnostic.Code, at path: String? = nil) throws -> Diagnostic {
        let errors = load.diagnostics.filter { $0.severity == .error }
        try #require(errors.count == 1, "\(load.diagnostics.report)")
        #expect(errors[0].code == code)
        if let path { #expect(errors[0].path?.description == path) }
        return errors[0]
    }

    static let list = #""shop": {"type": "http", "upstream": "shop", "path": "/products"}"#
    static func label(_ value: String, id: String = "l") -> String {
        #"{"name": "label_component", "identifier": "\#(id)", "content": {"value": \#(value)}}"#
    }
    static func each(_ binding: String) -> String {
        #"{"name": "collection_component", "identifier": "c", "content": {"component_name": "label_component", "values": {"$each": "shop.products", "as": "product", "template": {"value": \#(binding)}}}}"#
    }

    @Test("an action's call to a file: upstream is checked against its files like a source's path: POST /oders is an error naming orders")
    func actionCalls() throws {
        let upstream = try Self.makeUpstream()
        func load(_ path: String, method: String = "POST") -> ScreenSetLoad {
            let screen = """
                name: checkout
                entry: true
                components:
                  - {name: button_component, identifier: buy, content: {title: Buy, action: {identifier: executable, content: {name: buy}}}}
                actions:
                  buy:
                    call: {upstream: shop, method: \(method), path: \(path)}
                    answers: {success: {data: []}}
                """
            return ScreenSetLoader.load(
                files: ["checkout.yaml": Array(screen.utf8)], upstreams: ["shop"], upstreamDirectories: ["shop": upstream])
        }
        #expect(!load("/orders").diagnostics.containsErrors, "\(load("/orders").diagnostics.report)")
        let misspelt = try onlyError(of: load("/oders"), code: .missingFixture, at: "actions.buy.call.path")
        #expect(misspelt.message.contains(#"upstream "shop" answers POST /oders from "#), "\(misspelt.message)")
        #expect(misspelt.message.contains("/oders.POST.json, which does not exist"), "\(misspelt.message)")
        #expect(misspelt.message.contains("(its files answer POST /orders)"), "\(misspelt.message)")
        #expect(misspelt.message.contains(#"did you mean "/orders""#), "\(misspelt.message)")
        // A PUT reads orders.PUT.json, which the folder does not have: its POST file is not a PUT's.
        let otherMethod = try onlyError(of: load("/orders", method: "PUT"), code: .missingFixture, at: "actions.buy.call.path")
        #expect(otherMethod.message.contains("/orders.PUT.json, which does not exist"), "\(otherMethod.message)")
        // A GET call reads the same file a source would.
        #expect(!load("/products", method: "GET").diagnostics.containsErrors)
    }

    @Test("bindings that name what the files have pass: keys of any element, a parameter path's files, templates and $when")
    func correct() throws {
        let one =
            #""one": {"type": "http", "upstream": "shop", "path": "/products/{id}", "parameters": {"id": {"type": "string", "default": "cups"}}}"#
        // A parameter inside a segment: p-{id} reads products/p-cups.json.
        let prefixed =
            #""pre": {"type": "http", "upstream": "shop", "path": "/products/p-{id}", "parameters": {"id": {"type": "string", "default": "cups"}}}"#
        let load = try load(
            sources: Self.list + ", " + one + ", " + prefixed,
            components: [
                Self.each(#"{"$bind": "product.name"}"#),
                Self.label(#"{"$template": "{shop.products[0].badge} {one.product.stock} {pre.product.grams}"}"#, id: "t"),
                Self.label(
                    #"{"$when": [{"if": {"value": "one.product.stock", "above": 0}, "then": "in stock"}], "else": "sold out"}"#, id: "w"),
            ].joined(separator: ", "))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
    }

    @Test(
        "a key no file has is one error at the binding, with the keys there are and a did-you-mean",
        arguments: [
            (
                #"{"$bind": "product.nmae"}"#, true, #""nmae" is not in product as"#,
                #"its keys are badge, id, name, price (did you mean "name"?)"#
            ),
            (
                #"{"$template": "{shop.product[0].name}"}"#, false, #""product" is not in shop as"#,
                #"its keys are products (did you mean "products"?)"#
            ),
        ])
    func unknownKey(binding: String, inLoop: Bool, start: String, keys: String) throws {
        let error = try onlyError(
            of: load(sources: Self.list, components: inLoop ? Self.each(binding) : Self.label(binding)), code: .unknownAnswerField)
        #expect(error.message.hasPrefix(start), "\(error.message)")
        #expect(error.message.contains("products.json has it; " + keys), "\(error.message)")
        #expect(error.location?.line == 1)
    }

    @Test("a path with no file is one error at the path, naming what the files answer; bindings into it are not reported again")
    func missingFile() throws {
        let typo = #""shop": {"type": "http", "upstream": "shop", "path": "/prodcts"}"#
        let error = try onlyError(
            of: load(sources: typo, components: Self.label(#"{"$bind": "shop.anything"}"#)), code: .missingFixture, at: "sources.shop.path")
        #expect(error.message.contains("answers GET /prodcts from "), "\(error.message)")
        #expect(error.message.contains("prodcts.json, which does not exist"))
        #expect(
            error.message.contains("(its files answer /products, /products/cups, /products/mill, /products/p-cups)"),
            "no action's POST file")
        #expect(error.message.hasSuffix(#"(did you mean "/products"?)"#))

        let noneForParameter =
            #""one": {"type": "http", "upstream": "shop", "path": "/orders/{id}", "parameters": {"id": {"type": "string", "default": "1"}}}"#
        let parameter = try self.load(sources: noneForParameter, components: Self.label(#"{"$bind": "one.x"}"#))
        #expect(parameter.diagnostics.filter { $0.severity == .error }.map(\.code) == [.missingFixture], "\(parameter.diagnostics.report)")
    }

    @Test("an upstream folder that does not exist is one error at the upstream")
    func missingFolder() throws {
        let gone = #""shop": {"type": "http", "upstream": "gone", "path": "/products"}"#
        let error = try onlyError(
            of: load(sources: gone, components: Self.label(#"{"$bind": "shop.x"}"#)), code: .missingFixture, at: "sources.shop.upstream")
        #expect(error.message.contains(#"upstream "gone" answers from the files of "#) && error.message.contains("which is not a folder"))
    }

    @Test("a status's answer reads the status's body: its bindings into the answered source are not checked against the files")
    func statusAnswers() throws {
        let answered =
            #""shop": {"type": "http", "upstream": "shop", "path": "/products", "answers": {"404": {"data": [{"identifier": "c", "content": {"values": [{"value": {"$bind": "shop.message", "default": "Closed"}}]}}]}}}"#
        let load = try load(sources: answered, components: Self.each(#"{"$bind": "product.name"}"#))
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        let wrong = try self.load(sources: answered, components: Self.each(#"{"$bind": "product.nmae"}"#))
        #expect(wrong.diagnostics.filter { $0.severity == .error }.map(\.code) == [.unknownAnswerField], "the components' still are")
    }

    @Test("without the upstreams' folders (validate with no configuration, an http upstream) nothing is judged")
    func withoutFolders() throws {
        let load = try load(sources: Self.list, components: Self.each(#"{"$bind": "product.nmae"}"#), directories: [:])
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
    }
}
