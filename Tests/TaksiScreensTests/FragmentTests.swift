import TaksiSchema
import TaksiScreens
import Testing

/// Fragments: reusable pieces of screens under `fragments/`, expanded at each use.
@Suite("Fragments")
struct FragmentTests {
    /// A header fragment with a data parameter, a typed value parameter with a default and an
    /// identifier parameter; a content fragment (an action); and a page fragment that nests the
    /// header.
    static let fragments = [
        "fragments/header.yaml": """
        parameters:
          who: {type: data}
          kind: {type: enum, values: [title, subtitle], default: title}
          id: {type: string, default: greeting}
        components:
          - name: label_component
            identifier: {$param: id}
            content:
              value: {$template: "Hello, {who.name}!"}
              kind: {$param: kind}
        """,
        "fragments/cards/open.yaml": """
        parameters:
          item: {type: data}
        content:
          identifier: navigation
          content: {interface_identifier: {$template: "profile/{item.id}"}}
        """,
        "fragments/page.yaml": """
        parameters:
          person: {type: data}
        components:
          - {$fragment: header, with: {who: person, kind: subtitle, id: page_title}}
          - name: spacer_component
            content: {}
        """,
    ]

    static let profile = #"{"name": "profile/{id}", "entry": true, "components": []}"#
    static let sources =
        #"{"feed": {"type": "fixture", "value": {"user": {"name": "Ada"}, "people": [{"id": "ada", "name": "Ada"}, {"id": "alan", "name": "Alan"}]}}}"#

    func screen(_ components: String) -> [String: String] {
        var files = Self.fragments
        files["home.json"] = #"{"name": "home", "entry": true, "sources": \#(Self.sources), "components": \#(components)}"#
        files["profile.json"] = Self.profile
        return files
    }

    /// Fragments `level0` to `level<top>`: `level0` is `leaf`, each other places the one below it
    /// `width` times.
    func chain(_ files: inout [String: String], top: Int, width: Int = 4, leaf: String) {
        files["fragments/level0.yaml"] = leaf
        for level in 1...top {
            files["fragments/level\(level).yaml"] =
                "components:\n" + String(repeating: "  - {$fragment: level\(level - 1)}\n", count: width)
        }
    }

    /// The skeleton and data of `home`, as the client receives them.
    func payloads(_ files: [String: String]) throws -> String {
        let result = load(files)
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let screen = try #require(set["home"])
        let data = try #require(screen.staticData)
        return JSONWriter.string(screen.skeleton.jsonValue, pretty: true) + "\n" + JSONWriter.string(data.jsonValue, pretty: true)
    }

    @Test("a screen using fragments serves exactly the bytes of the same screen written out")
    func expansionMatchesWrittenOut() throws {
        let used = try payloads(
            screen(
                """
                [
                  {"$fragment": "header", "with": {"who": "feed.user"}},
                  {"$fragment": "page", "with": {"person": "feed.user"}},
                  {"name": "collection_component", "identifier": "people", "content": {"component_name": "button_component", "values": {"$each": "feed.people", "as": "person", "template": {"title": {"$bind": "person.name"}, "action": {"$fragment": "cards/open", "with": {"item": "person"}}}}}}
                ]
                """
            )
        )
        var writtenOut = Self.fragments.filter { !$0.key.hasPrefix("fragments/") }
        writtenOut["home.json"] = #"""
            {"name": "home", "entry": true, "sources": \#(Self.sources), "components": [
              {"name": "label_component", "identifier": "greeting", "content": {"value": {"$template": "Hello, {feed.user.name}!"}, "kind": "title"}},
              {"name": "label_component", "identifier": "page_title", "content": {"value": {"$template": "Hello, {feed.user.name}!"}, "kind": "subtitle"}},
              {"name": "spacer_component", "content": {}},
              {"name": "collection_component", "identifier": "people", "content": {"component_name": "button_component", "values": {"$each": "feed.people", "as": "person", "template": {"title": {"$bind": "person.name"}, "action": {"identifier": "navigation", "content": {"interface_identifier": {"$template": "profile/{person.id}"}}}}}}}
            ]}
            """#
        writtenOut["profile.json"] = Self.profile
        #expect(used == (try payloads(writtenOut)))
        // And the expansion itself, as a golden: identifiers from parameters, a generated one by position.
        #expect(
            used == #"""
                {
                  "components": [
                    {
                      "content": {
                        "kind": "title",
                        "value": "        "
                      },
                      "identifier": "greeting",
                      "name": "label_component",
                      "requires_data": true
                    },
                    {
                      "content": {
                        "kind": "subtitle",
                        "value": "        "
                      },
                      "identifier": "page_title",
                      "name": "label_component",
                      "requires_data": true
                    },
                    {
                      "content": {},
                      "identifier": "component$2",
                      "name": "spacer_component",
                      "requires_data": false
                    },
                    {
                      "content": {
                        "component_name": "button_component",
                        "values": []
                      },
                      "identifier": "people",
                      "name": "collection_component",
                      "requires_data": true
                    }
                  ]
                }

                {
                  "interface_data": [
                    {
                      "content": {
                        "value": "Hello, Ada!"
                      },
                      "identifier": "greeting"
                    },
                    {
                      "content": {
                        "value": "Hello, Ada!"
                      },
                      "identifier": "page_title"
                    },
                    {
                      "content": {
                        "values": [
                          {
                            "action": {
                              "content": {
                                "interface_identifier": "profile/ada"
                              },
                              "identifier": "navigation"
                            },
                            "title": "Ada"
                          },
                          {
                            "action": {
                              "content": {
                                "interface_identifier": "profile/alan"
                              },
                              "identifier": "navigation"
                            },
                            "title": "Alan"
                          }
                        ]
                      },
                      "identifier": "people"
                    }
                  ]
                }

                """#
        )
    }

    @Test(
        "arguments are checked against the parameters' types, at the use",
        arguments: [
            (
                #"{"$fragment": "header", "with": {"who": "feed.user", "kind": "huge"}}"#,
                "\"kind\" of fragment header is a value of type enum"
            ),
            (#"{"$fragment": "header", "with": {"who": "feed.user", "id": 7}}"#, "\"id\" of fragment header is a value of type string"),
            (#"{"$fragment": "header", "with": {"who": 3}}"#, "\"who\" of fragment header is data: give a binding path"),
            (#"{"$fragment": "header", "with": {"who": "nothing.here"}}"#, "\"nothing\" is not a source of this screen"),
            (#"{"$fragment": "header"}"#, "fragment header needs parameter \"who\""),
            (
                #"{"$fragment": "header", "with": {"who": "feed.user", "kinds": "title"}}"#,
                "fragment header has no parameter \"kinds\"; its parameters are who, kind, id (did you mean \"kind\"?)"
            ),
            (
                #"{"$fragment": "headr", "with": {"who": "feed.user"}}"#,
                "fragment \"headr\" does not exist; it would be the file fragments/headr.yaml (or .json) (fragments: cards/open, header, page) (did you mean \"header\"?)"
            ),
            (#"{"$fragment": "cards/open", "with": {"item": "feed.user"}}"#, "fragment cards/open is one value (its file has \"content\")"),
            (
                #"{"name": "label_component", "content": {"value": {"$fragment": "header", "with": {"who": "feed.user"}}}}"#,
                "fragment header is a run of components"
            ),
            (
                #"{"name": "label_component", "content": {"value": {"$param": "who"}}}"#,
                "$param places a fragment's parameter; it is only used inside a file under fragments/"
            ),
        ]
    )
    func argumentErrors(use: String, message: String) throws {
        let error = try #require(onlyError(load(screen("[\(use)]"))))
        #expect(error.message.contains(message), "\(error)")
        #expect(error.file == "Screens/home.json")
        #expect(error.trace.isEmpty)
    }

    @Test(
        "a fragment's own mistakes are reported at the use, with the fragment's file, line, column and path",
        arguments: [
            (
                "value: {$bind: feed.user.name}", "fragment broken reads \"feed\", which is not one of its data parameters",
                "components[0].content.value.$bind", 6
            ),
            (
                "value: {$bind: label}", "\"label\" is a value parameter, placed whole with {$param: label}",
                "components[0].content.value.$bind", 6
            ),
            ("value: {$param: who}", "\"who\" is a data parameter: read it with a binding", "components[0].content.value.$param", 6),
            (
                "value: {$param: whom}",
                "\"whom\" is not a parameter of fragment broken; declare it under parameters (declared: who, label) (did you mean \"who\"?)",
                "components[0].content.value.$param", 6
            ),
            ("value: {$template: \"{who.name}\", default: 3}", "expected a string", "components[0].content.value.default", 6),
        ]
    )
    func fragmentErrors(line: String, message: String, path: String, fragmentLine: Int) throws {
        var files = screen(#"[{"$fragment": "broken", "with": {"who": "feed.user", "label": "x"}}]"#)
        files["fragments/broken.yaml"] = """
            parameters:
              who: {type: data}
              label: {type: string}
            components:
              - name: label_component
                content:
                  \(line)
            """
        let error = try #require(onlyError(load(files)))
        #expect(error.message.contains(message), "\(error)")
        #expect(error.file == "Screens/home.json")
        #expect(error.location == SourceLocation(line: 1, column: 214))
        #expect(error.trace.map(\.fragment) == ["broken"])
        #expect(error.trace.first?.file == "Screens/fragments/broken.yaml")
        #expect(error.trace.first?.location.line == fragmentLine + 1)
        #expect(error.path?.description == path)
    }

    @Test("a string parameter's default can be a message: compiled where the fragment is used, in each locale")
    func localizedDefault() throws {
        let result = load([
            "strings/en.yaml": "guest: Guest\n",
            "strings/pt.yaml": "guest: Convidado\n",
            "fragments/hello.yaml": """
            parameters:
              who: {type: string, default: {$text: guest}}
            components:
              - {name: label_component, identifier: hi, content: {value: {$param: who}}}
            """,
            "home.yaml": "name: home\nentry: true\ncomponents:\n  - $fragment: hello\n",
            "named.yaml": "name: named\nentry: true\ncomponents:\n  - {$fragment: hello, with: {who: Ada}}\n",
        ])
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.report)")
        let home = try #require(set["home"])
        #expect(home.skeleton.components.first?.content["value"] == "Guest")
        #expect(home.translated(to: "pt").skeleton.components.first?.content["value"] == "Convidado")
        #expect(set["named"]?.skeleton.components.first?.content["value"] == "Ada")
    }

    @Test("a problem in a nested fragment names the whole chain, each with its file, line and column")
    func chains() throws {
        var files = screen(
            """
            [
              {"$fragment": "page", "with": {"person": "feed.user"}}
            ]
            """
        )
        files["fragments/header.yaml"] = files["fragments/header.yaml"]!.replacingOccurrences(
            of: "kind: {$param: kind}", with: "kind: {$param: kind}\n      size: 3")
        let error = try #require(onlyError(load(files)))
        #expect(
            error.description
                == #"Screens/home.json:2:17: error: in fragment page (Screens/fragments/page.yaml:4:17): in fragment header (Screens/fragments/header.yaml:11:7): components[0].content.size: unknown field "size" in label_component content; its fields are value, kind"#
        )
    }

    @Test("a fragment that contains itself, directly or through another, is an error at the use that closes the cycle")
    func cycles() throws {
        var files = screen(#"[{"$fragment": "a"}]"#)
        files["fragments/a.yaml"] = "components:\n  - {$fragment: b}\n"
        files["fragments/b.yaml"] = "components:\n  - {$fragment: a}\n"
        let error = try #require(onlyError(load(files)))
        #expect(error.code == .fragmentCycle)
        #expect(error.message.hasPrefix("fragment a would contain itself (a → b → a)"), "\(error)")
        #expect(error.trace.map(\.fragment) == ["a", "b"])
        #expect(error.trace.last?.location == SourceLocation(line: 2, column: 17))

        files["fragments/a.yaml"] = "content: {$fragment: a}\n"
        files["home.json"] =
            #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": {"$fragment": "a"}}}]}"#
        let direct = try #require(onlyError(load(files)))
        #expect(direct.message.hasPrefix("fragment a would contain itself (a → a)"), "\(direct)")
    }

    @Test("identifiers stay unique within a screen: generated ones by position, given ones through parameters, a repeated one is an error")
    func identifiers() throws {
        // A component without an identifier gets one by its position in the expanded screen.
        let twice = load(
            screen(
                #"[{"$fragment": "page", "with": {"person": "feed.user"}}, {"$fragment": "header", "with": {"who": "feed.user"}}, {"$fragment": "header", "with": {"who": "feed.user", "id": "second"}}]"#
            ))
        let set = try #require(twice.screenSet, "\(twice.diagnostics.report)")
        #expect(set["home"]?.skeleton.components.map(\.identifier) == ["page_title", "component$1", "greeting", "second"])

        let repeated = try #require(
            onlyError(
                load(
                    screen(
                        #"[{"$fragment": "header", "with": {"who": "feed.user"}}, {"$fragment": "header", "with": {"who": "feed.user"}}]"#))
            )
        )
        #expect(repeated.code == .duplicateIdentifier)
        #expect(
            repeated.message
                == #"identifier "greeting" is already used by the component at line 1 (in fragment header at Screens/fragments/header.yaml:4:31); identifiers must be unique within a screen (two dynamic components with one identifier crash the app); a fragment used more than once takes its identifiers as parameters: identifier: {$param: id}"#
        )
        #expect(repeated.trace.map(\.fragment) == ["header"])
    }

    @Test("declarations are checked once, in the fragment's file; unused fragments and parameters are warnings")
    func declarations() throws {
        var files = screen(
            #"[{"$fragment": "header", "with": {"who": "feed.user"}}, {"$fragment": "page", "with": {"person": "feed.user"}}]"#)
        files["fragments/extra.yaml"] = "parameters:\n  unused: {type: string}\ncontent: 1\n"
        let warned = load(files)
        #expect(warned.screenSet != nil)
        #expect(
            warned.diagnostics.map(\.description).sorted() == [
                #"Screens/fragments/cards/open.yaml:1:1: warning: fragment "cards/open" is not used by any screen; use it ({$fragment: cards/open}) or remove the file"#,
                #"Screens/fragments/extra.yaml:1:1: warning: fragment "extra" is not used by any screen; use it ({$fragment: extra}) or remove the file"#,
                #"Screens/fragments/extra.yaml:2:11: warning: parameters.unused: parameter "unused" is never read by the fragment; use it ({$param: unused}) or remove it"#,
            ]
        )

        for (text, message) in [
            (
                "parameters:\n  p: {type: strin}\ncontent: 1\n",
                #"unknown type "strin"; use data (a binding path of the using screen) or a field type"#
            ),
            (
                "parameters:\n  p: {type: data, default: x}\ncontent: {$bind: p}\n",
                "a data parameter names a value of the using screen, so it has no default"
            ),
            ("parameters:\n  p: {type: integer, default: x}\ncontent: {$param: p}\n", "expected an integer"),
            ("content: 1\ncomponents: []\n", "a fragment holds exactly one of"),
            ("components: {}\n", "components must be an array"),
        ] {
            var broken = files
            broken["fragments/extra.yaml"] = text
            let error = try #require(onlyError(load(broken)))
            #expect(error.file == "Screens/fragments/extra.yaml")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test(
        "a chain deeper than the limit, each level placing the next several times, is one error, found without walking every path",
        arguments: [2, 4])
    func deepWideChain(width: Int) throws {
        // 17 levels: level16 places level15 `width` times, ..., level1 places level0, the 17th, too deep.
        var files = screen(#"[{"$fragment": "level16"}]"#)
        chain(&files, top: 16, width: width, leaf: "components:\n  - {name: spacer_component, content: {}}\n")
        let diagnostics = load(files).diagnostics
        let errors = diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(errors.count) errors, the first \(errors.first.map { "\($0)" } ?? "")")
        #expect(
            !diagnostics.contains { $0.code == .unusedFragment && $0.file.contains("level") }, "the fragment too deep is used, not unused")
        let error = try #require(errors.first)
        #expect(error.code == .fragmentCycle)
        #expect(error.message.hasPrefix("fragments are nested more than \(16) deep (level16 → level15 → "), "\(error)")
        #expect(error.trace.count == 16 && error.file == "Screens/home.json")
    }

    @Test("uses that expand to nothing are work too: past the limit of uses the screen is refused once")
    func manyEmptyUses() throws {
        // 4^9 uses of fragments that add no component and almost no bytes (2 each).
        var files = screen(#"[{"$fragment": "level9"}]"#)
        chain(&files, top: 9, leaf: "components: []\n")
        let error = try #require(onlyError(load(files)))
        #expect(error.code == .fragmentTooLarge)
        #expect(error.message.contains("uses fragments more than \(ScreenSetLoader.maximumFragmentUses) times"), "\(error)")
    }

    @Test("a mistake inside a fragment placed many times is reported once, through its first use")
    func mistakeReportedOnce() throws {
        var files = screen(#"[{"$fragment": "twice"}, {"$fragment": "twice"}]"#)
        files["fragments/twice.yaml"] = "components:\n" + String(repeating: "  - {$fragment: broken}\n", count: 3)
        files["fragments/broken.yaml"] =
            "components:\n  - {$fragment: missing}\n  - {name: label_component, content: {value: x, size: 3}}\n"
        let errors = load(files).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 2, "\(errors)")
        #expect(errors.first?.code == .unknownFragment)
        #expect(errors.last?.message.contains(#"unknown field "size""#) == true, "\(errors)")
        // Each through the first use of twice, and twice's first use of broken.
        #expect(errors.allSatisfy { $0.trace.map(\.fragment) == ["twice", "broken"] && $0.trace.first?.location.line == 2 })
    }

    @Test("fragments that multiply are bounded: the use that passes the limit is an error with its chain, before any memory is spent")
    func exponentialExpansion() throws {
        // The reported set: each level uses the one before four times; 13 levels would make 4^12 components.
        var files = screen(#"[{"$fragment": "level12"}]"#)
        chain(&files, top: 12, leaf: "components:\n  - {name: spacer_component, content: {}}\n")
        let components = try #require(onlyError(load(files)))
        #expect(components.code == .fragmentTooLarge)
        #expect(components.file == "Screens/home.json")
        #expect(components.message.contains("more than \(ScreenSetLoader.maximumExpandedComponents) components"), "\(components)")
        #expect(components.trace.first?.fragment == "level12")

        // Values multiply the same way, through parameters placed several times.
        files = screen(#"[{"name": "label_component", "content": {"value": "x", "kind": {"$fragment": "value12"}}}]"#)
        files["fragments/value0.yaml"] =
            "parameters:\n  v: {type: string, default: \"\(String(repeating: "a", count: 1_000))\"}\ncontent: [{$param: v}]\n"
        for level in 1...12 {
            files["fragments/value\(level).yaml"] =
                "content: [" + Array(repeating: "{$fragment: value\(level - 1)}", count: 4).joined(separator: ", ") + "]\n"
        }
        let bytes = try #require(load(files).diagnostics.first { $0.code == .fragmentTooLarge }, "no size error")
        #expect(bytes.message.contains("passes \(ScreenSetLoader.maximumExpandedBytes) bytes"), "\(bytes)")
        #expect(bytes.trace.count > 1, "the chain of fragments is named")

        // Below the limits, the same shape is fine.
        files = screen(#"[{"$fragment": "level3"}]"#)
        chain(&files, top: 3, leaf: "components:\n  - {name: spacer_component, content: {}}\n")
        let fine = load(files)
        #expect(fine.screenSet?["home"]?.skeleton.components.count == 64, "\(fine.diagnostics.report)")
    }
}
