import Foundation
import TaksiSchema
import Testing

@Suite("Wire types")
struct WireTypesTests {
    @Test("a skeleton round-trips through JSON and its encoding is the schema's jsonValue")
    func skeletonRoundTrip() throws {
        let skeleton = Skeleton(components: [
            Component(name: "label_component", identifier: "title", requiresData: true, content: ["value": "   "]),
            Component(name: "spacer_component", identifier: "component$1", requiresData: false, content: [:]),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let encoded = try encoder.encode(skeleton)
        #expect(String(decoding: encoded, as: UTF8.self) == JSONWriter.string(skeleton.jsonValue))
        #expect(try JSONDecoder().decode(Skeleton.self, from: encoded) == skeleton)
        #expect(skeleton.requiresData)
    }

    @Test("requires_data that is missing or null decodes as false; a non-bool fails")
    func requiresDataDefaults() throws {
        let missing = #"{"name":"spacer_component","identifier":"a","content":{}}"#
        let null = #"{"name":"spacer_component","identifier":"a","requires_data":null,"content":{}}"#
        let string = #"{"name":"spacer_component","identifier":"a","requires_data":"true","content":{}}"#
        #expect(try JSONDecoder().decode(Component.self, from: Data(missing.utf8)).requiresData == false)
        #expect(try JSONDecoder().decode(Component.self, from: Data(null.utf8)).requiresData == false)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Component.self, from: Data(string.utf8)) }
    }

    @Test("a component without content fails to decode")
    func contentRequired() {
        let json = #"{"name":"spacer_component","identifier":"a"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Component.self, from: Data(json.utf8)) }
    }

    @Test("the data envelope round-trips and needs interface_data")
    func interfaceData() throws {
        let data = InterfaceData(entries: [DataEntry(identifier: "title", content: ["value": "Hello"])])
        let encoded = Data(JSONWriter.bytes(data.jsonValue))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"interface_data":[{"content":{"value":"Hello"},"identifier":"title"}]}"#)
        #expect(try JSONDecoder().decode(InterfaceData.self, from: encoded) == data)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(InterfaceData.self, from: Data("{}".utf8)) }
    }

    @Test("actions of the three kinds round-trip")
    func actions() throws {
        let actions: [Action] = [
            .navigation(interfaceIdentifier: "login"), .executable(name: "refresh"),
            .custom(identifier: "login_success", content: ["token": "t"]),
        ]
        for action in actions {
            let encoded = try JSONEncoder().encode(action)
            #expect(try JSONDecoder().decode(Action.self, from: encoded) == action)
        }
        let navigation = try JSONDecoder().decode(
            Action.self, from: Data(#"{"identifier":"navigation","content":{"interface_identifier":"home"}}"#.utf8)
        )
        #expect(navigation == .navigation(interfaceIdentifier: "home"))
    }

    @Test("a JSON path reads as authors write it")
    func paths() {
        let path = JSONPath.root.appending("components").appending(2).appending("content").appending("first name")
        #expect(path.description == #"components[2].content["first name"]"#)
        #expect(JSONPath.root.description == "$")
    }

    @Test("suggestions find typos and ignore unrelated names")
    func suggestions() {
        #expect(NameSuggestion.closest(to: "lable_component", among: ["label_component", "button_component"]) == "label_component")
        #expect(NameSuggestion.closest(to: "profil", among: ["profile", "home"]) == "profile")
        #expect(NameSuggestion.closest(to: "zzz", among: ["profile", "home"]) == nil)
    }
}
