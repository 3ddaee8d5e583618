import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// The catalog below whole components: `since` and `until` on fields, enum values and custom
/// actions, `required_since` on fields, `until` on components. Every variant is checked against
/// the app versions it reaches, with the client's rules deciding what is fatal: an enum value,
/// custom action or component some of them do not decode, or a required field left out, is an
/// error; a field some of them ignore is a warning.
@Suite("Versioned catalog")
struct VersionedCatalogTests {
    static let card = """
        {"name": "card", "fields": [
          {"name": "title", "type": "string", "required": true, "dynamic": true},
          {"name": "badge", "type": "string", "since": "2.3"},
          {"name": "subtitle", "type": "string", "required_since": "2.2"},
          {"name": "kind", "type": "enum", "values": ["casual", {"value": "fine_dining", "since": "2.3"}, {"value": "legacy", "until": "1.9"}]},
          {"name": "action", "type": "action"}
        ]}
        """
    static let actions = #"{"custom_actions": [{"identifier": "share", "since": "2.1"}, {"identifier": "rate"}]}"#

    /// A set with the card, the actions, and one screen whose version requirement is `version`
    /// (none when nil) and whose one card has `content` (a JSON object's members).
    static func load(version: String?, content: String, extra: [String: String] = [:]) -> ScreenSetLoad {
        let requirement = version.map { #""version": "\#($0)", "# } ?? ""
        var files = extra
        files["components/card.json"] = card
        files["actions.json"] = actions
        files["home.json"] =
            #"{"name": "home", "entry": true, \#(requirement)"components": [{"name": "card", "identifier": "c", "content": {\#(content)}}]}"#
        return TaksiScreensTests.load(files)
    }

    static let base = #""title": "T", "subtitle": "S", "kind": "casual""#

    @Test(
        "what a variant's versions decode, case by case",
        arguments: [
            // (requirement, content beyond the base, expected code or nil for none, message part)
            (
                ">= 2.0", #", "badge": "New""#, "ignored_field",
                #"field "badge" of card is decoded by apps since 2.3 only, but its version requirement ">= 2.0" admits 2.0: apps there ignore it"#
            ),
            (">= 2.3", #", "badge": "New""#, nil, ""),
            (nil, #", "badge": "New""#, "ignored_field", "it has no version requirement, so it is served to every app version"),
            (
                ">= 2.0", #", "kind": "fine_dining""#, "not_decoded",
                #""fine_dining" of card.kind is decoded by apps since 2.3 only, but its version requirement ">= 2.0" admits 2.0"#
            ),
            (">= 2.3", #", "kind": "fine_dining""#, nil, ""),
            (">= 2.0", #", "kind": "legacy""#, "not_decoded", #""legacy" of card.kind is decoded by apps until 1.9 only"#),
            ("< 1.9", #", "kind": "legacy""#, nil, ""),
            (
                ">= 2.0", #", "action": {"identifier": "share", "content": {}}"#, "not_decoded",
                #"custom action share is decoded by apps since 2.1 only, but its version requirement ">= 2.0" admits 2.0"#
            ),
            (">= 2.1", #", "action": {"identifier": "share", "content": {}}"#, nil, ""),
            (">= 2.0", #", "action": {"identifier": "rate", "content": {}}"#, nil, ""),
        ] as [(String?, String, String?, String)]
    )
    func table(requirement: String?, extra: String, code: String?, message: String) {
        // The base content with the extra members replacing or adding to it.
        var members = Self.base
        if extra.contains(#""kind""#) { members = members.replacingOccurrences(of: #", "kind": "casual""#, with: "") }
        let result = Self.load(version: requirement, content: members + extra)
        let found = result.diagnostics.filter { $0.code.rawValue != "unused_component" }
        if let code {
            #expect(found.map(\.code.rawValue) == [code], "\(result.diagnostics.report)")
            #expect(found.first?.message.contains(message) == true, "\(found.first?.message ?? "none")")
            #expect((result.screenSet == nil) == (code == "not_decoded"), "an error stops the set, a warning does not")
        } else {
            #expect(found.isEmpty, "\(result.diagnostics.report)")
        }
    }

    @Test("a field required from a version on must be supplied to every variant reaching it")
    func requiredSince() {
        let missing = Self.load(version: ">= 2.0", content: #""title": "T", "kind": "casual""#)
        #expect(missing.diagnostics.map(\.code) == [.notDecoded], "\(missing.diagnostics.report)")
        #expect(
            missing.diagnostics.first?.message.contains(
                #"field "subtitle" of card is required by apps since 2.2, but its version requirement ">= 2.0" admits 2.2"#) == true,
            "\(missing.diagnostics.report)")
        #expect(Self.load(version: "< 2.2", content: #""title": "T""#).diagnostics.isEmpty, "older apps do not require it")
    }

    @Test("an enum value in a collection's $each template, in a fragment and in an action's patch is checked too, at its own file")
    func everyPlace() {
        let collection = TaksiScreensTests.load([
            "components/card.json": Self.card,
            "home.json": """
            {"name": "home", "entry": true, "version": ">= 2.0",
             "sources": {"feed": {"type": "fixture", "value": {"items": [{"t": "a"}]}}},
             "components": [{"name": "collection_component", "identifier": "list", "content": {"component_name": "card", "values":
               {"$each": "feed.items", "template": {"title": {"$bind": "item.t"}, "subtitle": "s", "kind": "fine_dining"}}}}]}
            """,
        ])
        #expect(collection.diagnostics.map(\.code) == [.notDecoded], "\(collection.diagnostics.report)")
        #expect(collection.diagnostics.first?.path?.description == "components[0].content.values.template.kind")

        let fragment = TaksiScreensTests.load([
            "components/card.json": Self.card,
            "fragments/fancy.yaml": """
            components:
              - name: card
                identifier: c
                content: {title: T, subtitle: S, kind: fine_dining}
            """,
            "home.json": #"{"name": "home", "entry": true, "version": ">= 2.0", "components": [{"$fragment": "fancy"}]}"#,
        ])
        #expect(fragment.diagnostics.map(\.code) == [.notDecoded], "\(fragment.diagnostics.report)")
        #expect(fragment.diagnostics.first?.description.contains("fragments/fancy.yaml:4:") == true, "\(fragment.diagnostics.report)")

        let patch = TaksiScreensTests.load([
            "components/tag.json":
                #"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "dynamic": true, "values": ["a", {"value": "b", "since": "3.0"}]}]}"#,
            "home.json": """
            {"name": "home", "entry": true, "version": ">= 2.0",
             "components": [{"name": "tag", "identifier": "t", "content": {"kind": "a"}},
               {"name": "button_component", "identifier": "go", "content": {"title": "Go", "action": {"identifier": "executable", "content": {"name": "go"}}}}],
             "actions": {"go": {"answers": {"success": {"data": [{"identifier": "t", "content": {"kind": "b"}}]}}}}}
            """,
        ])
        #expect(patch.diagnostics.map(\.code) == [.notDecoded], "\(patch.diagnostics.report)")
        #expect(patch.diagnostics.first?.path?.description == "actions.go.answers.success.data[0].content.kind")
    }

    @Test("a fixture's value bound to an enum is checked against each app version the variant reaches")
    func fixtureValues() {
        let files = [
            "components/tag.json":
                #"{"name": "tag", "fields": [{"name": "kind", "type": "enum", "dynamic": true, "values": ["a", {"value": "b", "since": "3.0"}]}]}"#,
            "home.json": """
            {"name": "home", "entry": true, "version": ">= 2.0",
             "sources": {"feed": {"type": "fixture", "value": {"kind": "b"}}},
             "components": [{"name": "tag", "identifier": "t", "content": {"kind": {"$bind": "feed.kind"}}}]}
            """,
        ]
        let result = TaksiScreensTests.load(files)
        #expect(result.diagnostics.map(\.code) == [.notDecoded], "\(result.diagnostics.report)")
        #expect(result.diagnostics.first?.message.contains("does not decode in every app version the variant reaches") == true)
        // Beside a component whose data comes with the request: the fixture's entry is still checked.
        var mixed = files
        mixed["home.json"] = """
            {"name": "home", "entry": true, "version": ">= 2.0",
             "sources": {"feed": {"type": "fixture", "value": {"kind": "b"}}, "q": {"type": "request", "parameters": {"name": {"default": "x"}}}},
             "components": [{"name": "tag", "identifier": "t", "content": {"kind": {"$bind": "feed.kind"}}},
               {"name": "label_component", "identifier": "hi", "content": {"value": {"$bind": "q.name"}}}]}
            """
        let mixedResult = TaksiScreensTests.load(mixed)
        #expect(mixedResult.diagnostics.map(\.code) == [.notDecoded], "\(mixedResult.diagnostics.report)")
        #expect(mixedResult.diagnostics.first?.path?.description == "components[0]")
    }

    @Test("a component decoded until a version must not reach later ones")
    func componentUntil() {
        let old = #"{"name": "old_card", "until": "1.9", "fields": [{"name": "title", "type": "string", "required": true}]}"#
        func load(_ version: String) -> ScreenSetLoad {
            TaksiScreensTests.load([
                "components/old_card.json": old,
                "home.json":
                    #"{"name": "home", "entry": true, "version": "\#(version)", "components": [{"name": "old_card", "content": {"title": "x"}}]}"#,
            ])
        }
        let late = load(">= 1.0")
        #expect(late.diagnostics.map(\.code) == [.componentTooNew], "\(late.diagnostics.report)")
        #expect(late.diagnostics.first?.message.contains("old_card is decoded by apps until 1.9 only") == true)
        #expect(load("< 1.9").diagnostics.isEmpty)
    }

    @Test("versions in the catalog are read strictly")
    func declarations() {
        func errors(_ field: String) -> [String] {
            TaksiScreensTests.load([
                "components/card.json": #"{"name": "card", "fields": [\#(field)]}"#,
                "home.json": #"{"name": "home", "entry": true, "components": [{"name": "card", "content": {}}]}"#,
            ]).diagnostics.filter { $0.severity == .error }.map(\.message)
        }
        #expect(errors(#"{"name": "a", "type": "string", "since": "two"}"#).first?.contains("\"two\" is not a version") == true)
        #expect(
            errors(#"{"name": "a", "type": "string", "since": "2.3", "until": "2.0"}"#).first?.contains("until 2.0 is before since 2.3")
                == true)
        #expect(
            errors(#"{"name": "a", "type": "string", "required": true, "required_since": "2.0"}"#).first?.contains(
                "required in every version already") == true)
        #expect(
            errors(#"{"name": "a", "type": "enum", "values": [{"value": "x", "sine": "2.0"}]}"#).first?.contains("sine") == true,
            "an enum value object takes value, since, until and summary")
    }

    @Test("epochs cut the versions where the catalog changes; each has its catalog")
    func epochs() throws {
        let result = Self.load(version: nil, content: Self.base)
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        // Bounds: legacy until 1.9, share since 2.1, subtitle required since 2.2, badge and fine_dining since 2.3.
        #expect(set.epochs.count == 5)
        func kinds(_ version: String?) -> [String] {
            let catalog = set.catalog(for: version.flatMap(Version.init)).catalog
            guard case .enumeration(let values)? = catalog.schema(named: "card")?.field(named: "kind")?.type else { return [] }
            return values
        }
        #expect(kinds("1.0") == ["casual", "legacy"])
        #expect(kinds("2.0") == ["casual"])
        #expect(kinds("2.3") == ["casual", "fine_dining"])
        #expect(kinds("2.3.1-beta") == ["casual", "fine_dining"])
        #expect(kinds(nil) == ["casual", "legacy"], "a request that says no version gets the oldest epoch")
        let catalog = set.catalog(for: Version("2.2")).catalog
        #expect(catalog.schema(named: "card")?.field(named: "subtitle")?.isRequired == true)
        #expect(catalog.schema(named: "card")?.field(named: "badge") == nil)
        #expect(!catalog.customActions.contains("share") == false, "share is decoded since 2.1")
        #expect(!set.catalog(for: Version("2.0")).catalog.customActions.contains("share"))
    }
}

/// `client.yaml`: which client release each app version links; the built-ins follow the client's
/// own history (v1.0.0 had the label without kind and the collection, and navigation only).
@Suite("Client releases")
struct ClientReleasesTests {
    static let releases = "releases:\n  - {app_version: \"1.0\", client: \"1.0.0\"}\n  - {app_version: \"1.4\", client: \"3159c19\"}\n"

    static func load(version: String?, components: String, client: String = releases) -> ScreenSetLoad {
        let requirement = version.map { #""version": "\#($0)", "# } ?? ""
        return TaksiScreensTests.load([
            "client.yaml": client,
            "home.json": #"{"name": "home", "entry": true, \#(requirement)"components": \#(components)}"#,
            // The app's own executable of ``executable``.
            "actions.json": #"{"executables": [{"name": "go"}]}"#,
        ])
    }

    static let button =
        #"[{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "home"}}}}]"#
    static let executable =
        #"[{"name": "button_component", "content": {"title": "Go", "action": {"identifier": "executable", "content": {"name": "go"}}}}]"#
    static let label = #"[{"name": "label_component", "content": {"value": "Hi", "kind": "title"}}]"#

    @Test("a built-in the linked client lacks is checked like a custom component's since")
    func builtIns() {
        let everyone = Self.load(version: nil, components: Self.button)
        #expect(everyone.diagnostics.map(\.code) == [.componentTooNew], "\(everyone.diagnostics.report)")
        #expect(everyone.diagnostics.first?.message.contains("button_component is only known to apps since 1.4") == true)
        #expect(Self.load(version: ">= 1.4", components: Self.executable).diagnostics.isEmpty)
        let old = Self.load(version: "< 1.4", components: Self.label)
        #expect(old.diagnostics.map(\.code) == [.ignoredField], "v1.0.0's label has no kind: \(old.diagnostics.report)")
        let action = Self.load(version: "~> 1.5", components: Self.executable)
        #expect(action.diagnostics.isEmpty, "\(action.diagnostics.report)")
        let oldAction = Self.load(version: ">= 1.2", components: Self.executable)
        #expect(oldAction.diagnostics.map(\.code) == [.componentTooNew, .notDecoded], "\(oldAction.diagnostics.report)")
        let only = Self.load(version: nil, components: Self.button, client: "releases:\n  - {app_version: \"1.0\", client: \"1.0.0\"}\n")
        #expect(only.diagnostics.first?.message.hasPrefix("no app version decodes button_component") == true, "\(only.diagnostics.report)")
    }

    @Test("client.yaml is read strictly")
    func declarations() {
        let unknown = Self.load(version: nil, components: "[]", client: "releases:\n  - {app_version: \"1.0\", client: \"1.0\"}\n")
        #expect(unknown.diagnostics.first?.message.contains(#""1.0" is not a client release taksi-server knows; use one of 1.0.0"#) == true)
        let order = Self.load(
            version: nil, components: "[]",
            client: "releases:\n  - {app_version: \"2.0\", client: \"3159c19\"}\n  - {app_version: \"1.0\", client: \"1.0.0\"}\n")
        #expect(order.diagnostics.first?.message.contains("app versions go oldest first: 1.0 is not after 2.0") == true)
    }

    @Test("the manifest of an app linking v1.0.0 has no button, and a label without kind")
    func manifest() throws {
        let set = try #require(Self.load(version: nil, components: "[]").screenSet)
        let catalog = AppManifest(set, appVersion: try #require(Version("1.2"))).catalog
        #expect(catalog.schema(named: "button_component") == nil)
        #expect(catalog.schema(named: "label_component")?.field(named: "kind") == nil)
        #expect(AppManifest(set, appVersion: try #require(Version("1.4"))).catalog.schema(named: "button_component") != nil)
    }
}

/// A field whose type differs by app version: one declaration per version range.
@Suite("Field types by version")
struct FieldTypesByVersionTests {
    static let card = """
        {"name": "card", "fields": [
          {"name": "price", "type": "number", "until": "2.2", "dynamic": true},
          {"name": "price", "type": "string", "since": "2.3", "dynamic": true, "summary": "Formatted."}
        ]}
        """

    static func load(version: String, price: String, card: String = card) -> ScreenSetLoad {
        TaksiScreensTests.load([
            "components/card.json": card,
            "home.json":
                #"{"name": "home", "entry": true, "version": "\#(version)", "components": [{"name": "card", "identifier": "c", "content": {"price": \#(price)}}]}"#,
        ])
    }

    @Test("a literal must fit the declaration of every version the variant reaches")
    func literals() {
        #expect(Self.load(version: ">= 2.3", price: #""9 EUR""#).diagnostics.isEmpty)
        #expect(Self.load(version: "< 2.2", price: "9").diagnostics.isEmpty, "compiled against the number declaration")
        let both = Self.load(version: ">= 2.0", price: #""9 EUR""#)
        #expect(both.diagnostics.map(\.code) == [.notDecoded], "\(both.diagnostics.report)")
        #expect(
            both.diagnostics.first?.message.hasPrefix(
                #"field "price" of card is a number for apps until 2.2, and its version requirement ">= 2.0" admits 2.0, where this value does not decode"#
            )
                == true, "\(both.diagnostics.report)")
    }

    @Test("each version's catalog has its declaration; declarations must not overlap or lack versions")
    func catalogs() throws {
        let set = try #require(Self.load(version: ">= 2.3", price: #""x""#).screenSet)
        #expect(set.catalog(for: Version("2.0")).catalog.schema(named: "card")?.field(named: "price")?.type == .number)
        #expect(set.catalog(for: Version("2.4")).catalog.schema(named: "card")?.field(named: "price")?.type == .string)
        #expect(set.catalog(for: Version("2.4")).catalog.schema(named: "card")?.field(named: "price")?.summary == "Formatted.")
        let overlapping = Self.load(
            version: ">= 2.3", price: #""x""#,
            card:
                #"{"name": "card", "fields": [{"name": "price", "type": "number", "until": "2.4"}, {"name": "price", "type": "string", "since": "2.3"}]}"#
        )
        #expect(overlapping.diagnostics.first?.message.contains("both describe 2.3") == true, "\(overlapping.diagnostics.report)")
        let plain = Self.load(
            version: ">= 2.3", price: #""x""#,
            card: #"{"name": "card", "fields": [{"name": "price", "type": "number"}, {"name": "price", "type": "string"}]}"#)
        #expect(
            plain.diagnostics.first?.message.contains(#"give each declaration "since" or "until""#) == true, "\(plain.diagnostics.report)")
    }

    @Test("compat sees a retype said with since and until as compatible")
    func compat() {
        let before = #"{"name": "card", "fields": [{"name": "price", "type": "number", "dynamic": true}]}"#
        let changes = CatalogCompatibility.changes(
            base: (
                [
                    "components/card.json": Array(before.utf8),
                    "home.json": Array(#"{"name": "home", "entry": true, "components": []}"#.utf8),
                ], "base"
            ),
            head: (
                [
                    "components/card.json": Array(Self.card.utf8),
                    "home.json": Array(#"{"name": "home", "entry": true, "components": []}"#.utf8),
                ], "Screens"
            ))
        #expect(changes.allSatisfy { !$0.isBreaking }, "\(changes)")
        #expect(changes.map(\.message).contains("type changed from number to string (for apps since 2.3)"), "\(changes)")
    }
}
