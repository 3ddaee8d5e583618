import TaksiSchema
import Testing

@testable import TaksiScreens

/// Screens with path parameters, navigation targets that carry them, and deep links: matching,
/// encoding and every load-time diagnostic, on in-memory screen sets.
@Suite("Path parameters and navigation targets")
struct PathParameterTests {
    static let files = [
        "home.json": #"{"name": "home", "entry": true, "components": []}"#,
        "stations.yaml": """
        name: bikes/stations/{network}
        entry: true
        parameters:
          network: {type: string, pattern: "[a-z0-9-]+", max_length: 20}
        components: []
        """,
        "repository.yaml": "name: repositories/{owner}/{repo}\nentry: true\ncomponents: []",
        "item.yaml": "name: items/{id}\nentry: true\nparameters: {id: {type: integer}}\ncomponents: []",
    ]

    /// The same set with a literal name beside the pattern bikes/stations/{network}.
    static let withLiteral = files.merging(["all.yaml": "name: bikes/stations/all\nentry: true\ncomponents: []"]) { $1 }

    static let routes: ScreenRoutes = {
        let load = load(withLiteral)
        guard let set = load.screenSet else { preconditionFailure(load.diagnostics.report) }
        return set.routes
    }()

    /// What a path opens: the screen and its values, an error code, or nothing.
    static func opens(_ path: String) -> String {
        guard let match = routes.match(path[...]) else { return "-" }
        do {
            let values = try match.pattern.values(match.segments)
            let shown = values.keys.sorted().map { "\($0)=\(JSONWriter.string(values[$0]!))" }
            return ([match.pattern.name] + shown).joined(separator: " ")
        } catch {
            return "\(match.pattern.name) \(error.code)"
        }
    }

    @Test("a path is cut at every slash on its bytes, empty segments kept: as a split on Characters, but a slash is always a cut")
    func segments() {
        for path in ["", "/", "bikes/stations/velib", "/a//b/", "caf\u{E9}/\u{1F1E7}\u{1F1F7}/x", "a%2Fb/c"] {
            let text = Substring(path)
            #expect(ScreenRoutes.segments(of: text) == text.split(separator: "/", omittingEmptySubsequences: false), "\(path)")
        }
        // A combining mark after a slash makes one Character of the two, which a Character split
        // would not cut (targets are ASCII by the time they are routed; RFC 3986 cuts at the byte).
        #expect(ScreenRoutes.segments(of: "a/\u{301}b") == ["a", "\u{301}b"])
    }

    @Test(
        "request paths match literal names first, then the one pattern of their shape, with decoded, typed values",
        arguments: [
            ("home", "home"),
            ("bikes/stations/velib", #"bikes/stations/{network} network="velib""#),
            ("bikes/stations/all", "bikes/stations/all"),  // the literal name wins
            ("bikes/stations/citi-bike-nyc", #"bikes/stations/{network} network="citi-bike-nyc""#),
            ("bikes/stations/Velib", "bikes/stations/{network} invalid_parameter"),  // the pattern refuses it
            ("bikes/stations/velib-paris-metropole-x", "bikes/stations/{network} invalid_parameter"),  // max_length 20
            ("repositories/apple/swift-nio", #"repositories/{owner}/{repo} owner="apple" repo="swift-nio""#),
            ("repositories/a%2Fb/caf%C3%A9", #"repositories/{owner}/{repo} owner="a/b" repo="café""#),
            ("repositories/two%20words/%F0%9F%9A%B2", #"repositories/{owner}/{repo} owner="two words" repo="🚲""#),
            ("repositories/a/%ZZ", "repositories/{owner}/{repo} invalid_parameter"),  // a malformed escape
            ("repositories/a/%FF", "repositories/{owner}/{repo} invalid_parameter"),  // not UTF-8
            ("repositories/a/..", "repositories/{owner}/{repo} invalid_parameter"),
            ("repositories/a/%2E", "repositories/{owner}/{repo} invalid_parameter"),
            ("repositories/apple", "-"),
            ("repositories/a/b/c", "-"),
            ("items/42", "items/{id} id=42"),
            ("items/4.5", "items/{id} invalid_parameter"),
            ("items/x", "items/{id} invalid_parameter"),
            ("bikes", "-"),
            ("bikes/stations", "-"),
        ]
    )
    func matching(_ path: String, _ expected: String) {
        #expect(Self.opens(path) == expected)
    }

    @Test(
        "a navigation target opens exactly one screen with values of the right type, or says why not",
        arguments: [
            ("bikes/stations/velib", nil),
            ("bikes/stations/all", nil),
            ("repositories/a%2Fb/x", nil),
            ("bikes/station/velib", #"is not a screen; name an existing screen (did you mean "bikes/stations/velib"?)"#),
            ("bikes/stations", "is not a screen; name an existing screen; screen bikes/stations/{network} needs a value for {network}"),
            // Nothing close: the screens there are, so the fix is in the message.
            ("checkout", "is not a screen; name an existing screen: bikes/stations/all, bikes/stations/{network}, "),
            ("bikes/stations/{network}", "holds a pattern's braces"),
            ("bikes/stations/two words", #"has "two words", which is not a path segment"#),
            ("bikes/stations/", "has an empty path segment"),
            ("items/x", "opens items/{id}, but {id} does not fit: it must be an integer, found \"x\""),
            (
                "bikes/stations/Velib",
                "opens bikes/stations/{network}, but {network} does not fit: it must be a string of at most 20 characters matching [a-z0-9-]+"
            ),
        ] as [(String, String?)]
    )
    func targets(_ target: String, _ problem: String?) {
        let found = Self.routes.problem(withTarget: target)
        if let problem {
            #expect(found?.hasPrefix(problem) == true, "\(found ?? "no problem")")
        } else {
            #expect(found == nil)
        }
    }

    // MARK: Templated targets

    /// A list whose items open `repositories/{owner}/{repo}`, over `networks` values given per request.
    static func listSet(template: String = "repositories/{item.owner}/{item.name}", extra: [String: String] = [:]) -> ScreenSetLoad {
        var set = files
        set["list.yaml"] = """
            name: list
            entry: true
            sources:
              query: {type: request, parameters: {name: {default: x}}}
            components:
              - name: collection_component
                identifier: rows
                content:
                  component_name: button_component
                  values:
                    $each: query.items
                    template:
                      title: {$bind: item.name}
                      action:
                        identifier: navigation
                        content: {interface_identifier: {$template: "\(template)"}}
            """
        return load(set.merging(extra) { $1 })
    }

    @Test("values from data fill one segment each, percent-encoded; a value that cannot be a segment drops its item")
    func awkwardValues() throws {
        let load = Self.listSet()
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        let screen = try #require(set["list"])
        let owners: [JSONValue] = ["a/b", "two words", "🚲 café", "", "..", ".", 42, true, ["x": 1], "ok\u{7}"]
        let items: [JSONValue] = owners.map { ["owner": $0, "name": "repo"] }
        let (data, problems) = screen.dataPlan.build(values: ["query": ["items": .array(items)]], catalog: set.catalog)
        let targets = data.entries.first?.content["values"]?.arrayValue?.compactMap {
            $0["action"]?["content"]?["interface_identifier"]?.stringValue
        }
        #expect(
            targets == [
                "repositories/a%2Fb/repo", "repositories/two%20words/repo", "repositories/%F0%9F%9A%B2%20caf%C3%A9/repo",
                "repositories/42/repo",
                "repositories/true/repo",
            ]
        )
        // Each target opens the screen with the original value, and is ASCII (iOS 14's URL(string:) takes it).
        for (target, owner) in zip(targets ?? [], ["a/b", "two words", "🚲 café", "42", "true"]) {
            let match = try #require(set.routes.match(target[...]))
            #expect(try match.pattern.values(match.segments)["owner"] == .string(owner))
            #expect(target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
        }
        let lost = problems.filter(\.isLoss).map(\.message)
        #expect(lost.contains { $0.contains("item.owner cannot be a path segment of a navigation target: it is empty") })
        #expect(lost.contains { $0.contains("\"..\" is not a name") })
        #expect(lost.contains { $0.contains("is an object, which cannot fill a path segment") })
        #expect(lost.contains { $0.contains("control character") })
    }

    @Test("a value that would make the last segment \"data\" is dropped: that path is the data endpoint")
    func dataSegment() throws {
        let load = Self.listSet(template: "bikes/stations/{item.name}")
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        let screen = try #require(set["list"])
        let items: [JSONValue] = [["name": "data"], ["name": "velib"], ["name": "Not-Lowercase"]]
        let (data, problems) = screen.dataPlan.build(values: ["query": ["items": .array(items)]], catalog: set.catalog)
        let targets = data.entries.first?.content["values"]?.arrayValue?.compactMap {
            $0["action"]?["content"]?["interface_identifier"]?.stringValue
        }
        // "Not-Lowercase" makes a target, but the screen's pattern refuses it: the item is dropped too.
        #expect(targets == ["bikes/stations/velib"])
        let lost = problems.filter(\.isLoss).map(\.message)
        #expect(
            lost.contains { $0.contains("item.name is \"data\", which as the last segment of a target would name the data endpoint") },
            "\(lost)")
        #expect(
            lost.contains {
                $0.contains("navigation target \"bikes/stations/Not-Lowercase\" opens bikes/stations/{network}, but {network} does not fit")
            }, "\(lost)")
    }

    // MARK: Diagnostics

    @Test(
        "every mistake in a target, a pattern or a link is an error at its file, line and column",
        arguments: [
            // A typo in a templated target, with a suggestion.
            (
                ["list.yaml": nil], "repositorie/{item.owner}/{item.name}",
                "Screens/list.yaml:16:57: error: components[0].content.values.template.action.content.interface_identifier.$template: navigation target \"repositorie/{item.owner}/{item.name}\" opens no screen: none has the path repositorie/{}/{} (a {} stands for a value) (did you mean \"repositories/{owner}/{repo}\"?)"
            ),
            // A missing parameter.
            (
                [:], "repositories/{item.owner}",
                "navigation target \"repositories/{item.owner}\" opens no screen: none has the path repositories/{}"
            ),
            // Half a segment.
            ([:], "repositories/x{item.owner}/{item.name}", "a value fills a whole path segment"),
            // A value where the screen has fixed text.
            (
                [:], "bikes/{item.owner}/{item.name}",
                "{item.owner} stands where screen bikes/stations/{network} has the fixed segment \"stations\""
            ),
            // A template that a literal name could capture.
            ([:], "bikes/stations/{item.name}x", "a value fills a whole path segment"),
        ] as [([String: String?], String, String)]
    )
    func templateDiagnostics(_ unused: [String: String?], _ template: String, _ expected: String) throws {
        let load = Self.listSet(template: template)
        let error = try #require(onlyError(load))
        #expect(error.description.contains(expected), "\(error)")
        #expect(error.location != nil)
    }

    @Test("a templated target may share its shape with a literal name, which wins for the value that spells it, as for any path")
    func besideLiteral() throws {
        let load = Self.listSet(template: "bikes/stations/{item.name}", extra: ["all.yaml": Self.withLiteral["all.yaml"]!])
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        let screen = try #require(set["list"])
        let items: [JSONValue] = [["name": "all"], ["name": "velib"]]
        let data = screen.dataPlan.build(values: ["query": ["items": .array(items)]], catalog: set.catalog).data
        let targets = data.entries.first?.content["values"]?.arrayValue?.compactMap {
            $0["action"]?["content"]?["interface_identifier"]?.stringValue
        }
        #expect(targets == ["bikes/stations/all", "bikes/stations/velib"])
        #expect(targets?.compactMap { set.routes.match($0[...])?.pattern.name } == ["bikes/stations/all", "bikes/stations/{network}"])
    }

    @Test("a path parameter's declared type must fit where a request value fills it")
    func typeFit() throws {
        var files = Self.files
        files["list.yaml"] = """
            name: list/{name}
            entry: true
            sources:
              query: {type: request, parameters: {page: {type: number, default: 1}}}
            components:
              - name: collection_component
                identifier: rows
                content:
                  component_name: button_component
                  values:
                    $each: query.items
                    template:
                      title: x
                      action: {identifier: navigation, content: {interface_identifier: {$template: "items/{query.page}"}}}
            """
        let error = try #require(onlyError(load(files)))
        #expect(
            error.description.contains(
                "Screens/list.yaml:14:88: error: components[0].content.values.template.action.content.interface_identifier.$template:"))
        #expect(
            error.description.contains("{query.page} fills {id} of screen items/{id}, but it is a number, and the parameter is an integer"))
        files["list.yaml"] = files["list.yaml"]!.replacingOccurrences(of: "{query.page}", with: "{path.name}")
        let second = try #require(onlyError(load(files)))
        #expect(
            second.description.contains("{path.name} fills {id} of screen items/{id}, but it is a string, and the parameter is an integer"))
    }

    @Test(
        "patterns and their declarations are checked where they are written",
        arguments: [
            // Two patterns that can match one path.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\ncomponents: []", "b.yaml": "name: shop/{slug}\nentry: true\ncomponents: []"],
                "Screens/b.yaml:1:7: error: name: screens shop/{id} (Screens/a.yaml) and shop/{slug} can both match a path like shop/x"
            ),
            (
                [
                    "a.yaml": "name: shop/{id}/reviews\nentry: true\ncomponents: []",
                    "b.yaml": "name: shop/new/{tab}\nentry: true\ncomponents: []",
                ],
                "can both match a path like shop/new/reviews"
            ),
            // A declaration for no segment.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\nparameters: {idd: {type: integer}}\ncomponents: []"],
                "Screens/a.yaml:3:14: error: parameters.idd: \"idd\" is not a parameter of the screen's name shop/{id}; its parameters are id (did you mean \"id\"?)"
            ),
            // A path parameter has no default.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\nparameters: {id: {type: integer, default: 1}}\ncomponents: []"],
                "Screens/a.yaml:3:34: error: parameters.id.default: unknown key \"default\" in a path parameter"
            ),
            // An invalid pattern.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\nparameters: {id: {pattern: \"[a-\"}}\ncomponents: []"],
                "Screens/a.yaml:3:28: error: parameters.id.pattern: \"[a-\" is not a regular expression"
            ),
            // Half a segment in a name.
            (["a.yaml": "name: shop/id-{id}\nentry: true\ncomponents: []"], "\"shop/id-{id}\" is not a valid screen name"),
            // Variants that disagree.
            (
                [
                    "a.yaml": "name: shop/{id}\nentry: true\ncomponents: []",
                    "b.yaml": "name: shop/{id}\nversion: \">= 2\"\nparameters: {id: {type: integer}}\ncomponents: []",
                ],
                "Screens/b.yaml:3:13: error: parameters: every variant of screen \"shop/{id}\" declares the same path parameters"
            ),
            // The path source's name taken.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\nsources: {path: {type: fixture, value: 1}}\ncomponents: []"],
                "Screens/a.yaml:3:11: error: sources.path: \"path\" is the source of this screen's path parameters"
            ),
            // A query parameter named like a path parameter.
            (
                ["a.yaml": "name: shop/{id}\nentry: true\nsources: {q: {type: request, parameters: {id: {}}}}\ncomponents: []"],
                "error: sources.q.parameters.id: \"id\" is a path parameter of this screen"
            ),
        ] as [([String: String], String)]
    )
    func patternDiagnostics(_ files: [String: String], _ expected: String) throws {
        let load = load(files)
        let errors = load.diagnostics.filter { $0.severity == .error }
        #expect(errors.contains { $0.description.contains(expected) }, "\(load.diagnostics.report)")
        #expect(load.screenSet == nil)
    }

    @Test("the unreachable-screen warning follows literal and templated targets to patterns")
    func reachability() throws {
        var files = Self.files
        for key in files.keys where key != "home.json" { files[key] = files[key]!.replacingOccurrences(of: "entry: true\n", with: "") }
        files["home.json"] = """
            {"name": "home", "entry": true, "sources": {"q": {"type": "request", "parameters": {"n": {}}}}, "components": [
              {"name": "button_component", "content": {"title": "x", "action": {"identifier": "navigation", "content": {"interface_identifier": "bikes/stations/velib"}}}},
              {"name": "collection_component", "identifier": "c", "content": {"component_name": "button_component", "values": {"$each": "q.items",
                "template": {"title": "x", "action": {"identifier": "navigation", "content": {"interface_identifier": {"$template": "items/{item.id}"}}}}}}}
            ]}
            """
        let load = load(files)
        let unreachable = load.diagnostics.filter { $0.code == .unreachableScreen }.map(\.file).sorted()
        #expect(unreachable == ["Screens/repository.yaml"], "\(load.diagnostics.report)")
    }

    // MARK: Deep links

    static let links = """
        links:
          - url: https://eats.example.com/r/{id}
            screen: items/{id}
          - url: taksi-eats://repo/{owner}/{name}
            screen: repositories/{owner}/{name}
          - url: https://eats.example.com/bikes/{network}
            screen: bikes/stations/{network}
          - url: https://eats.example.com/bikes/all/velib
            screen: bikes/stations/velib
        """

    @Test(
        "links resolve to the targets of their screens, with values encoded and checked",
        arguments: [
            ("https://eats.example.com/r/42", "items/42"),
            ("HTTPS://Eats.Example.com:443/r/42/?utm_source=push#top", "items/42"),
            ("taksi-eats://repo/apple/swift-nio", "repositories/apple/swift-nio"),
            ("taksi-eats://repo/a%2Fb/caf%C3%A9", "repositories/a%2Fb/caf%C3%A9"),
            ("https://eats.example.com/bikes/velib", "bikes/stations/velib"),
            ("https://eats.example.com/bikes/all/velib", "bikes/stations/velib"),
            ("https://eats.example.com/r/x", nil),  // not an integer
            ("https://eats.example.com/bikes/Velib", nil),  // the pattern refuses it
            ("https://other.example.com/r/42", nil),
            ("http://eats.example.com/r/42", nil),
            ("https://eats.example.com/r", nil),
            ("not a link", nil),
            // The host a browser (WHATWG URL) reads, or nothing: a backslash ends the host there.
            ("https://evil.example\\@eats.example.com/r/42", nil),
            ("https://evil.example@eats.example.com/r/42", "items/42"),  // userinfo: browsers read eats.example.com too
            ("https://eats.example.com:/r/42", "items/42"),
            ("https://eats.example.com:99999/r/42", nil), ("https://eats.example.com:x/r/42", nil),
            ("https://eats.example.com:+443/r/42", nil),
            ("https://eats%2Eexample.com/r/42", nil), ("https://eats.exa\tmple.com/r/42", nil), ("https://eats.example.com/r/4 2", nil),
            ("https://éats.example.com/r/42", nil),
        ] as [(String, String?)]
    )
    func resolve(_ url: String, _ target: String?) throws {
        var files = Self.files
        files["links.yaml"] = Self.links
        let load = load(files)
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        switch set.links.resolve(url) {
        case .success(let found): #expect(found == target)
        case .failure: #expect(target == nil)
        }
    }

    @Test(
        "links are checked at load: the screen they open, their parameters, and overlaps",
        arguments: [
            (
                "  - url: https://e.com/x/{id}\n    screen: itemz/{id}",
                "Screens/links.yaml:3:13: error: links[0].screen: \"itemz/{id}\" opens no screen"
            ),
            (
                "  - url: https://e.com/x/{id}\n    screen: items/{ident}",
                "Screens/links.yaml:3:13: error: links[0].screen: {ident} is not a parameter of https://e.com/x/{id}; its parameters are id"
            ),
            ("  - url: https://e.com/x/{id}\n    screen: repositories/{id}", "opens no screen"),
            (
                "  - url: https://e.com/x/{id}\n    screen: items/{id}\n  - url: https://e.com/{kind}/1\n    screen: items/{kind}",
                "Screens/links.yaml:4:10: error: links[1].url: link https://e.com/{kind}/1 and link https://e.com/x/{id} (line 2) can match the same URL"
            ),
            (
                "  - url: https://e.com/x/{id}?q=1\n    screen: items/{id}",
                "Screens/links.yaml:2:10: error: links[0].url: \"https://e.com/x/{id}?q=1\" is not a link pattern"
            ),
            (
                "  - url: https://e.com/x/{id}\n    screen: bikes/{id}/velib",
                "{id} stands where screen bikes/stations/{network} has the fixed segment \"stations\""
            ),
        ]
    )
    func linkDiagnostics(_ entries: String, _ expected: String) throws {
        var files = Self.files
        files["links.yaml"] = "links:\n" + entries
        let load = load(files)
        #expect(load.diagnostics.contains { $0.severity == .error && $0.description.contains(expected) }, "\(load.diagnostics.report)")
    }
}

/// Static fields built from the screen's own path (``ScreenVariant/pathFields``).
@Suite("Static fields from the path")
struct PathFieldTests {
    static func set(_ product: String) -> ScreenSetLoad {
        load([
            "product.yaml": """
            name: products/{id}
            parameters:
              id: {type: string, pattern: "[a-z0-9-]+"}
            sources:
              shop: {type: fixture, value: {kind: primary, name: items}}
            components:
            \(product)
            """,
            "review.yaml": """
            name: products/{id}/review
            parameters:
              id: {type: string, pattern: "[a-z0-9-]+"}
            components: []
            """,
            "home.yaml": "name: home\nentry: true\ncomponents: []",
        ])
    }

    @Test("a static field built from path parameters is made per URL into the skeleton, never into data")
    func made() throws {
        let result = Self.set(
            """
              - name: button_component
                identifier: review
                content:
                  title: {$template: "Review {path.id}"}
                  action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.id}/review"}}}
            """)
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let screen = try #require(set["products/{id}"])
        #expect(screen.pathFields.map(\.field).sorted() == ["action", "title"])
        #expect(screen.dataPlan.entries.isEmpty)
        #expect(screen.skeleton.components.first?.requiresData == false)
        let skeleton = try screen.skeleton(path: ["id": "grinder"], catalog: set.catalog).get()
        #expect(skeleton.components.first?.content["title"] == "Review grinder")
        #expect(skeleton.components.first?.content["action"]?["content"]?["interface_identifier"] == "products/grinder/review")
    }

    @Test(
        "a static field bound to anything but the path, or one that types another, is refused with the fix",
        arguments: [
            (
                #"  - {name: button_component, content: {title: {$bind: shop.name}, action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.id}/review"}}}}}"#,
                #""title" is static: the client never updates it from data, so it cannot be bound to shop; write a literal value, or build it from the screen's path (path.id), which each URL's skeleton is made with"#
            ),
            (
                #"  - {name: collection_component, content: {component_name: {$bind: path.id}, values: []}}"#,
                #""component_name" is static: it decides the type of the data's items, so it is the same on every URL of the screen; write a literal value"#
            ),
            (
                #"  - {name: button_component, content: {title: Go, action: {identifier: navigation, content: {interface_identifier: {$template: "products/{path.id}/reviews"}}}}}"#,
                "opens no screen"
            ),
        ]
    )
    func refused(component: String, message: String) throws {
        let diagnostic = try #require(onlyError(Self.set(component)))
        #expect(diagnostic.message.contains(message), "\(diagnostic)")
    }
}
