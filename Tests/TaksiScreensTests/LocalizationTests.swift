import TaksiSchema
import TaksiScreens
import Testing

/// Localized text: string tables, their checks, `$text`, plural forms and locale negotiation.
@Suite("Localization")
struct LocalizationTests {
    static let tables = [
        "strings/en.yaml": """
        greeting: "Hello, {name}!"
        count:
          one: "{count} restaurant"
          other: "{count} restaurants"
        rating: "Rated {stars}"
        title: Home
        """,
        "strings/pt.yaml": """
        greeting: "Olá, {name}!"
        count:
          one: "{count} restaurante"
          other: "{count} restaurantes"
        rating: "Nota {stars}"
        title: Início
        """,
    ]

    static let screen = #"""
        {"name": "home", "entry": true,
         "sources": {"q": {"type": "request", "parameters": {"name": {"default": "Ada"}, "n": {"type": "integer", "default": 1}, "stars": {"type": "number", "default": 4.5}}}},
         "components": [
           {"name": "label_component", "identifier": "title", "content": {"value": {"$text": "title"}}},
           {"name": "label_component", "identifier": "greeting", "content": {"value": {"$text": "greeting", "with": {"name": "q.name"}}}},
           {"name": "label_component", "identifier": "count", "content": {"value": {"$text": "count", "with": {"count": "q.n"}}}},
           {"name": "label_component", "identifier": "rating", "content": {"value": {"$text": "rating", "with": {"stars": "q.stars"}}}},
           {"name": "button_component", "content": {"title": {"$text": "count", "with": {"count": 2}}, "action": {"identifier": "navigation", "content": {"interface_identifier": "home"}}}}
         ]}
        """#

    func files(_ changes: [String: String?] = [:]) -> [String: String] {
        var files = Self.tables
        files["home.json"] = Self.screen
        for (path, text) in changes { files[path] = text }
        return files
    }

    /// The values of each label of `home`'s data in `locale`, for a query.
    func labels(_ locale: String?, query: [String: String] = [:], files: [String: String]? = nil) throws -> [String: String] {
        let result = load(files ?? self.files())
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let base = try #require(set["home"])
        let screen = locale.map { base.translated(to: $0) } ?? base
        let plan = screen.dataPlan
        let values = plan.staticValues.merging(try plan.requestValues(query: query)) { $1 }
        let (data, _) = plan.build(values: values, catalog: set.catalog)
        // Localized text compiles to templates: what they write is what the full build gives.
        #expect(plan.entries.contains { $0.template != nil })
        #expect(plan.render(values: values, catalog: set.catalog).body == JSONWriter.bytes(data.jsonValue))
        var labels: [String: String] = [:]
        for entry in data.entries { labels[entry.identifier] = entry.content["value"]?.stringValue }
        for component in screen.skeleton.components where !component.requiresData {
            labels[component.identifier] = component.content["value"]?.stringValue ?? component.content["title"]?.stringValue
        }
        return labels
    }

    @Test("a binding's default can be a message: the locale's text when the value is missing; one taking values from data is refused")
    func localizedDefault() throws {
        var files = files()
        files["home.json"] = #"""
            {"name": "home", "entry": true,
             "sources": {"q": {"type": "request", "parameters": {"nick": {}}}},
             "components": [{"name": "label_component", "identifier": "who", "content": {"value": {"$bind": "q.nick", "default": {"$text": "title"}}}}]}
            """#
        #expect(try labels(nil, files: files)["who"] == "Home")
        #expect(try labels("pt", files: files)["who"] == "Início")
        #expect(try labels("pt", query: ["nick": "Bia"], files: files)["who"] == "Bia")

        files["home.json"] = files["home.json"]!.replacingOccurrences(
            of: #"{"$text": "title"}"#, with: #"{"$text": "greeting", "with": {"name": "q.nick"}}"#)
        let refused = try #require(onlyError(load(files)))
        #expect(refused.path?.description == "components[0].content.value.default")
        #expect(refused.message.contains("its $text cannot take values from data"), "\(refused)")
    }

    @Test("a screen is compiled in each locale: static text in the skeleton, placeholders, plural forms and numbers in the data")
    func perLocale() throws {
        #expect(
            try labels(nil, query: ["n": "1"])
                == [
                    "title": "Home", "greeting": "Hello, Ada!", "count": "1 restaurant", "rating": "Rated 4.5",
                    "component$4": "2 restaurants",
                ]
        )
        #expect(
            try labels("pt", query: ["n": "0", "stars": "3.25", "name": "Bia"])
                == [
                    "title": "Início", "greeting": "Olá, Bia!", "count": "0 restaurante", "rating": "Nota 3,25",
                    "component$4": "2 restaurantes",
                ]
        )
        #expect(try labels("en", query: ["n": "0"])["count"] == "0 restaurants")
        let set = try #require(load(files()).screenSet)
        #expect(set["home"]?.locale == "en")
        #expect(set["home"]?.translations.keys.sorted() == ["pt"])
        #expect(set.localization?.locales == ["en", "pt"])
    }

    @Test("a pseudo-locale makes accented, longer text from the default locale, placeholders intact")
    func pseudoLocale() throws {
        let files = files(["strings/locales.yaml": "default: en\npseudo: en-XA\n"])
        let labels = try labels("en-XA", query: ["name": "Ada"], files: files)
        #expect(labels["title"] == "[Hömé ·]")
        #expect(labels["greeting"] == "[Héļļö, Ada! ····]")
        #expect(try #require(load(files).screenSet).localization?.locales == ["en", "en-XA", "pt"])
    }

    @Test(
        "Accept-Language picks a locale: q-values, ties in order, wildcards, fallbacks from region to language, unknown locales",
        arguments: [
            (nil, "en"), ("", "en"), ("pt-BR,pt;q=0.9", "pt-BR"), ("pt-PT", "pt"), ("PT-br", "pt-BR"), ("pt", "pt"),
            ("fr, pt;q=0.5", "pt"), ("fr", "en"), ("*", "en"), ("fr, *;q=0.5, pt;q=0.4", "en"), ("pt;q=0, en;q=0.5", "en"),
            ("pt;q=0", "en"), ("en;q=0.5, pt;q=0.8", "pt"), ("en;q=0.8, pt;q=0.8", "en"), ("pt;q=abc, en", "en"),
            ("pt;q=2", "en"), ("zh-Hant-TW", "en"), ("es", "es-419"), ("es-MX", "es-419"), ("en-XA", "en-XA"), (";;,,", "en"),
            ("de-CH-x-phonebk, pt ; q = 0.7", "pt"), ("pt-BR-u-nu-latn", "pt-BR"),
            // Weights as RFC 9110 writes them, and nothing a number parser would also take.
            ("pt;q=0x1, en;q=0.5", "en"), ("pt;q=1e0, en;q=0.5", "en"), ("pt;q=.5, en;q=0.1", "en"), ("pt;q=1.000, en", "pt"),
            ("pt;q=1.001, en;q=0.1", "en"), ("pt;q=0.0001, en;q=0.1", "en"), ("pt;q=0.001", "pt"), ("pt;q=0., en;q=0.1", "en"),
            // What is not a language range is skipped before any work is done on it.
            ("pt-" + Array(repeating: "abc", count: 5_000).joined(separator: "-"), "en"), ("pt_BR, en", "en"), ("pt-BR-, pt", "pt"),
            ("pt-toolongsubtag", "en"), ("1pt, pt-BR", "pt-BR"),
        ] as [(String?, String)]
    )
    func negotiation(header: String?, expected: String) throws {
        var files = files()
        files["strings/pt-BR.yaml"] = files["strings/pt.yaml"]
        files["strings/es-419.yaml"] = files["strings/pt.yaml"]
        files["strings/locales.yaml"] = "default: en\npseudo: en-XA\n"
        let localization = try #require(load(files).screenSet?.localization)
        #expect(localization.negotiate(header) == expected)
    }

    @Test(
        "plural categories follow CLDR for each language",
        arguments: [
            ("en", [0: "other", 1: "one", 2: "other", 1.5: "other"]), ("pt", [0: "one", 1: "one", 1.5: "one", 2: "other"]),
            ("fr", [0: "one", 1: "one", 2: "other", 1_000_000: "many"]), ("de", [1: "one", 2: "other"]),
            ("ru", [1: "one", 21: "one", 11: "many", 2: "few", 22: "few", 12: "many", 5: "many", 1.5: "other"]),
            ("pl", [1: "one", 2: "few", 22: "few", 12: "many", 5: "many", 21: "many"]),
            ("cs", [1: "one", 3: "few", 5: "other", 1.5: "many"]),
            ("ar", [0: "zero", 1: "one", 2: "two", 3: "few", 11: "many", 100: "other"]), ("ja", [1: "other", 2: "other"]),
            ("xx", [1: "one", 2: "other"]),
        ] as [(String, [Double: String])]
    )
    func plurals(language: String, expected: [Double: String]) {
        let rules = LanguageRules(tag: language)
        for (number, category) in expected {
            #expect(rules.category(for: number).rawValue == category, "\(language) \(number)")
        }
    }

    @Test("a count no integer holds (NaN, infinity, 1e300, 2^63 and past) chooses a form: an upstream's data stops nothing")
    func outsideCounts() throws {
        // Each of these trapped in Int(_:) (an upstream's number, or a numeric string in its data).
        let counts: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 9.3e18, 1e21, 1e18, Double(Int.max), -Double(Int.max)]
        for language in ["en", "pt", "fr", "es", "da", "ru", "pl", "cs", "he", "ar", "ja"] {
            for count in counts { _ = LanguageRules(tag: language).category(for: count) }
        }
        // Past 10^18 the last digits still decide, as CLDR's rules read them (10^21 is exact in a Double).
        #expect(LanguageRules(tag: "fr").category(for: 1e21) == .many)
        #expect(LanguageRules(tag: "ru").category(for: 1e21) == .many)
        #expect(LanguageRules(tag: "ar").category(for: 1e21) == .other)
        #expect(LanguageRules(tag: "pl").category(for: 1e21 + 2_097_152) == .few, "ends in 152: 2, not 12")
        #expect(LanguageRules(tag: "en").category(for: 1e300) == .other)
        #expect(LanguageRules(tag: "en").category(for: .nan) == .other)
    }

    @Test("a table of thousands of keys the default one lacks is checked key by key: the first twenty get a did-you-mean, the rest none")
    func manyUnknownKeys() throws {
        // Each unknown key's hint read every key of the default table: a table this size took minutes.
        let count = 3_000
        let english = Self.tables["strings/en.yaml"]! + "\n" + (0..<count).map { "greeting_\($0): Hello" }.joined(separator: "\n")
        let portuguese = Self.tables["strings/pt.yaml"]! + "\n" + (0..<count).map { "greting_\($0): Olá" }.joined(separator: "\n")
        let result = load(files(["strings/en.yaml": english, "strings/pt.yaml": portuguese]))
        let unknown = result.diagnostics.filter { $0.message.contains("is not in Screens/strings/en.yaml") }
        #expect(unknown.count == count)
        #expect(unknown.prefix(20).allSatisfy { $0.message.contains("(did you mean \"greeting_") }, "\(unknown.prefix(20).map(\.message))")
        #expect(unknown.dropFirst(20).allSatisfy { !$0.message.contains("did you mean") })
    }

    @Test(
        "a message missing in one locale, mismatched placeholders or forms are errors at their line in the table",
        arguments: [
            (
                ["strings/pt.yaml": Self.tables["strings/pt.yaml"]!.replacingOccurrences(of: "\ntitle: Início", with: "")]
                    as [String: String?],
                "Screens/strings/en.yaml:6:1: error: title: message \"title\" is missing from Screens/strings/pt.yaml; every locale has every message, so add it there"
            ),
            (
                ["strings/pt.yaml": Self.tables["strings/pt.yaml"]! + "\ntitel: Início\n"],
                "Screens/strings/pt.yaml:7:1: error: titel: message \"titel\" is not in Screens/strings/en.yaml, the default locale's table; add it there or remove it here (did you mean \"title\"?)"
            ),
            (
                ["strings/pt.yaml": Self.tables["strings/pt.yaml"]!.replacingOccurrences(of: "Olá, {name}!", with: "Olá, {nome}!")],
                "Screens/strings/pt.yaml:1:1: error: greeting: placeholders {nome} here, but {name} in Screens/strings/en.yaml; a message has the same placeholders in every locale"
            ),
            (
                [
                    "strings/pt.yaml": Self.tables["strings/pt.yaml"]!.replacingOccurrences(
                        of: "rating: \"Nota {stars}\"", with: "rating: {one: \"Nota {stars}\", other: \"Notas {stars} {count}\"}")
                ],
                "Screens/strings/pt.yaml:5:1: error: rating: placeholders {count}, {stars} here, but {stars} in Screens/strings/en.yaml; a message has the same placeholders in every locale"
            ),
            (
                ["strings/ru.yaml": Self.tables["strings/pt.yaml"]!],
                "Screens/strings/ru.yaml:3:3: error: count: plural forms for ru need one, few, many, other; add few, many"
            ),
            (
                [
                    "strings/pt.yaml": Self.tables["strings/pt.yaml"]!.replacingOccurrences(
                        of: "  one: \"{count} restaurante\"", with: "  few: \"{count} restaurante\"")
                ],
                "Screens/strings/pt.yaml:3:3: error: count.few: \"few\" is not a plural category of pt; its categories are one, other"
            ),
            (
                ["strings/pt.yaml": Self.tables["strings/pt.yaml"]!.replacingOccurrences(of: "Olá, {name}!", with: "Olá, {name!")],
                "Screens/strings/pt.yaml:1:11: error: greeting: \"Olá, {name!\": a '{' is never closed; write {{ for a literal brace"
            ),
            (
                ["strings/locales.yaml": "default: fr\n"],
                "Screens/strings/locales.yaml:1:10: error: default: the default locale fr has no table; add Screens/strings/fr.yaml or name one of en, pt"
            ),
            (
                ["strings/en.yaml": nil],
                "Screens/strings/locales.yaml: error: several string tables and none for en: name the default locale in Screens/strings/locales.yaml, like default: es"
            ),
        ]
    )
    func tableErrors(changes: [String: String?], expected: String) throws {
        var files = files(changes)
        if changes.keys.contains("strings/en.yaml") {
            files["strings/es.yaml"] = files["strings/pt.yaml"]
            files["home.json"] = #"{"name": "home", "entry": true, "components": []}"#
        }
        let result = load(files)
        #expect(result.screenSet == nil)
        #expect(result.diagnostics.filter { $0.severity == .error }.map(\.description).contains(expected), "\(result.diagnostics.report)")
    }

    @Test(
        "$text in a screen is checked: the message exists, its placeholders are given exactly, it fits the field",
        arguments: [
            (
                #"{"value": {"$text": "titel"}}"#,
                #"message "titel" is not in the string tables; add it to strings/en.yaml and every other locale's (did you mean "title"?)"#
            ),
            (#"{"value": {"$text": "greeting"}}"#, #"message "greeting" needs {name}; add with: {name: source.path}"#),
            (
                #"{"value": {"$text": "greeting", "with": {"name": "q.name", "nme": "q.name"}}}"#,
                #"message "greeting" has no placeholder {nme}; its placeholders are {name}"#
            ),
            (#"{"value": {"$text": "greeting", "with": {"name": "nothing.here"}}}"#, #""nothing" is not a source of this screen"#),
            (
                #"{"value": {"$text": "greeting", "with": {"name": ["x"]}}}"#,
                "a placeholder's value is a binding path (like query.name) or a number, found array"
            ),
            (#"{"value": {"$text": "title", "default": "x"}}"#, #"unknown key "default" in a $text; allowed keys are $text, with"#),
        ]
    )
    func useErrors(content: String, message: String) throws {
        var files = files()
        files["home.json"] =
            #"{"name": "home", "entry": true, "sources": {"q": {"type": "request", "parameters": {"name": {}}}}, "components": [{"name": "label_component", "content": \#(content)}]}"#
        let error = try #require(onlyError(load(files)))
        #expect(error.message.contains(message), "\(error)")
        #expect(error.file == "Screens/home.json")
    }

    @Test("text in a field of another type, and $text without string tables, are errors")
    func misplaced() throws {
        var files = files()
        files["home.json"] =
            #"{"name": "home", "entry": true, "components": [{"name": "button_component", "content": {"title": "Go", "is_enabled": {"$text": "title"}, "action": {"identifier": "navigation", "content": {"interface_identifier": "home"}}}}]}"#
        #expect(try #require(onlyError(load(files))).message == "$text makes text, but this field is a bool")
        let bare = try #require(
            onlyError(
                load([
                    "home.json":
                        #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": {"$text": "title"}}}]}"#
                ])))
        #expect(bare.message == #"there are no string tables; add strings/en.yaml (one file per locale) with title: "...""#)
    }

    @Test("a message no screen uses is a warning in the default locale's table")
    func unusedMessage() throws {
        var files = files()
        files["strings/en.yaml"]! += "\nunused: Nobody reads this\n"
        files["strings/pt.yaml"]! += "\nunused: Ninguém lê isto\n"
        let result = load(files)
        #expect(result.screenSet != nil)
        #expect(
            result.diagnostics.map(\.description) == [
                #"Screens/strings/en.yaml:7:1: warning: unused: message "unused" is not used by any screen; use it ({$text: unused}) or remove it from every locale"#
            ]
        )
    }

    @Test("a message only a component that failed uses (a misspelt type) is not called unused: the component's error is the finding")
    func messageOfAFailedComponent() throws {
        var files = files()
        files["strings/en.yaml"]! += "\nfarewell: Bye\n"
        files["strings/pt.yaml"]! += "\nfarewell: Tchau\n"
        files["away.json"] =
            #"{"name": "away", "entry": true, "components": [{"name": "label_componnt", "content": {"value": {"$text": "farewell"}}}]}"#
        let result = load(files)
        #expect(result.diagnostics.contains { $0.severity == .error && $0.file == "Screens/away.json" }, "\(result.diagnostics.report)")
        #expect(!result.diagnostics.contains { $0.code == .unusedText }, "\(result.diagnostics.report)")
    }

    @Test("a screen without $text is not compiled per locale; one with it depends on the tables")
    func onlyScreensWithText() throws {
        var files = files()
        files["plain.json"] = #"{"name": "plain", "entry": true, "components": []}"#
        let set = try #require(load(files).screenSet)
        #expect(set["plain"]?.locale == nil)
        #expect(set["plain"]?.translations.isEmpty == true)
        #expect(set["plain"]?.dependencies == ["Screens/plain.json"])
        #expect(set["home"]?.dependencies == ["Screens/home.json", "Screens/strings/en.yaml", "Screens/strings/pt.yaml"])
    }
}
