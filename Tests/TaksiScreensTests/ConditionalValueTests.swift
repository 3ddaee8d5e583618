import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// `$when`: a value chosen by comparing data (equal, in a set, above, below, present or absent),
/// each value it may give type-checked at load like any other.
@Suite("Conditional values")
struct ConditionalValueTests {
    static let row = """
        {"name": "row", "fields": [{"name": "name", "type": "string", "required": true, "dynamic": true},
          {"name": "badge", "type": "string", "dynamic": true},
          {"name": "tone", "type": "enum", "values": ["plain", "alert", {"value": "glow", "since": "3.0"}], "dynamic": true}]}
        """
    static let items =
        #"[{"name": "A", "stock": 0, "rating": 4.8, "state": "new"}, {"name": "B", "stock": 3, "rating": 4.1, "state": "used"}, {"name": "C", "stock": null}]"#

    /// A set whose one collection's `badge` is `badge` (a JSON value), over the items above.
    static func load(badge: String, tone: String = #""plain""#, version: String? = nil) -> ScreenSetLoad {
        let requirement = version.map { #""version": "\#($0)", "# } ?? ""
        return TaksiScreensTests.load([
            "components/row.json": row,
            "home.json": """
            {"name": "home", "entry": true, \(requirement)"sources": {"feed": {"type": "fixture", "value": {"items": \(items)}}},
             "components": [{"name": "collection_component", "identifier": "rows", "content": {"component_name": "row", "values":
               {"$each": "feed.items", "as": "item", "template": {"name": {"$bind": "item.name"}, "badge": \(badge), "tone": \(tone)}}}}]}
            """,
        ])
    }

    /// The badge of each item, nil where it was left out.
    static func badges(_ badge: String) throws -> [String?] {
        let result = load(badge: badge)
        let data = try #require(result.screenSet?["home"]?.staticData, "\(result.diagnostics.report)")
        let values = data.entries.first?.content["values"]?.arrayValue ?? []
        return values.map { $0["badge"]?.stringValue }
    }

    @Test(
        "each comparison, in order, with else and without",
        arguments: [
            (#"{"$when": [{"if": {"value": "item.stock", "equals": 0}, "then": "Sold out"}], "else": " "}"#, ["Sold out", " ", " "]),
            (#"{"$when": [{"if": {"value": "item.state", "one_of": ["new", "mint"]}, "then": "New"}], "else": "-"}"#, ["New", "-", "-"]),
            (
                #"{"$when": [{"if": {"value": "item.rating", "above": 4.5}, "then": "Top"}, {"if": {"value": "item.rating", "below": 4.5}, "then": "OK"}], "else": "?"}"#,
                ["Top", "OK", "?"]
            ),
            (
                #"{"$when": [{"if": {"value": "item.stock", "present": false}, "then": "Unknown"}], "else": {"$template": "{item.stock} left"}}"#,
                ["0 left", "3 left", "Unknown"]
            ),
            (
                #"{"$when": [{"if": {"value": "item.rating", "present": true}, "then": {"$template": "★ {item.rating}"}}]}"#,
                ["★ 4.8", "★ 4.1", nil]
            ),
            (
                #"{"$when": [{"if": {"value": "item.stock", "equals": "0"}, "then": "text zero"}], "else": "strict"}"#,
                ["strict", "strict", "strict"]
            ),
        ] as [(String, [String?])]
    )
    func comparisons(badge: String, expected: [String?]) throws {
        #expect(try Self.badges(badge) == expected)
    }

    @Test(
        "mistakes are located errors",
        arguments: [
            (#"{"$when": [{"if": {"value": "item.stock", "equals": 0}, "then": 5}]}"#, "$when[0].then: expected a string, found number 5"),
            (
                #"{"$when": [{"if": {"value": "item.stock", "above": "4"}, "then": "x"}]}"#,
                "$when[0].if.above: above takes a number, like 4.5"
            ),
            (
                #"{"$when": [{"if": {"value": "item.stock", "one_of": 3}, "then": "x"}]}"#,
                "$when[0].if.one_of: one_of takes a non-empty list of values"
            ),
            (
                #"{"$when": [{"if": {"value": "item.stock", "above": 1, "below": 3}, "then": "x"}]}"#,
                "$when[0].if: a test compares the value one way"
            ),
            (
                #"{"$when": [{"if": {"value": "stock.count", "equals": 0}, "then": "x"}]}"#,
                #"$when[0].if.value: "stock" is not a source of this screen"#
            ),
            (#"{"$when": [{"if": {"value": "item.stock", "equals": 0}}]}"#, #"$when[0].then: a $when branch needs a "then" key"#),
            (#"{"$when": []}"#, "$when: $when takes a non-empty list"),
            (#"{"$wen": []}"#, #"unknown binding "$wen"; use $bind, $template, $each, $text or $when (did you mean "$when"?)"#),
        ] as [(String, String)]
    )
    func mistakes(badge: String, message: String) {
        let result = Self.load(badge: badge)
        #expect(result.screenSet == nil)
        #expect(result.diagnostics.contains { $0.description.contains(message) }, "\(result.diagnostics.report)")
    }

    @Test("an enum value a $when may give is checked against the app versions the variant reaches")
    func versions() {
        let tone = #"{"$when": [{"if": {"value": "item.stock", "equals": 0}, "then": "glow"}], "else": "plain"}"#
        let old = Self.load(badge: #""x""#, tone: tone, version: ">= 2.0")
        #expect(old.diagnostics.map(\.code) == [.notDecoded], "\(old.diagnostics.report)")
        #expect(old.diagnostics.first?.path?.description.hasSuffix("tone.$when[0].then") == true)
        #expect(Self.load(badge: #""x""#, tone: tone, version: ">= 3.0").diagnostics.isEmpty)
    }
}
