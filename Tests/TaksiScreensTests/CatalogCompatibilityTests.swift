import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// `taksi-server compat`'s judgement, one before/after catalog pair per kind of change: what can
/// break an app build already out, and what is said with a new since or until.
@Suite("Catalog compatibility")
struct CatalogCompatibilityTests {
    static let screen = #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "x"}}]}"#

    /// The changes from a card declared with `before` fields to one with `after` fields (JSON
    /// arrays' members), and from `actionsBefore` to `actionsAfter` custom actions.
    static func changes(
        _ before: String, _ after: String, actionsBefore: String = "", actionsAfter: String = "", released: String? = nil
    ) -> [CatalogChange] {
        func files(_ fields: String, _ actions: String) -> [String: [UInt8]] {
            [
                "home.json": Array(screen.utf8),
                "components/card.json": Array(#"{"name": "card", "fields": [\#(fields)]}"#.utf8),
                "actions.json": Array(#"{"custom_actions": [\#(actions)]}"#.utf8),
            ]
        }
        return CatalogCompatibility.changes(
            base: (files(before, actionsBefore), "base"), head: (files(after, actionsAfter), "Screens"),
            released: released.flatMap(Version.init))
    }

    static let title = #"{"name": "title", "type": "string", "required": true}"#
    static let kind = #"{"name": "kind", "type": "enum", "values": ["a", "b"]}"#

    @Test(
        "each kind of change, breaking or compatible",
        arguments: [
            // (before, after, breaking, the line's subject and message start)
            (title, "", true, "card.title: field removed, but apps already out decode it"),
            (
                title, #"{"name": "title", "type": "string", "required": true, "until": "2.2"}"#, false,
                "card.title: field removed (for apps after 2.2)"
            ),
            (title, #"{"name": "title", "type": "integer", "required": true}"#, true, "card.title: type changed from string to integer"),
            (title, #"{"name": "title", "type": "string"}"#, true, "card.title: no longer required"),
            (
                #"{"name": "title", "type": "string"}"#, title, true,
                "card.title: now required, but apps already out were built with it optional"
            ),
            (
                #"{"name": "title", "type": "string"}"#, #"{"name": "title", "type": "string", "required_since": "3.0"}"#, false,
                "card.title: now required (for apps since 3.0)"
            ),
            (title, #"{"name": "title", "type": "string", "required": true, "dynamic": true}"#, true, "card.title: now dynamic"),
            (
                kind, #"{"name": "kind", "type": "enum", "values": ["a"]}"#, true,
                #"card.kind: enum value "b" removed, but apps already out decode it"#
            ),
            (
                kind, #"{"name": "kind", "type": "enum", "values": ["a", {"value": "b", "until": "2.0"}]}"#, false,
                #"card.kind: enum value "b" removed (for apps after 2.0)"#
            ),
            (
                kind, #"{"name": "kind", "type": "enum", "values": ["a", "b", "c"]}"#, true,
                #"card.kind: enum value "c" added, so it may be sent to apps already out"#
            ),
            (
                kind, #"{"name": "kind", "type": "enum", "values": ["a", "b", {"value": "c", "since": "2.3"}]}"#, false,
                #"card.kind: enum value "c" added (for apps since 2.3)"#
            ),
            ("", #"{"name": "note", "type": "string"}"#, false, "card.note: field added (apps that do not know it ignore it)"),
            (
                "", #"{"name": "note", "type": "string", "required": true}"#, false,
                "card.note: required field added (apps that do not know it ignore it)"
            ),
        ] as [(String, String, Bool, String)]
    )
    func kinds(before: String, after: String, breaking: Bool, line: String) {
        let found = Self.changes(before, after)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.isBreaking == breaking, "\(found)")
        let said = "\(found.first?.subject ?? ""): \(found.first?.message ?? "")"
        #expect(said.hasPrefix(line), "\(found)")
    }

    @Test("components and custom actions removed, renamed or added")
    func componentsAndActions() {
        let renamed = CatalogCompatibility.changes(
            base: (["home.json": Array(Self.screen.utf8), "components/card.json": Array(#"{"name": "card", "fields": []}"#.utf8)], "base"),
            head: (
                ["home.json": Array(Self.screen.utf8), "components/tile.json": Array(#"{"name": "tile", "fields": []}"#.utf8)], "Screens"
            )
        )
        #expect(
            renamed.map(\.description) == [
                #"base/components/card.json:1:10: breaking: card: component removed, but apps already out decode it; to stop using it in new builds, keep it with "until": "<the last version that decodes it>" (if you renamed it, give the new name "since" too: apps already out do not know it)"#,
                #"Screens/components/tile.json:1:10: breaking: tile: component added, so screens may send it to apps already out, which do not know it and fail; give it "since": "<the first version that decodes it>""#,
            ])
        let actions = Self.changes(
            "", "", actionsBefore: #"{"identifier": "share"}, {"identifier": "rate"}"#,
            actionsAfter: #"{"identifier": "rate", "until": "1.9"}, {"identifier": "like", "since": "2.5"}"#)
        #expect(
            actions.map { "\($0.isBreaking) \($0.subject): \($0.message)" } == [
                #"true custom action share: removed, but apps already out decode it; keep it with "until": "<the last version that decodes it>""#,
                "false custom action rate: removed (for apps after 1.9)",
                "false custom action like: added (for apps since 2.5)",
            ])
    }

    @Test("--released makes a change said with since or until breaking when that version is out, with the fix to name a later one")
    func released() {
        let after = #"{"name": "kind", "type": "enum", "values": ["a", "b", {"value": "c", "since": "2.3"}]}"#
        #expect(Self.changes(Self.kind, after, released: "2.2").first?.isBreaking == false)
        let out = Self.changes(Self.kind, after, released: "2.4")
        #expect(out.first?.isBreaking == true)
        #expect(
            out.first?.message.hasSuffix("but --released 2.4 says apps since 2.3 may already be out; name a version after 2.4 instead")
                == true)
    }

    @Test("no change, no line; a change's location is in the working tree, a removal's in the base")
    func locations() {
        #expect(Self.changes(Self.kind, Self.kind).isEmpty)
        let removed = Self.changes(Self.kind, #"{"name": "kind", "type": "enum", "values": ["a"]}"#)
        #expect(removed.first?.location == "base/components/card.json:1:78")
        let added = Self.changes(Self.kind, #"{"name": "kind", "type": "enum", "values": ["a", "b", "c"]}"#)
        #expect(added.first?.location == "Screens/components/card.json:1:83")
    }
}
