import Foundation
import TaksiSchema
import Testing

@testable import TaksiScreens

/// One mistake, one error: what depends on a file that failed is not reported on top of it.
@Suite("One error per mistake")
struct OneErrorPerMistakeTests {
    static let card = #"{"name": "card_component", "fields": [{"name": "title", "type": "string", "required": true, "dynamic": false}]}"#
    static let screen = #"""
        {"name": "home", "entry": true, "components": [
          {"name": "card_component", "identifier": "one", "content": {"title": "A"}},
          {"name": "collection_component", "identifier": "list", "content": {"component_name": "card_component", "values": [{"title": "B"}]}}
        ]}
        """#

    @Test(
        "a component file that fails is its only error: the screens using the type are not told to declare it",
        arguments: [
            (
                "a syntax error", card.replacingOccurrences(of: #""title", "type""#, with: #""title" "type""#),
                "components/card_component.json:1:"
            ),
            ("a bad name", card.replacingOccurrences(of: "card_component", with: "card-component"), "components/card_component.json:1:"),
            (
                "a bad field type", card.replacingOccurrences(of: #""type": "string""#, with: #""type": "text""#),
                "components/card_component.json:1:"
            ),
        ])
    func brokenComponentFile(mistake: String, component: String, place: String) {
        let load = ScreenSetLoader.load(files: [
            "home.json": Array(Self.screen.utf8), "components/card_component.json": Array(component.utf8),
        ])
        let errors = load.diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(mistake): \(load.diagnostics.report)")
        #expect(errors.first?.description.contains(place) == true, "\(mistake): \(load.diagnostics.report)")
        #expect(!load.diagnostics.report.contains("declare it in components/"), "\(mistake)")
    }

    @Test("without the file at all, a use is still the error, with the fix")
    func undeclared() {
        let load = ScreenSetLoader.load(files: ["home.json": Array(Self.screen.utf8)])
        #expect(load.diagnostics.filter { $0.severity == .error }.count == 2, "\(load.diagnostics.report)")
        #expect(load.diagnostics.report.contains("declare it in components/"))
    }

    @Test(
        "a screen file that does not parse is its only error: screens navigating to it are not told it is no screen",
        arguments: [
            ("c", "name: c\ncomponents:\n  - name: label_component\n    content: {value: x}\n   identifier: bad\n", "c.yaml"),
            (
                "products/cups", "name: products/{id}\ncomponents:\n  - name: label_component\n    content: {value: x\n",
                "products/product.yaml"
            ),
            ("c", "{\"name\": \"c\", \"components\": [}", "c.json"),
            ("products/cups", "{name: products/{id}, components: [}\n", "products/product.yaml"),
        ])
    func brokenScreenFile(target: String, text: String, file: String) {
        func navigating(_ name: String) -> [UInt8] {
            Array(
                #"{"name": "\#(name)", "entry": true, "components": [{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "\#(target)"}}}}]}"#
                    .utf8)
        }
        let load = ScreenSetLoader.load(files: ["a.json": navigating("a"), "b.json": navigating("b"), file: Array(text.utf8)])
        let errors = load.diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(load.diagnostics.report)")
        #expect(errors.first?.file.hasSuffix(file) == true, "\(load.diagnostics.report)")
    }

    @Test("a target that opens nothing is still an error when another screen file fails to parse")
    func otherTargetsStillChecked() {
        let a =
            #"{"name": "a", "entry": true, "components": [{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "nowhere"}}}}]}"#
        let load = ScreenSetLoader.load(files: ["a.json": Array(a.utf8), "c.json": Array(#"{"name": "c", "#.utf8)])
        #expect(load.diagnostics.filter { $0.severity == .error }.count == 2, "\(load.diagnostics.report)")
        #expect(load.diagnostics.report.contains(#"navigation target "nowhere" is not a screen"#))
    }

    @Test(
        "a misspelt source in a binding is its only report: no error at a correct patch of that component, no 'never used' for the source it meant"
    )
    func badBinding() throws {
        let screen = """
            name: f
            entry: true
            sources:
              q: {type: request, parameters: {n: {type: string, default: x}}}
            components:
              - name: label_component
                identifier: status
                content: {value: {$bind: qq.n}}
              - name: button_component
                identifier: send
                content: {title: Send, action: {identifier: executable, content: {name: send}}}
            actions:
              send:
                inputs: {email: {type: string}}
                answers:
                  success: {data: [{identifier: status, content: {value: Sent}}]}
            """
        let load = ScreenSetLoader.load(files: ["f.yaml": Array(screen.utf8)])
        #expect(load.diagnostics.count == 1, "\(load.diagnostics.report)")
        #expect(load.diagnostics.first?.message.hasPrefix(#""qq" is not a source of this screen"#) == true, "\(load.diagnostics.report)")
    }

    @Test("a placeholder misspelt in one locale's table is that table's only error: the screen is not told to copy the typo")
    func placeholderTypo() {
        let screen = """
            name: s
            entry: true
            sources:
              q: {type: request, parameters: {n: {type: string, default: x}}}
            components:
              - name: label_component
                identifier: hi
                content: {value: {$text: greeting, with: {name: q.n}}}
            """
        let load = ScreenSetLoader.load(files: [
            "s.yaml": Array(screen.utf8), "strings/en.yaml": Array("greeting: \"Hello, {name}!\"\n".utf8),
            "strings/de.yaml": Array("greeting: \"Hallo, {nmae}!\"\n".utf8),
        ])
        #expect(load.diagnostics.count == 1, "\(load.diagnostics.report)")
        #expect(load.diagnostics.first?.file.hasSuffix("strings/de.yaml") == true, "\(load.diagnostics.report)")
        #expect(!load.diagnostics.report.contains(#"did you mean "nmae""#))
    }

    @Test(
        "an executable named like a typo of the screen's action is an error with the action's name; one the app declares in actions.json passes, one it does not is an error with a did-you-mean"
    )
    func executableTypo() throws {
        func screen(_ name: String) -> [UInt8] {
            Array(
                """
                name: f
                entry: true
                components:
                  - name: text_field_component
                    identifier: email
                    content: {placeholder: Email}
                  - name: button_component
                    identifier: go
                    content: {title: Send, action: {identifier: executable, content: {name: \(name)}}}
                actions:
                  send:
                    inputs: {email: {type: string}}
                    answers: {success: {data: []}}
                """.utf8)
        }
        let typo = ScreenSetLoader.load(files: ["f.yaml": screen("sned")])
        let error = try #require(typo.diagnostics.first, "\(typo.diagnostics.report)")
        #expect(typo.diagnostics.count == 1, "\(typo.diagnostics.report)")
        #expect(error.code == .invalidAction)
        #expect(error.path?.description == "components[1].content.action.content.name")
        #expect(error.message.contains(#"(did you mean "send"?)"#))
        let declared = Array(#"{"executables": [{"name": "refresh"}, {"name": "reset_password"}]}"#.utf8)
        for name in ["send", "refresh", "reset_password"] {
            let load = ScreenSetLoader.load(files: ["f.yaml": screen(name), "actions.json": declared])
            #expect(!load.diagnostics.containsErrors, "\(name): \(load.diagnostics.report)")
        }
        // Not declared: the button would do nothing.
        let undeclared = ScreenSetLoader.load(files: ["f.yaml": screen("refrsh"), "actions.json": declared])
        let missing = try #require(undeclared.diagnostics.first, "\(undeclared.diagnostics.report)")
        #expect(undeclared.diagnostics.count == 1, "\(undeclared.diagnostics.report)")
        #expect(missing.path?.description == "components[1].content.action.content.name")
        #expect(missing.message.contains(#"declare it in actions.json: {"executables": [{"name": "refrsh"}]}"#), "\(missing.message)")
        #expect(missing.message.contains(#"(did you mean "refresh"?)"#), "\(missing.message)")
    }
}

/// The mistakes a team fears most, each one error at its line and column, with the fix: what
/// passed `validate` before and surfaced only as an empty screen answered `200`.
@Suite("The feared mistakes")
struct FearedMistakesTests {
    struct Mistake: Sendable, CustomTestStringConvertible {
        var title: String
        var sources: String
        var components: String
        var code: Diagnostic.Code
        var path: String
        var fix: String
        var testDescription: String { title }
    }

    static let list =
        #"{"name": "collection_component", "identifier": "list", "content": {"component_name": "label_component", "values": {"$each": "shop.products", "as": "product", "template": {"value": {"$bind": "product.name"}}}}}"#
    static let shop = #""shop": {"type": "http", "upstream": "shop", "path": "/products"}"#
    static let pet =
        #""pet": {"type": "http", "upstream": "petstore", "path": "/pet/{id}", "parameters": {"id": {"type": "integer", "default": 1}}}"#

    @Test(
        "each mistake is exactly one error, located, with the fix",
        arguments: [
            Mistake(
                title: "the tutorial's product.nmae", sources: shop,
                components: list.replacingOccurrences(of: "product.name", with: "product.nmae"),
                code: .unknownAnswerField, path: "components[0].content.values.template.value.$bind", fix: #"did you mean "name"?"#),
            Mistake(
                title: "a path with no file", sources: shop.replacingOccurrences(of: "/products", with: "/prodcts"), components: list,
                code: .missingFixture, path: "sources.shop.path", fix: #"did you mean "/products"?"#),
            Mistake(
                title: "a fixture folder that does not exist",
                sources: shop.replacingOccurrences(of: #""upstream": "shop""#, with: #""upstream": "gone""#),
                components: list, code: .missingFixture, path: "sources.shop.upstream", fix: "create it with one JSON file per path"),
            Mistake(
                title: "a key the OpenAPI document does not have", sources: pet,
                components: #"{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "pet.nmae"}}}"#,
                code: .unknownAnswerField, path: "components[0].content.value.$bind", fix: #"did you mean "name"?"#),
            Mistake(
                title: "a value of the wrong type", sources: pet,
                components: #"{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "pet.tags"}}}"#,
                code: .answerTypeMismatch, path: "components[0].content.value.$bind", fix: "bind a value of that type"),
            Mistake(
                title: "a path the OpenAPI document does not have", sources: pet.replacingOccurrences(of: "/pet/{id}", with: "/pets/{id}"),
                components: #"{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "pet.name"}}}"#,
                code: .unknownOperation, path: "sources.pet.path", fix: #"did you mean "/pet/{petId}"?"#),
            Mistake(
                title: "an executable nobody declares", sources: shop,
                components: list
                    + #", {"name": "button_component", "content": {"title": "Go", "action": {"identifier": "executable", "content": {"name": "refrsh"}}}}"#,
                code: .invalidAction, path: "components[1].content.action.content.name", fix: #"did you mean "refresh"?"#),
        ])
    func mistake(_ mistake: Mistake) throws {
        let upstream = try UpstreamFilesTests.makeUpstream()
        let screen = #"{"name": "shop", "entry": true, "sources": {\#(mistake.sources)}, "components": [\#(mistake.components)]}"#
        let load = ScreenSetLoader.load(
            files: ["shop.json": Array(screen.utf8), "actions.json": Array(#"{"executables": [{"name": "refresh"}]}"#.utf8)],
            upstreams: ["shop", "gone", "petstore"], upstreamDirectories: ["shop": upstream, "gone": upstream + "/gone"],
            upstreamDocuments: ["petstore": AnswerShapeTests.petstore])
        let errors = load.diagnostics.filter { $0.severity == .error }
        try #require(errors.count == 1, "\(load.diagnostics.report)")
        #expect(errors[0].code == mistake.code, "\(errors[0])")
        #expect(errors[0].path?.description == mistake.path, "\(errors[0])")
        #expect(errors[0].location != nil)
        #expect(errors[0].message.contains(mistake.fix), "\(errors[0])")
        // Without the mistake, nothing.
        let fixed = #"{"name": "shop", "entry": true, "sources": {\#(Self.shop)}, "components": [\#(Self.list)]}"#
        let clean = ScreenSetLoader.load(
            files: ["shop.json": Array(fixed.utf8)], upstreams: ["shop"], upstreamDirectories: ["shop": upstream])
        #expect(clean.diagnostics.isEmpty, "\(clean.diagnostics.report)")
    }
}
