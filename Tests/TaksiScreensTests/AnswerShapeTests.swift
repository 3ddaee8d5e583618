import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiScreens

/// Bindings checked against what a source answers as the upstream's own OpenAPI document has it
/// (real, published documents: the Swagger Petstore's, OpenAPI 3.0, and PokéAPI's, 3.1; see
/// Tests/Fixtures/openapi/README.md), or as the source's declared schema or example has it.
@Suite("Answer shapes")
struct AnswerShapeTests {
    static let petstore = repositoryRoot.appendingPathComponent("Tests/Fixtures/openapi/petstore.yaml").path
    static let pokeapi = repositoryRoot.appendingPathComponent("Tests/Fixtures/openapi/pokeapi.yml").path

    /// A card with a required string, an optional string, a required number, an optional URL and a list of strings.
    static let card = #"""
        {"name": "pet_card", "fields": [
          {"name": "title", "type": "string", "required": true, "dynamic": true},
          {"name": "subtitle", "type": "string", "required": false, "dynamic": true},
          {"name": "weight", "type": "number", "required": true, "dynamic": true},
          {"name": "tags", "type": "array", "items": {"type": "string"}, "required": false, "dynamic": true}
        ]}
        """#

    /// Loads one screen of `sources` and `components`, with `petstore` and `pokeapi` configured
    /// with their OpenAPI documents, and `extra` files beside it.
    func load(sources: String, components: String, extra: [String: String] = [:]) -> ScreenSetLoad {
        let screen = #"{"name": "pets", "entry": true, "sources": {\#(sources)}, "components": [\#(components)]}"#
        var files = ["pets.json": Array(screen.utf8), "components/pet_card.json": Array(Self.card.utf8)]
        for (path, text) in extra { files[path] = Array(text.utf8) }
        return ScreenSetLoader.load(
            files: files, upstreams: ["petstore", "pokeapi"], upstreamDocuments: ["petstore": Self.petstore, "pokeapi": Self.pokeapi])
    }

    static let pet =
        #""pet": {"type": "http", "upstream": "petstore", "path": "/pet/{id}", "parameters": {"id": {"type": "integer", "default": 1}}}"#
    static let pokemon =
        #""mon": {"type": "http", "upstream": "pokeapi", "path": "/api/v2/pokemon/{name}/", "parameters": {"name": {"type": "string", "default": "ditto"}}}"#
    static func card(_ content: String) -> String { #"{"name": "pet_card", "identifier": "c", "content": {\#(content)}}"# }

    func errors(_ load: ScreenSetLoad) -> [Diagnostic] { load.diagnostics.filter { $0.severity == .error } }

    /// An OpenAPI document whose `GET /x` answers `#/components/schemas/<first>`, with `schemas`, written to a file.
    static func document(first: String, schemas: [String: JSONValue]) throws -> String {
        let document: JSONValue = [
            "openapi": "3.0.3", "info": ["title": "hostile", "version": "1"],
            "paths": [
                "/x": [
                    "get": [
                        "responses": [
                            "200": [
                                "description": "ok",
                                "content": ["application/json": ["schema": ["$ref": .string("#/components/schemas/\(first)")]]],
                            ]
                        ]
                    ]
                ]
            ],
            "components": ["schemas": .object(schemas)],
        ]
        let url = Scratch.path("openapi").appendingPathExtension("json")
        try Data(JSONWriter.bytes(document)).write(to: url)
        return url.path
    }

    static let named: JSONValue = ["type": "object", "properties": ["name": ["type": "string"]], "required": ["name"]]

    @Test(
        "a hostile OpenAPI document is read in bounded work: a $ref cycle and a chain past 64 $refs are refused with where; a fan-out of allOf and oneOf is read once per $ref"
    )
    func hostileDocuments() throws {
        func reference(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
        // 20,000 $refs in a row (memory grew with the square of the chain: 1 GB at 8,000).
        var chain: [String: JSONValue] = ["s20000": Self.named]
        for index in 0..<20_000 { chain["s\(index)"] = reference("s\(index + 1)") }
        guard case .failure(let long) = OpenAPIDocument.read(path: try Self.document(first: "s0", schemas: chain)) else {
            Issue.record("a chain of 20,000 $refs is refused")
            return
        }
        #expect(long.message.contains("a chain of more than 64 $refs"), "\(long.message)")
        #expect(long.location != nil)

        // A cycle of $refs alone: no schema at all (it passed as valid).
        let cycle = try Self.document(first: "a", schemas: ["a": reference("b"), "b": reference("a")])
        guard case .failure(let loop) = OpenAPIDocument.read(path: cycle) else {
            Issue.record("a $ref cycle is refused")
            return
        }
        let cycles = ["a -> #/components/schemas/b -> #/components/schemas/a", "b -> #/components/schemas/a -> #/components/schemas/b"]
        #expect(cycles.contains { loop.message.contains("a $ref cycle: #/components/schemas/" + $0) }, "\(loop.message)")

        // Twenty levels, each naming the next twice in allOf and twice in oneOf (4^20 reads, read
        // as each $ref once), and a recursive tree: both read, and a binding is checked through them.
        var fan: [String: JSONValue] = ["l20": Self.named]
        for level in 0..<20 {
            fan["l\(level)"] = [
                "allOf": [reference("l\(level + 1)"), reference("l\(level + 1)")],
                "oneOf": [reference("l\(level + 1)"), reference("l\(level + 1)")],
            ]
        }
        fan["tree"] = [
            "type": "object", "properties": ["name": ["type": "string"], "children": ["type": "array", "items": reference("tree")]],
        ]
        let fanned = try Self.document(first: "l0", schemas: fan)
        guard case .success = OpenAPIDocument.read(path: fanned) else {
            Issue.record("a fan-out and a recursive type are valid")
            return
        }
        let screen =
            #"{"name": "x", "entry": true, "sources": {"x": {"type": "http", "upstream": "hostile", "path": "/x"}}, "components": [{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "x.nme"}}}]}"#
        let load = ScreenSetLoader.load(
            files: ["x.json": Array(screen.utf8)], upstreams: ["hostile"], upstreamDocuments: ["hostile": fanned])
        #expect(
            errors(load).map(\.message).contains { $0.contains("\"nme\"") && $0.contains("did you mean \"name\"") },
            "\(load.diagnostics.report)")
    }

    @Test("a source's JSON Schema file with a $ref cycle is an error at the source's schema, naming the file")
    func schemaFileCycle() {
        let load = load(
            sources:
                #""local": {"type": "http", "upstream": "petstore", "path": "/pet/{id}", "parameters": {"id": {"type": "integer", "default": 1}}, "schema": "schemas/loop.json"}"#,
            components: #"{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "local.name", "default": "-"}}}"#,
            extra: ["schemas/loop.json": ##"{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}"##])
        #expect(
            errors(load).contains { $0.message.contains("schemas/loop.json: a $ref cycle: #/$defs/a -> #/$defs/b -> #/$defs/a") },
            "\(load.diagnostics.report)")
    }

    @Test("bindings that name what the documents' schemas have pass, through $refs, allOf and 3.1's type lists")
    func correct() {
        let load = load(
            sources: Self.pet + ", " + Self.pokemon,
            components: [
                Self.card(
                    #""title": {"$bind": "pet.name"}, "weight": {"$bind": "pet.id"}, "subtitle": {"$bind": "pet.category.name"}, "tags": {"$bind": "pet.photoUrls"}"#
                ),
                #"{"name": "collection_component", "identifier": "abilities", "content": {"component_name": "label_component", "values": {"$each": "mon.abilities", "as": "a", "template": {"value": {"$template": "{a.ability.name} ({a.slot})"}}}}}"#,
                #"{"name": "label_component", "identifier": "sprite", "content": {"value": {"$bind": "mon.sprites.front_default", "default": "none"}}}"#,
                #"{"name": "label_component", "identifier": "species", "content": {"value": {"$bind": "mon.species.name"}}}"#,
            ].joined(separator: ", "))
        #expect(errors(load).isEmpty, "\(load.diagnostics.report)")
    }

    @Test("a key the schema does not have is one error at the binding, with the schema's keys and a did-you-mean")
    func misspelledKey() throws {
        let load = load(sources: Self.pet, components: Self.card(#""title": {"$bind": "pet.nmae"}, "weight": {"$bind": "pet.id"}"#))
        let error = try #require(errors(load).only)
        #expect(error.code == .unknownAnswerField)
        #expect(error.path?.description == "components[0].content.title.$bind")
        #expect(error.message.contains(#""nmae" is not in pet as "#), "\(error.message)")
        #expect(error.message.contains("petstore.yaml (GET /pet/{petId}, 200)"), "\(error.message)")
        #expect(error.message.contains("did you mean \"name\"?"), "\(error.message)")
        #expect(error.message.contains("category, id, name, photoUrls, status, tags"), "\(error.message)")

        // Deeper, in a 3.1 document, through an $each's loop variable.
        let nested = self.load(
            sources: Self.pokemon,
            components:
                #"{"name": "collection_component", "identifier": "a", "content": {"component_name": "label_component", "values": {"$each": "mon.abilities", "as": "a", "template": {"value": {"$bind": "a.abilty.name"}}}}}"#
        )
        let deep = try #require(errors(nested).only)
        #expect(deep.message.hasPrefix(#""abilty" is not in a as "#), "\(deep.message)")
        #expect(deep.message.contains("did you mean \"ability\"?"), "\(deep.message)")
    }

    @Test("a value of another type than its field decodes is one error: a string into a number, an object into text, $each over a string")
    func wrongType() throws {
        let number = load(sources: Self.pet, components: Self.card(#""title": {"$bind": "pet.name"}, "weight": {"$bind": "pet.status"}"#))
        let error = try #require(errors(number).only)
        #expect(error.code == .answerTypeMismatch)
        #expect(error.message.hasPrefix("pet.status is a string as "), "\(error.message)")
        #expect(error.message.contains("but this field is a number"), "\(error.message)")

        let text = load(
            sources: Self.pet, components: Self.card(#""title": {"$template": "{pet.category}"}, "weight": {"$bind": "pet.id"}"#))
        #expect(try #require(errors(text).only).message.hasPrefix("{pet.category} is an object as "))

        let each = load(
            sources: Self.pet,
            components:
                #"{"name": "collection_component", "identifier": "l", "content": {"component_name": "label_component", "values": {"$each": "pet.name", "template": {"value": "x"}}}}"#
        )
        let misfit = try #require(errors(each).only)
        #expect(misfit.message.hasPrefix("pet.name is a string as "), "\(misfit.message)")
        #expect(misfit.message.contains("this field is an array"), "\(misfit.message)")

        // A nullable integer (3.1's type: [integer, "null"]) fits a number field.
        let nullable = load(
            sources: Self.pokemon,
            components: Self.card(#""title": {"$bind": "mon.name"}, "weight": {"$bind": "mon.weight", "default": 0}"#))
        #expect(errors(nullable).isEmpty, "\(nullable.diagnostics.report)")
    }

    @Test("a value the schema does not require, into a field the client requires, is a warning naming the default; with one, none")
    func optionalValue() throws {
        let load = load(sources: Self.pet, components: Self.card(#""title": {"$bind": "pet.status"}, "weight": {"$bind": "pet.id"}"#))
        #expect(errors(load).isEmpty, "\(load.diagnostics.report)")
        let warnings = load.diagnostics.filter { $0.code == .optionalAnswerField }
        #expect(warnings.count == 2, "\(load.diagnostics.report)")
        let status = try #require(warnings.first { $0.path?.description == "components[0].content.title.$bind" })
        #expect(status.severity == .warning)
        #expect(status.message.hasPrefix("pet.status may be missing or null as "), "\(status.message)")
        #expect(status.message.hasSuffix("add a default: {$bind: pet.status, default: ...}"))

        // Defaults given, or an optional field: nothing to say. A nullable value (3.1) is warned of too.
        let quiet = self.load(
            sources: Self.pet + ", " + Self.pokemon,
            components: [
                Self.card(
                    #""title": {"$bind": "pet.status", "default": "unknown"}, "weight": {"$bind": "pet.id", "default": 0}, "subtitle": {"$bind": "pet.status"}"#
                ),
                #"{"name": "label_component", "identifier": "x", "content": {"value": {"$bind": "mon.name"}}}"#,
            ].joined(separator: ", "))
        #expect(quiet.diagnostics.isEmpty, "\(quiet.diagnostics.report)")
        let nullable = self.load(
            sources: Self.pokemon, components: Self.card(#""title": {"$bind": "mon.name"}, "weight": {"$bind": "mon.height"}"#))
        #expect(nullable.diagnostics.map(\.code) == [.optionalAnswerField], "\(nullable.diagnostics.report)")
    }

    @Test("a path the document does not have is one error at the path, with a did-you-mean; so is a path without GET")
    func unknownPath() throws {
        let load = load(
            sources: #""pets": {"type": "http", "upstream": "petstore", "path": "/pets/findByStatus"}"#,
            components: #"{"name": "label_component", "identifier": "x", "content": {"value": {"$bind": "pets.nmae"}}}"#)
        let error = try #require(errors(load).only)
        #expect(error.code == .unknownOperation)
        #expect(error.path?.description == "sources.pets.path")
        #expect(
            error.message.contains("GET /pets/findByStatus is not in the OpenAPI document of upstream \"petstore\""), "\(error.message)")
        #expect(error.message.contains("did you mean \"/pet/findByStatus\"?"), "\(error.message)")

        let post = self.load(
            sources: #""order": {"type": "http", "upstream": "petstore", "path": "/store/order"}"#,
            components: #"{"name": "label_component", "identifier": "x", "content": {"value": {"$bind": "order.id"}}}"#)
        let method = try #require(errors(post).only)
        #expect(method.message.contains("/store/order in the OpenAPI document"), "\(method.message)")
        #expect(method.message.contains("answers POST, not GET"), "\(method.message)")

        // A literal segment matches a template ({petId}); the most literal path wins (findByStatus, not {petId}).
        let literal = self.load(
            sources:
                #""found": {"type": "http", "upstream": "petstore", "path": "/pet/findByStatus"}, "one": {"type": "http", "upstream": "petstore", "path": "/pet/7"}"#,
            components: [
                #"{"name": "collection_component", "identifier": "l", "content": {"component_name": "label_component", "values": {"$each": "found", "as": "p", "template": {"value": {"$bind": "p.name"}}}}}"#,
                #"{"name": "label_component", "identifier": "x", "content": {"value": {"$bind": "one.name"}}}"#,
            ].joined(separator: ", "))
        #expect(errors(literal).isEmpty, "\(literal.diagnostics.report)")
    }

    @Test("a document that cannot be read, or is not OpenAPI 3, fails the load naming the document")
    func unreadableDocument() throws {
        let directory = Scratch.path("openapi")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let swagger = directory.appendingPathComponent("swagger.json")
        try Data(#"{"swagger": "2.0", "paths": {}}"#.utf8).write(to: swagger)
        let anchored = directory.appendingPathComponent("anchored.yaml")
        try Data("openapi: 3.0.0\ncomponents: {schemas: {Name: &name {type: string}}}\npaths: {/a: {get: {responses: {}}}}\n".utf8)
            .write(to: anchored)
        let broken = directory.appendingPathComponent("broken.yaml")
        try Data("openapi: 3.0.0\npaths: [\n".utf8).write(to: broken)
        for (path, expected) in [
            (swagger.path, "convert a Swagger 2.0 document"), (broken.path, "YAML"), (anchored.path, "give its JSON form"),
            (directory.appendingPathComponent("none.json").path, "cannot be read"),
        ] {
            let load = ScreenSetLoader.load(
                files: ["pets.json": Array(#"{"name": "pets", "entry": true, "components": []}"#.utf8)], upstreams: ["petstore"],
                upstreamDocuments: ["petstore": path])
            #expect(load.screenSet == nil)
            let error = try #require(load.diagnostics.first)
            #expect(error.file.hasSuffix((path as NSString).lastPathComponent), "\(error)")
            #expect(error.message.contains(expected), "\(error)")
        }
    }

    @Test("a source's own schema or example file is what its bindings are checked against, before the upstream's files")
    func declaredShapes() throws {
        let schema =
            #"{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}, "price": {"type": "number"}}}}}}"#
        let example = #"{"items": [{"title": "Cups", "price": 24}]}"#
        for (key, file, text) in [("schema", "fixtures/shop.schema.json", schema), ("example", "fixtures/shop.json", example)] {
            let source = #""shop": {"type": "http", "upstream": "shop", "path": "/items", "\#(key)": "\#(file)"}"#
            func loaded(_ binding: String) -> ScreenSetLoad {
                let screen =
                    #"{"name": "shop", "entry": true, "sources": {\#(source)}, "components": [{"name": "collection_component", "identifier": "l", "content": {"component_name": "label_component", "values": {"$each": "shop.items", "as": "i", "template": {"value": \#(binding)}}}}]}"#
                return ScreenSetLoader.load(files: ["shop.json": Array(screen.utf8), file: Array(text.utf8)], upstreams: ["shop"])
            }
            #expect(errors(loaded(#"{"$bind": "i.title"}"#)).isEmpty)
            let error = try #require(errors(loaded(#"{"$bind": "i.titel"}"#)).only)
            #expect(error.message.contains("as \(file) has it"), "\(error.message)")
            #expect(error.message.contains("did you mean \"title\"?"), "\(error.message)")
            #expect(try #require(errors(loaded(#"{"$bind": "i.price"}"#)).only).code == .answerTypeMismatch)
        }
        // A file that is not there is the one error, at the key.
        let missing = ScreenSetLoader.load(
            files: [
                "shop.json": Array(
                    #"{"name": "shop", "entry": true, "sources": {"shop": {"type": "http", "upstream": "shop", "path": "/items", "schema": "fixtures/none.json"}}, "components": [{"name": "label_component", "identifier": "x", "content": {"value": {"$bind": "shop.title"}}}]}"#
                        .utf8)
            ], upstreams: ["shop"])
        #expect(errors(missing).only?.path?.description == "sources.shop.schema", "\(missing.diagnostics.report)")
    }

    @Test("at run time, a required field an $each item's binding found nothing for names the binding and the source, not the schema")
    func runTimeHint() throws {
        // Nothing known of the answer (no files, no document): validate cannot check it.
        let load = ScreenSetLoader.load(
            files: [
                "shop.json": Array(
                    #"{"name": "shop", "entry": true, "sources": {"shop": {"type": "http", "upstream": "shop", "path": "/products"}}, "components": [{"name": "collection_component", "identifier": "list", "content": {"component_name": "label_component", "values": {"$each": "shop.products", "as": "product", "template": {"value": {"$bind": "product.nmae"}}}}}]}"#
                        .utf8)
            ], upstreams: ["shop"])
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        let plan = try #require(set["shop"]?.dataPlan)
        let (_, problems) = plan.build(values: ["shop": ["products": [["name": "Cups"]]]], catalog: set.catalog)
        let loss = try #require(problems.first { $0.isLoss && $0.message.contains("values[0].value") }, "\(problems)")
        #expect(
            loss.message
                == "values[0].value: the required field's binding product.nmae found nothing in what source shop answered; check its path against the answer (validate checks it when the upstream's files, OpenAPI document or an example are known), or give it a default"
        )
        #expect(loss.sources == ["shop"])
    }

    @Test("a status's answer binds into that status's body as the document has it; where it has none, nothing is judged")
    func statusAnswers() throws {
        let directory = Scratch.path("openapi")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let document = directory.appendingPathComponent("shop.json")
        try Data(
            #"""
            {"openapi": "3.0.3", "info": {"title": "Shop", "version": "1"}, "paths": {"/items/{id}": {"get": {"responses": {
              "200": {"description": "An item", "content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}},
              "404": {"$ref": "#/components/responses/NotFound"}}}}},
             "components": {"responses": {"NotFound": {"description": "None", "content": {"application/json; charset=utf-8": {"schema": {"type": "object", "properties": {"message": {"type": "string"}}}}}}}}}
            """#.utf8
        ).write(to: document)
        func loaded(_ binding: String, status: String = "404") -> ScreenSetLoad {
            let screen = #"""
                {"name": "item", "entry": true,
                 "sources": {"shop": {"type": "http", "upstream": "shop", "path": "/items/{id}", "parameters": {"id": {"default": "a"}},
                   "answers": {"\#(status)": {"data": [{"identifier": "name", "content": {"value": \#(binding)}}]}}}},
                 "components": [{"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "shop.name"}}}]}
                """#
            return ScreenSetLoader.load(
                files: ["item.json": Array(screen.utf8)], upstreams: ["shop"], upstreamDocuments: ["shop": document.path])
        }
        #expect(errors(loaded(#"{"$bind": "shop.message", "default": "Gone"}"#)).isEmpty, "\(loaded("").diagnostics.report)")
        let error = try #require(errors(loaded(#"{"$bind": "shop.mesage", "default": "Gone"}"#)).only)
        #expect(error.message.contains("shop.json (GET /items/{id}, 404) has it"), "\(error.message)")
        #expect(error.message.contains(#"did you mean "message"?"#), "\(error.message)")
        // The success answer's keys are not the 404's.
        #expect(try #require(errors(loaded(#"{"$bind": "shop.name", "default": "Gone"}"#)).only).code == .unknownAnswerField)
        // A status the document says nothing of: not judged.
        #expect(errors(loaded(#"{"$bind": "shop.anything", "default": "Gone"}"#, status: "500")).isEmpty)
    }

    @Test("an action's call must be an operation of the document, and its success answer binds into that operation's response")
    func actionCalls() throws {
        func loaded(method: String = "POST", path: String = "/pet", binding: String = "response.name") -> ScreenSetLoad {
            let screen = #"""
                name: pets
                entry: true
                components:
                  - {name: text_field_component, identifier: name, content: {placeholder: Name}}
                  - {name: label_component, identifier: added, content: {value: " "}}
                  - {name: button_component, identifier: add, content: {title: Add, action: {identifier: executable, content: {name: add}}}}
                actions:
                  add:
                    inputs: {name: {type: string, required: true}}
                    call: {upstream: petstore, method: \#(method), path: "\#(path)", body: {name: {$bind: inputs.name}, photoUrls: []}}
                    answers:
                      success: {data: [{identifier: added, content: {value: {$bind: \#(binding), default: Added}}}]}
                """#
            return ScreenSetLoader.load(
                files: ["pets.yaml": Array(screen.utf8)], upstreams: ["petstore"], upstreamDocuments: ["petstore": Self.petstore])
        }
        #expect(errors(loaded()).isEmpty, "\(loaded().diagnostics.report)")
        #expect(errors(loaded(method: "PUT")).isEmpty)
        let field = try #require(errors(loaded(binding: "response.nmae")).only)
        #expect(field.message.contains("petstore.yaml (POST /pet, 200) has it"), "\(field.message)")
        let path = try #require(errors(loaded(path: "/pets")).only)
        #expect(path.code == .unknownOperation)
        #expect(path.message.contains(#"POST /pets is not in the OpenAPI document of upstream "petstore""#), "\(path.message)")
        #expect(path.message.contains(#"did you mean "/pet"?"#), "\(path.message)")
        let method = try #require(errors(loaded(method: "PATCH")).only)
        #expect(method.path?.description == "actions.add.call.method")
        #expect(method.message.contains("/pet in the OpenAPI document of upstream \"petstore\""), "\(method.message)")
        #expect(method.message.contains("answers PUT, POST, not PATCH"), "\(method.message)")
    }

    @Test("shapes from examples merge: a key any example has is known; from schemas, nullable and required are kept")
    func shapes() {
        let examples = AnswerShape(examples: [["a": 1, "b": "x"], ["a": 1.5, "c": nil]])
        #expect(
            KnownAnswer(shape: examples, origin: "o", fix: "").walk(JSONPath(segments: [.key("d")]))
                == .missing(key: "d", before: .root, keys: ["a", "b", "c"]))
        #expect(KnownAnswer(shape: examples, origin: "o", fix: "").walk(JSONPath(segments: [.key("a")])) == .found(.number, optional: nil))
        let document: JSONValue = [
            "components": ["schemas": ["Node": ["type": "object", "properties": ["child": ["$ref": "#/components/schemas/Node"]]]]]
        ]
        // A schema that refers to itself ends, unknown below its first level.
        let node = SchemaShapes(document: document).shape(of: ["$ref": "#/components/schemas/Node"])
        #expect(node == .object(["child": .unknown], required: []))
        let nullable = SchemaShapes(document: [:]).shape(of: ["type": "string", "nullable": true])
        #expect(nullable == .oneOf([.null, .string]) || nullable == .oneOf([.string, .null]))
    }
}

extension Array {
    /// The one element, or nil when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
