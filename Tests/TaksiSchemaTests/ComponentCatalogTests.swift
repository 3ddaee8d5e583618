import Foundation
import TaksiSchema
import Testing

/// Every rule of PROTOCOL.md a component can break, fed to the checker in its broken form. Where a
/// built-in has a Codable type, the client-side decoding must agree with the checker.
@Suite("ComponentCatalog")
struct ComponentCatalogTests {
    static let restaurant = ComponentSchema(
        name: "restaurant_component",
        fields: [
            FieldSchema(name: "icon_url", type: .url, isRequired: true, isDynamic: true),
            FieldSchema(name: "title", type: .string, isRequired: true, isDynamic: true),
            FieldSchema(name: "rating", type: .number, isRequired: false, isDynamic: true),
            FieldSchema(name: "kind", type: .enumeration(["cheap", "fancy"]), isRequired: true),
        ]
    )
    let catalog = ComponentCatalog(
        customComponents: [restaurant], customActions: ["login_success"],
        navigationTargets: NavigationTargets(["home", "login", "profile"])
    )

    struct Case: CustomTestStringConvertible, Sendable {
        var component: String
        var content: JSONValue
        var code: SchemaViolation.Code
        var path: String
        var messagePart: String
        var testDescription: String { "\(component) \(path): \(code)" }
    }

    static let rejected: [Case] = [
        Case(component: "label_component", content: ["kind": "title"], code: .missingField, path: "value", messagePart: "add it"),
        Case(component: "label_component", content: ["value": nil], code: .nullField, path: "value", messagePart: "cannot decode"),
        Case(
            component: "label_component", content: ["value": 3], code: .wrongType, path: "value",
            messagePart: "expected a string, found number 3"),
        Case(
            component: "label_component", content: ["value": "x", "kind": "headline"], code: .unknownEnumValue, path: "kind",
            messagePart: "use one of title, subtitle, body"),
        Case(
            component: "label_component", content: ["value": "x", "kind": "titel"], code: .unknownEnumValue, path: "kind",
            messagePart: "did you mean \"title\"?"),
        Case(component: "label_component", content: "text", code: .wrongType, path: "$", messagePart: "expected an object of fields"),
        Case(
            component: "button_component", content: ["title": "Go"], code: .missingField, path: "action",
            messagePart: "required field \"action\""),
        Case(
            component: "button_component", content: ["title": "Go", "action": nil], code: .nullField, path: "action", messagePart: "null"),
        Case(
            component: "button_component", content: ["title": "Go", "action": ["identifier": "logout", "content": [:]]],
            code: .unknownAction, path: "action.identifier", messagePart: "not one the app knows"),
        Case(
            component: "button_component", content: ["title": "Go", "action": ["identifier": "navigation", "content": [:]]],
            code: .invalidAction, path: "action.content.interface_identifier", messagePart: "target screen's name"),
        Case(
            component: "button_component",
            content: ["title": "Go", "action": ["identifier": "navigation", "content": ["interface_identifier": "profil"]]],
            code: .brokenNavigation, path: "action.content.interface_identifier", messagePart: "did you mean \"profile\"?"),
        Case(
            component: "button_component", content: ["title": "Go", "action": ["identifier": "executable", "content": [:]]],
            code: .invalidAction, path: "action.content.name", messagePart: "string \"name\""),
        Case(
            component: "button_component", content: ["title": "Go", "action": ["identifier": "login_success"]], code: .invalidAction,
            path: "action.content", messagePart: "needs a \"content\" object"),
        Case(
            component: "button_component",
            content: ["title": "Go", "action": ["identifier": "executable", "content": ["name": "x"]], "kind": "warning"],
            code: .unknownEnumValue, path: "kind", messagePart: "primary, secondary, danger"),
        Case(
            component: "button_component",
            content: ["title": "Go", "action": ["identifier": "executable", "content": ["name": "x"]], "is_enabled": "yes"],
            code: .wrongType, path: "is_enabled", messagePart: "true or false"),
        Case(
            component: "text_field_component", content: ["is_secure": true], code: .missingField, path: "placeholder",
            messagePart: "placeholder"),
        Case(
            component: "text_field_component", content: ["placeholder": "Email", "is_secure": 1], code: .wrongType, path: "is_secure",
            messagePart: "true or false"),
        Case(
            component: "collection_component", content: ["values": []], code: .missingField, path: "component_name",
            messagePart: "component_name"),
        Case(
            component: "collection_component", content: ["component_name": "label_component"], code: .missingField, path: "values",
            messagePart: "values"),
        Case(
            component: "collection_component", content: ["component_name": "label_component", "values": ["value": "x"]], code: .wrongType,
            path: "values", messagePart: "array of component contents"),
        Case(
            component: "collection_component",
            content: ["component_name": "label_component", "values": [["value": "ok"], ["kind": "body"]]], code: .missingField,
            path: "values[1].value", messagePart: "value"),
        Case(
            component: "restaurant_component", content: ["icon_url": "not a url", "title": "A", "kind": "cheap"], code: .invalidURL,
            path: "icon_url", messagePart: "absolute URL"),
        Case(
            component: "restaurant_component", content: ["icon_url": "https://a.b/c.png", "title": "A", "kind": "cheap", "rating": "4.5"],
            code: .wrongType, path: "rating", messagePart: "expected a number"),
        Case(
            component: "restaurant_component", content: ["icon_url": "https://a.b/c.png", "title": "A"], code: .missingField, path: "kind",
            messagePart: "kind"),
        Case(component: "headline_component", content: [:], code: .unknownComponent, path: "$", messagePart: "not known to the app"),
    ]

    @Test("a broken component is rejected with the specific violation", arguments: rejected)
    func rejects(_ example: Case) {
        let result = catalog.check(content: example.content, of: example.component)
        #expect(!result.isValid)
        let violation = result.violations.first { $0.code == example.code }
        #expect(violation != nil, "violations: \(result.violations)")
        #expect(violation?.path.description == example.path)
        #expect(violation?.message.contains(example.messagePart) == true, "message: \(violation?.message ?? "-")")
    }

    static let accepted: [(String, JSONValue)] = [
        ("label_component", ["value": "Hello"]),
        ("label_component", ["value": "Hello", "kind": "subtitle"]),
        ("label_component", ["value": "Hello", "kind": nil]),
        ("button_component", ["title": "Go", "action": ["identifier": "navigation", "content": ["interface_identifier": "home"]]]),
        (
            "button_component",
            ["title": "Go", "kind": "danger", "is_enabled": false, "action": ["identifier": "executable", "content": ["name": "refresh"]]]
        ),
        ("button_component", ["title": "Go", "action": ["identifier": "login_success", "content": ["token": "abc"]]]),
        ("text_field_component", ["placeholder": "Email"]),
        ("text_field_component", ["placeholder": "Password", "is_secure": true]),
        ("spacer_component", [:]),
        ("collection_component", ["component_name": "label_component", "values": [["value": "a"], ["value": "b", "kind": "title"]]]),
        (
            "collection_component",
            ["component_name": "collection_component", "values": [["component_name": "label_component", "values": []]]]
        ),
        ("restaurant_component", ["icon_url": "https://img.example.com/a%20b.png", "title": "A", "kind": "fancy", "rating": 4.5]),
    ]

    @Test("well-formed components pass, and the built-in Codable types decode the same payloads")
    func accepts() throws {
        for (component, content) in Self.accepted {
            let result = catalog.check(content: content, of: component)
            #expect(result.isValid, "\(component) \(content): \(result.violations)")
            #expect(result.value == content)
            #expect(try decodesWithClientTypes(component, content) != false)
        }
    }

    @Test("the client's decoding agrees with the checker on every rejected built-in", arguments: rejected)
    func clientAgrees(_ example: Case) throws {
        // Navigation targets and custom action registration are app knowledge the Codable types do not hold.
        guard ![.brokenNavigation, .unknownAction].contains(example.code) else { return }
        #expect(try decodesWithClientTypes(example.component, example.content) != true)
    }

    /// Decodes with the Codable content types; nil for types without one.
    func decodesWithClientTypes(_ component: String, _ content: JSONValue) throws -> Bool? {
        let data = Data(JSONWriter.bytes(content))
        let decoder = JSONDecoder()
        func attempt<T: Decodable>(_ type: T.Type) -> Bool { (try? decoder.decode(type, from: data)) != nil }
        switch component {
        case "label_component": return attempt(LabelContent.self)
        case "button_component": return attempt(ButtonContent.self)
        case "text_field_component": return attempt(TextFieldContent.self)
        case "spacer_component": return attempt(SpacerContent.self)
        case "collection_component":
            // Items that fail are dropped by the client, so only the envelope decides decoding.
            guard attempt(CollectionContent.self) else { return false }
            return content["values"]?.arrayValue?.allSatisfy { item in
                catalog.check(content: item, of: content["component_name"]?.stringValue ?? "").isValid
            }
        default: return nil
        }
    }

    @Test("data mode converts losslessly and drops collection items the client would drop")
    func dataMode() {
        let label = catalog.check(dataContent: ["value": 4.5], of: "label_component")
        #expect(label.value == ["value": "4.5"])
        #expect(label.violations.isEmpty)

        // A data entry carries only dynamic fields; the item type comes from the skeleton's content.
        let collection = catalog.check(
            dataContent: ["values": [["value": "kept"], ["value": nil], ["value": true]]], of: "collection_component",
            staticContent: ["component_name": "label_component", "values": []]
        )
        #expect(collection.value == ["values": [["value": "kept"], ["value": "true"]]])
        #expect(collection.violations.map(\.path.description) == ["values[1].value"])

        let items = catalog.check(
            ["value": "x"], as: .componentContents(nameField: "component_name"), mode: .data
        )
        #expect(!items.isValid)

        let list = catalog.check(
            [["value": "kept"], ["value": nil], ["value": true]], as: .componentContents(nameField: "component_name"),
            siblings: ["component_name": "label_component"], mode: .data
        )
        #expect(list.value == [["value": "kept"], ["value": "true"]])
        #expect(list.violations.map(\.path.description) == ["[1].value"])

        let optional = catalog.check(
            dataContent: ["icon_url": "https://a.b/c.png", "title": "T", "rating": "high"], of: "restaurant_component"
        )
        #expect(optional.value == ["icon_url": "https://a.b/c.png", "title": "T"])
        #expect(optional.violations.map(\.code) == [.wrongType])

        let missing = catalog.check(dataContent: ["title": "T"], of: "restaurant_component")
        #expect(!missing.isValid)
    }

    @Test("every placeholder decodes as its own type")
    func placeholders() {
        let types: [FieldType] = [
            .string, .number, .integer, .bool, .url, .enumeration(["a", "b"]), .array(items: .string),
            .object(fields: [FieldSchema(name: "n", type: .integer, isRequired: true)]),
        ]
        for type in types {
            let placeholder = type.placeholder()
            #expect(catalog.check(placeholder, as: type).isValid, "\(type): \(placeholder)")
        }
        #expect(FieldType.string.placeholder().stringValue?.allSatisfy { $0 == " " } == true)
        let label = try? JSONDecoder().decode(LabelContent.self, from: Data(JSONWriter.bytes(["value": FieldType.string.placeholder()])))
        #expect(label != nil)
    }
}
