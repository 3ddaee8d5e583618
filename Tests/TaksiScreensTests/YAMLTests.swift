import TaksiSchema
import TaksiScreens
import Testing

@Suite("YAML screens")
struct YAMLTests {
    @Test("a YAML screen compiles to the same screen as its JSON twin")
    func sameAsJSON() throws {
        let yaml = load([
            "home.yaml": """
            # comments are allowed
            name: home
            components:
              - name: label_component   # a label
                identifier: t
                content: {value: "Hi", kind: title}
              - name: text_field_component
                content:
                  placeholder: Email
                  is_secure: false
            """
        ])
        let json = load([
            "home.json":
                #"{"name": "home", "components": [{"name": "label_component", "identifier": "t", "content": {"value": "Hi", "kind": "title"}}, {"name": "text_field_component", "content": {"placeholder": "Email", "is_secure": false}}]}"#
        ])
        let fromYAML = try #require(yaml.screenSet?["home"], "\(yaml.diagnostics.report)")
        let fromJSON = try #require(json.screenSet?["home"])
        #expect(fromYAML.skeleton == fromJSON.skeleton)
    }

    @Test("diagnostics point at the line and column in the YAML file")
    func locations() {
        let result = load([
            "home.yml": """
            name: home
            components:
              - name: label_component
                content:
                  value: Hi
                  kind: headline
              - name: lable_component
                content: {}
            """
        ])
        let report = result.diagnostics.report
        #expect(report.contains(#"Screens/home.yml:6:13: error: components[0].content.kind: "headline" is not a known value"#), "\(report)")
        #expect(
            report.contains(#"Screens/home.yml:7:11: error: components[1].name: component type "lable_component" is not known"#),
            "\(report)")
    }

    @Test("YAML 1.2 scalars: only true/false are Booleans, quoted values are strings")
    func scalars() throws {
        let result = load([
            "home.yaml": """
            name: home
            sources:
              feed:
                type: fixture
                value: {country: NO, answer: yes, flag: true, quoted: "true", count: 42, ratio: 4.5, nothing: ~, version: 1.10}
            components:
              - name: label_component
                identifier: t
                content: {value: {$template: "{feed.country}|{feed.answer}|{feed.flag}|{feed.quoted}|{feed.count}|{feed.ratio}|{feed.version}"}}
            """
        ])
        let data = try #require(result.screenSet?["home"]?.staticData, "\(result.diagnostics.report)")
        // NO and yes stay text; 1.10 is a number (quote it to keep it text, as for "true").
        #expect(data.entries.first?.content == ["value": "NO|yes|true|true|42|4.5|1.1"])
    }

    @Test("a control character in YAML is reported at its line and column, on one line")
    func controlCharacter() throws {
        let result = load(["home.yaml": "name: home\ncomponents:\n  - name: label_component\n    content: {value: \"a\u{07}b\"}\n"])
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.location == SourceLocation(line: 4, column: 24), "\(result.diagnostics.report)")
        #expect(!error.description.contains("\n"), "one line: \(error.description)")
        #expect(error.message.contains("U+0007"))
    }

    @Test(
        "broken or hostile YAML gets a clear diagnostic",
        arguments: [
            ("name: home\ncomponents: [\n", "YAML:"),
            ("name: home\nname: again\ncomponents: []\n", "duplicate key"),
            (
                "base: &b {value: x}\nname: home\ncomponents: [{name: label_component, content: *b}]\n",
                "anchors and aliases (&name, *name) are not supported"
            ),
            (String(repeating: "[", count: 10_000), "nesting is deeper than 64 levels"),
            ("", "empty"),
            ("a: &a [x, x]\nb: &b [*a, *a]\nname: home\ncomponents: []\n", "anchors and aliases"),
        ])
    func broken(_ text: String, _ part: String) {
        let result = load(["home.yaml": text])
        let error = result.diagnostics.first { $0.severity == .error }
        #expect(error?.file == "Screens/home.yaml")
        #expect(error?.message.contains(part) == true, "\(result.diagnostics.report)")
    }

    @Test(
        "libyaml's commonest syntax errors come with what to do, at the line and column, and where the construct began",
        arguments: [
            (
                "name: home\ncomponents:\n  - name: label_component\n    content: {value: x\n  - name: spacer_component\n",
                SourceLocation(line: 5, column: 9), "a { ... } (opened on line 4) is not closed before this point: close it with '}'"
            ),
            (
                "name: home\ncomponents: [{name: spacer_component, content: {}}\n",
                SourceLocation(line: 3, column: 1), "a [ ... ] (opened on line 2) is not closed before this point: close it with ']'"
            ),
            (
                "name: home\ncomponents:\n  - name: label_component\n     content: {value: x}\n",
                SourceLocation(line: 4, column: 13), "indent this line like the keys beside it, or quote a value that holds ': '"
            ),
            (
                "name: home\ncomponents:\n\t- name: label_component\n", SourceLocation(line: 3, column: 1),
                "YAML indents with spaces, never tabs"
            ),
            ("name: home\ncomponents: []\ndescription: \"open\n", SourceLocation(line: 4, column: 1), "a quoted string, '[' or '{'"),
        ] as [(String, TaksiScreens.SourceLocation, String)])
    func syntaxFixes(_ text: String, _ location: TaksiScreens.SourceLocation, _ fix: String) throws {
        let result = load(["home.yaml": text])
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.location == location, "\(result.diagnostics.report)")
        #expect(error.message.contains(fix), "\(result.diagnostics.report)")
    }

    @Test("a screen file that does not parse hides nothing behind 'not used' warnings: what it would use is not called unused")
    func noUnusedWarningsBesideASyntaxError() {
        let result = load([
            "components/card.json": #"{"name": "card", "fields": [{"name": "title", "type": "string", "required": true}]}"#,
            "home.yaml": "name: home\nentry: true\ncomponents:\n  - name: card\n    content: {title: Hi\n",
            "strings/en.yaml": "hello: Hello\n",
        ])
        #expect(result.diagnostics.filter { $0.severity == .warning }.isEmpty, "\(result.diagnostics.report)")
        #expect(result.diagnostics.filter { $0.severity == .error }.count == 1, "\(result.diagnostics.report)")
        // With the file fixed, the unused message is reported again.
        let fixed = load([
            "components/card.json": #"{"name": "card", "fields": [{"name": "title", "type": "string", "required": true}]}"#,
            "home.yaml": "name: home\nentry: true\ncomponents:\n  - name: card\n    content: {title: Hi}\n",
            "strings/en.yaml": "hello: Hello\n",
        ])
        #expect(fixed.diagnostics.map(\.code) == [.unusedText], "\(fixed.diagnostics.report)")
    }
}
