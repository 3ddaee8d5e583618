import Foundation
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// A skeleton names the screens its navigation opens, as `Link: <...>; rel=prefetch` hints.
@Suite("Prefetch hints")
struct PrefetchLinkTests {
    static func button(_ identifier: String, to target: String) -> String {
        #"{"name": "button_component", "identifier": "\#(identifier)", "content": {"title": "Go", "action": {"identifier": "navigation", "content": {"interface_identifier": "\#(target)"}}}}"#
    }

    @Test(
        "the targets its buttons name, in order, once each, never itself, at most 8, as written (percent-encoded); none without navigation")
    func hints() async throws {
        var components = [Self.button("self", to: "start"), Self.button("a", to: "menu"), Self.button("b", to: "menu")]
        components.append(Self.button("cafe", to: "item/caf%C3%A9"))
        components += (1...9).map { Self.button("n\($0)", to: "item/\($0)") }
        let files: [String: String] = [
            "start.json": #"{"name": "start", "entry": true, "components": [\#(components.joined(separator: ", "))]}"#,
            "menu.json": #"{"name": "menu", "components": [{"name": "label_component", "identifier": "t", "content": {"value": "Menu"}}]}"#,
            "item.json":
                #"{"name": "item/{id}", "parameters": {"id": {"type": "string"}}, "components": [{"name": "spacer_component", "identifier": "s", "content": {}}]}"#,
        ]
        let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) })
        let set = try #require(load.screenSet, "\(load.diagnostics)")
        let application = buildApplication(configuration: .forTests(), screenSet: set, logger: testLogger("prefetch"))
        let start = try await application.execute(uri: "/screens/start")
        let expected = ["</screens/menu>", "</screens/item/caf%C3%A9>"] + (1...6).map { "</screens/item/\($0)>" }
        #expect(start.header("Link") == expected.map { $0 + "; rel=prefetch" }.joined(separator: ", "))
        #expect(try await application.execute(uri: "/screens/menu").header("Link") == nil)
        let tag = try #require(start.header("ETag"))
        let revalidated = try await application.execute(uri: "/screens/start", headers: [("If-None-Match", tag)])
        #expect(revalidated.status == .notModified)
        #expect(revalidated.header("Link") == start.header("Link"), "a revalidated skeleton says the same")
    }
}
