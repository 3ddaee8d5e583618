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
        #expect(
            NameSuggestion.closest(to: "titel", among: ["tite", "title"]) == "tite",
            "a swap is one edit, as a deletion is; the first of equals")
        #expect(NameSuggestion.closest(to: "Title", among: ["titles", "TITLE"]) == "TITLE", "case is no edit")
    }

    @Test("a suggestion is the candidate a whole edit-distance table finds, with the work bounded by the distance that matters")
    func suggestionsAgainstTheWholeTable() {
        /// Optimal string alignment over the whole table, as the suggestion was first written.
        func distance(_ lhs: String, _ rhs: String) -> Int {
            let (a, b) = (Array(lhs.unicodeScalars), Array(rhs.unicodeScalars))
            if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
            var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in 0...a.count { table[i][0] = i }
            for j in 0...b.count { table[0][j] = j }
            for i in 1...a.count {
                for j in 1...b.count {
                    table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
                }
            }
            return table[a.count][b.count]
        }
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let letters: [Character] = ["a", "b", "c", "é"]
        func word() -> String { String((0..<next(12)).map { _ in letters[next(letters.count)] }) }
        for _ in 0..<3_000 {
            let name = word()
            let candidates = (0..<4).map { _ in word() }
            let limit = max(1, name.count / 3)
            var expected: (String, Int)?
            for candidate in candidates where candidate != name {
                let found = distance(name, candidate)
                if found <= limit, found < (expected?.1 ?? .max) { expected = (candidate, found) }
            }
            #expect(NameSuggestion.closest(to: name, among: candidates) == expected?.0, "\(name) among \(candidates)")
        }
    }
}
