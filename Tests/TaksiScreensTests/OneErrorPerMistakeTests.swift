import Foundation
import TaksiSchema
import Testing

@testable import TaksiScreens

/// One mistake, one error: what depends on a file that failed is not reported on top of it.
@Suite("One error per mistake")
struct OneErrorPerMistakeTests {
    static let card = #"{"name": "card_component", "fields": [{"name": "title", "type": "string", "required": true, "dynamic": false}]}"#
    static let screen = #"""
        {"name": "home", "entry": true, "components": [
          {"name": "card_component", "identifier": "one", "content": {"title": "A"}},
          {"name": "collection_component", "identifier": "list", "content": {"component_name": "card_component", "values": [{"title": "B"}]}}
        ]}
        """#

    @Test(
        "a component file that fails is its only error: the screens using the type are not told to declare it",
        arguments: [
            (
                "a syntax error", card.replacingOccurrences(of: #""title", "type""#, with: #""title" "type""#),
                "components/card_component.json:1:"
            ),
            ("a bad name", card.replacingOccurrences(of: "card_component", with: "card-component"), "components/card_component.json:1:"),
            (
                "a bad field type", card.replacingOccurrences(of: #""type": "string""#, with: #""type": "text""#),
                "components/card_component.json:1:"
            ),
        ])
    func brokenComponentFile(mistake: String, component: String, place: String) {
        let load = ScreenSetLoader.load(files: [
            "home.json": Array(Self.screen.utf8), "components/card_component.json": Array(component.utf8),
        ])
        let errors = load.diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(mistake): \(load.diagnostics.report)")
        #expect(errors.first?.description.contains(place) == true, "\(mistake): \(load.diagnostics.report)")
        #expect(!load.diagnostics.report.contains("declare it in components/"), "\(mistake)")
    }

    @Test("without the file at all, a use is still the error, with the fix")
    func undeclared() {
        let load = ScreenSetLoader.load(files: ["home.json": Array(Self.screen.utf8)])
        #expect(load.diagnostics.filter { $0.severity == .error }.count == 2, "\(load.diagnostics.report)")
        #expect(load.diagnostics.report.contains("declare it in components/"))
    }
}
