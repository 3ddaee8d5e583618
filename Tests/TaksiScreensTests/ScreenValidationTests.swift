import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

/// Each rule of PROTOCOL.md a screen file can break, in its broken form, with the diagnostic it
/// must produce: file, line:column, JSON path, code, and a message that says what to do.
@Suite("Screen validation")
struct ScreenValidationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var title: String
        var components: String
        var sources: String? = nil
        var code: String
        var location: String
        var path: String
        var messagePart: String
        var testDescription: String { title }
    }

    static let cases: [Case] = [
        Case(
            title: "unknown component type", components: #"[{"name": "lable_component", "content": {"value": "x"}}]"#,
            code: "unknown_component", location: "2:25", path: "components[0].name", messagePart: #"did you mean "label_component"?"#
        ),
        Case(
            title: "unknown enum value",
            components: #"[{"name": "label_component", "content": {"value": "x", "kind": "headline"}}]"#,
            code: "unknown_enum_value", location: "2:78", path: "components[0].content.kind",
            messagePart: "use one of title, subtitle, body"
        ),
        Case(
            title: "missing required field", components: #"[{"name": "label_component", "content": {"kind": "title"}}]"#,
            code: "missing_key", location: "2:55", path: "components[0].content.value",
            messagePart: #"required field "value" (string) is missing"#
        ),
        Case(
            title: "null label value", components: #"[{"name": "label_component", "content": {"value": null}}]"#,
            code: "missing_key", location: "2:65", path: "components[0].content.value",
            messagePart: "null, which the client cannot decode"
        ),
        Case(
            title: "mistyped field",
            components: #"[{"name": "text_field_component", "content": {"placeholder": "x", "is_secure": "yes"}}]"#,
            code: "wrong_type", location: "2:94", path: "components[0].content.is_secure",
            messagePart: "expected true or false, found string"
        ),
        Case(
            title: "unknown field", components: #"[{"name": "label_component", "content": {"value": "x", "knid": "title"}}]"#,
            code: "unknown_key", location: "2:70", path: "components[0].content.knid", messagePart: #"did you mean "kind"?"#
        ),
        Case(
            title: "duplicate identifiers",
            components:
                #"[{"name": "label_component", "identifier": "t", "content": {"value": "a"}}, {"name": "label_component", "identifier": "t", "content": {"value": "b"}}]"#,
            code: "duplicate_identifier", location: "2:133", path: "components[1].identifier",
            messagePart: "already used by components[0]"
        ),
        Case(
            title: "an explicit identifier that collides with a generated one",
            components:
                #"[{"name": "spacer_component", "content": {}}, {"name": "spacer_component", "identifier": "component$0", "content": {}}]"#,
            code: "duplicate_identifier", location: "2:104", path: "components[1].identifier", messagePart: "must be unique"
        ),
        Case(
            title: "a binding on a static field",
            components: #"[{"name": "label_component", "content": {"value": "x", "kind": {"$bind": "feed.kind"}}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"kind": "title"}}}"#,
            code: "static_field_bound", location: "3:78", path: "components[0].content.kind",
            messagePart: "the dynamic fields here are value"
        ),
        Case(
            title: "a binding on a button's title",
            components:
                #"[{"name": "button_component", "content": {"title": {"$bind": "feed.t"}, "action": {"identifier": "navigation", "content": {"interface_identifier": "profile"}}}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"t": "x"}}}"#,
            code: "static_field_bound", location: "3:66", path: "components[0].content.title", messagePart: "is static"
        ),
        Case(
            title: "navigation to a screen that does not exist",
            components:
                #"[{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "profil"}}}}]"#,
            code: "broken_navigation", location: "2:147", path: "components[0].content.action.content.interface_identifier",
            messagePart: #"navigation target "profil" is not a screen; name an existing screen (did you mean "profile"?)"#
        ),
        Case(
            title: "a custom action the app does not know",
            components: #"[{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "logout", "content": {}}}}]"#,
            code: "unknown_action", location: "2:97", path: "components[0].content.action.identifier",
            messagePart: "declare it as a custom action"
        ),
        Case(
            title: "a binding to an undeclared source",
            components: #"[{"name": "label_component", "content": {"value": {"$bind": "profle.name"}}}]"#,
            sources: #"{"profile": {"type": "fixture", "value": {"name": "Ada"}}}"#,
            code: "unknown_source", location: "3:75", path: "components[0].content.value.$bind",
            messagePart: #"did you mean "profile"?"#
        ),
        Case(
            title: "a template on a number field",
            components:
                #"[{"name": "collection_component", "content": {"component_name": "label_component", "values": [{"value": "x", "kind": {"$template": "{feed.k}"}}]}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"k": "title"}}}"#,
            code: "invalid_binding", location: "3:132", path: "components[0].content.values[0].kind",
            messagePart: "a $template makes text, but this field is an enum"
        ),
        Case(
            title: "an unknown binding key",
            components: #"[{"name": "label_component", "content": {"value": {"$bnd": "feed.x"}}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"x": "y"}}}"#,
            code: "invalid_binding", location: "3:65", path: "components[0].content.value.$bnd", messagePart: #"did you mean "$bind"?"#
        ),
        Case(
            title: "a fixture path that does not exist",
            components: #"[{"name": "label_component", "identifier": "n", "content": {"value": {"$bind": "profile.nmae"}}}]"#,
            sources: #"{"profile": {"type": "fixture", "value": {"name": "Ada"}}}"#,
            code: "unresolved_data", location: "3:16", path: "components[0]",
            messagePart: #"profile has no key "nmae" (did you mean "name"?)"#
        ),
        Case(
            title: "requires_data written by hand",
            components: #"[{"name": "spacer_component", "requires_data": true, "content": {}}]"#,
            code: "unknown_key", location: "2:62", path: "components[0].requires_data",
            messagePart: "computed from the component's bindings"
        ),
        Case(
            title: "a component without content",
            components: #"[{"name": "spacer_component"}]"#,
            code: "missing_key", location: "2:16", path: "components[0].content", messagePart: #"needs a "content" key"#
        ),
        Case(
            title: "a collection item that would not decode",
            components: #"[{"name": "collection_component", "content": {"component_name": "label_component", "values": [{"value": 1}]}}]"#,
            code: "wrong_type", location: "2:119", path: "components[0].content.values[0].value", messagePart: "expected a string"
        ),
        Case(
            title: "an unknown source type",
            components: "[]", sources: #"{"feed": {"type": "fixtrue", "value": 1}}"#,
            code: "invalid_source", location: "2:30", path: "sources.feed.type", messagePart: #"did you mean "fixture"?"#
        ),
        Case(
            title: "a fixture file that does not exist",
            components: "[]", sources: #"{"feed": {"type": "fixture", "file": "fixtures/nope.json"}}"#,
            code: "invalid_source", location: "2:49", path: "sources.feed.file", messagePart: "does not exist"
        ),
        Case(
            title: "a fixture file outside the screens directory",
            components: "[]", sources: #"{"feed": {"type": "fixture", "file": "../secrets.json"}}"#,
            code: "invalid_source", location: "2:49", path: "sources.feed.file", messagePart: "inside the screens directory"
        ),
        Case(
            title: "a request parameter default of the wrong type",
            components: "[]", sources: #"{"q": {"type": "request", "parameters": {"page": {"type": "integer", "default": "one"}}}}"#,
            code: "wrong_type", location: "2:92", path: "sources.q.parameters.page.default", messagePart: "must be a integer"
        ),
    ]

    @Test("a broken screen gives exactly the diagnostic that says where and how to fix it", arguments: cases)
    func rejects(_ example: Case) throws {
        let result = loadScreen(components: example.components, sources: example.sources)
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(result.screenSet == nil)
        let diagnostic = try #require(errors.first { $0.code.rawValue == example.code }, "got:\n\(result.diagnostics.report)")
        #expect(diagnostic.file == "Screens/home.json")
        #expect(diagnostic.location.map { "\($0)" } == example.location, "\(diagnostic)")
        #expect(diagnostic.path?.description == example.path)
        #expect(diagnostic.message.contains(example.messagePart), "\(diagnostic.message)")
    }

    @Test("every error in a set is reported at once, across files")
    func allAtOnce() {
        let result = load([
            "a.json":
                #"{"name": "a", "components": [{"name": "label_component", "content": {"value": null}}, {"name": "nope", "content": {}}]}"#,
            "b.json": #"{"name": "b", "components": [{"name": "label_component", "content": {"kind": "huge", "value": "x"}}]}"#,
            "c.json": #"{"name": "c", "components": [}"#,
        ])
        #expect(result.screenSet == nil)
        let report = result.diagnostics.report
        #expect(result.diagnostics.filter { $0.severity == .error }.count == 4, "\(report)")
        #expect(report.contains("Screens/a.json:1:79: error: components[0].content.value:"))
        #expect(report.contains("Screens/a.json:1:96: error: components[1].name:"))
        #expect(report.contains("Screens/b.json:1:78: error: components[0].content.kind:"))
        #expect(report.contains("Screens/c.json:1:30: error: unexpected '}'"))
        // c.json may link to a and b: while it does not parse, they are not called unreached.
        #expect(result.summary.hasPrefix("4 errors, 0 warnings"), "\(report)")
    }

    @Test("screen names follow the rules and are unique")
    func names() {
        let invalid = load(["a.json": #"{"name": "feed/data", "components": []}"#])
        #expect(onlyError(invalid)?.message.contains("may not end in the segment \"data\"") == true)
        let spaces = load(["a.json": #"{"name": "my screen", "components": []}"#])
        #expect(onlyError(spaces)?.message.contains("letters, digits") == true)
        let duplicate = load([
            "a.json": #"{"name": "home", "components": []}"#, "b.json": #"{"name": "home", "components": []}"#,
        ])
        #expect(
            onlyError(duplicate)?.description
                == #"Screens/b.json:1:10: error: name: screen "home" is also defined in Screens/a.json; rename one of them or give it another "version" or "alternative""#
        )
        let missing = load(["a.json": #"{"components": []}"#])
        #expect(onlyError(missing)?.message.contains("a screen needs a \"name\"") == true)
        let nested = load(["bikes/stations.json": #"{"name": "bikes/stations", "components": []}"#])
        #expect(nested.screenSet?.names == ["bikes/stations"])
    }

    @Test("files that are not UTF-8, empty or absurd get a clear diagnostic")
    func badFiles() {
        let notUTF8 = ScreenSetLoader.load(files: ["a.json": [0x7B, 0xFF, 0x7D]])
        #expect(onlyError(notUTF8)?.description == "Screens/a.json:1:2: error: the file is not valid UTF-8; save it as UTF-8")
        let empty = load(["a.json": ""])
        #expect(onlyError(empty)?.message.contains("empty") == true)
        let noScreens = load([:])
        #expect(onlyError(noScreens)?.code == .noScreens)
    }

    @Test("a huge file is refused unread, with the limit in the message")
    func hugeFile() throws {
        let directory = Scratch.path("huge")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"name": "home", "entry": true, "components": []}"#.utf8).write(to: directory.appendingPathComponent("home.json"))
        try Data(repeating: UInt8(ascii: " "), count: ScreenSetLoader.maximumFileSize + 1).write(
            to: directory.appendingPathComponent("big.json"))
        let result = ScreenSetLoader.load(directory: directory.path)
        let error = onlyError(result)
        #expect(error?.code == .fileTooLarge)
        #expect(error?.message.contains("more than the limit of 4194304") == true)
    }

    @Test("custom component schemas are checked, with the file and path")
    func customSchemas() {
        let result = load([
            "home.json": #"{"name": "home", "components": []}"#,
            "components/card.json":
                #"{"name": "card", "fields": [{"name": "size", "type": "integr"}, {"name": "go", "type": "action", "dynamic": true}]}"#,
            "components/other.json": #"{"name": "different", "fields": []}"#,
        ])
        let report = result.diagnostics.report
        #expect(
            report.contains(
                #"Screens/components/card.json:1:54: error: fields[0].type: unknown type "integr"; use one of string, number, integer, bool, url, enum, action, object, array (did you mean "integer"?)"#
            ), "\(report)")
        #expect(report.contains("fields[1].dynamic: a field of type action cannot be dynamic"))
        #expect(
            report.contains(
                "Screens/components/other.json:1:10: error: name: the file declares \"different\"; name the file different.json"))
    }

    @Test("unused component types and screens nothing navigates to are warnings; entry screens are not")
    func reachability() {
        let result = load([
            "start.json":
                #"{"name": "start", "entry": true, "components": [{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "next"}}}}]}"#,
            "next.json": #"{"name": "next", "components": []}"#,
            "lost.json": #"{"name": "lost", "components": [{"name": "card", "content": {"title": "x"}}]}"#,
            "components/card.json": #"{"name": "card", "fields": [{"name": "title", "type": "string", "required": true}]}"#,
            "components/unused.json": #"{"name": "unused", "fields": []}"#,
        ])
        #expect(result.screenSet != nil)
        #expect(
            result.diagnostics.map(\.description) == [
                #"Screens/components/unused.json:1:10: warning: name: component "unused" is not used by any screen; use it or remove the file"#,
                #"Screens/lost.json:1:10: warning: name: no other screen navigates to "lost"; add "entry": true if the app opens it directly"#,
            ]
        )
    }

    @Test("a rejected component's bindings do not also make its source \"never used\"")
    func rejectedComponentUsesItsSource() {
        let result = loadScreen(
            components: #"[{"name": "lable_component", "content": {"value": {"$template": "Hi {feed.name}"}}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"name": "x"}}}"#
        )
        #expect(result.diagnostics.map(\.code) == [.unknownComponent], "\(result.diagnostics.report)")
    }

    @Test("a collection of a component type the app does not know is an error at its component_name, literal items or $each")
    func unknownCollectionItemType() {
        let literal = loadScreen(
            components:
                #"[{"name": "collection_component", "identifier": "list", "content": {"component_name": "lable_component", "values": [{"value": "x"}]}}]"#
        )
        #expect(
            literal.diagnostics.map(\.description) == [
                #"Screens/home.json:2:101: error: components[0].content.component_name: component type "lable_component" is not known to the app, so the collection would show no item; use a built-in type (label_component, button_component, text_field_component, spacer_component, collection_component) or declare it in components/ (did you mean "label_component"?)"#
            ], "\(literal.diagnostics.report)")
        // From data: the whole collection was left out of the skeleton, with no diagnostic at all.
        let each = loadScreen(
            components:
                #"[{"name": "collection_component", "identifier": "list", "content": {"component_name": "lable_component", "values": {"$each": "feed.items", "template": {"value": {"$bind": "item"}}}}}]"#,
            sources: #"{"feed": {"type": "fixture", "value": {"items": ["a"]}}}"#
        )
        #expect(each.screenSet == nil)
        #expect(each.diagnostics.map(\.code) == [.unknownComponent], "\(each.diagnostics.report)")
    }

    @Test("a file over the size limit is reported at its first line")
    func tooLarge() throws {
        let folder = Scratch.path("large")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(count: ScreenSetLoader.maximumFileSize + 1).write(to: folder.appendingPathComponent("huge.json"))
        let result = ScreenSetLoader.load(directory: folder.path)
        let error = try #require(result.diagnostics.first { $0.code == .fileTooLarge })
        #expect(error.location == SourceLocation(line: 1, column: 1))
        #expect(error.description.hasPrefix("\(folder.path)/huge.json:1:1: error: the file has 4194305 bytes"))
    }

    @Test("unused sources are warnings and do not stop the set")
    func unusedSourceWarns() {
        let result = loadScreen(components: "[]", sources: #"{"feed": {"type": "fixture", "value": {}}}"#)
        #expect(result.screenSet != nil)
        #expect(result.diagnostics.map(\.severity) == [.warning])
        #expect(result.diagnostics.first?.message.contains("never used") == true)
    }
}
