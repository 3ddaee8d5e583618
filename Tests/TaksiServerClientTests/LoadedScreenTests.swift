import Foundation
import TaksiServerClient
import Testing

/// What an app's own tests and previews make without a server (a plain import, as an app has).
@Suite("A loaded screen made by hand")
struct LoadedScreenTests {
    @Test("an app makes a screen for its tests and previews: the skeleton's identifiers, the data or why there is none")
    func madeByHand() throws {
        let skeleton = Data(
            #"{"components": [{"name": "label_component", "identifier": "title", "content": {"value": "Hi"}}, {"name": "form_component", "identifier": "signup", "content": {"fields": [{"name": "text_field_component", "identifier": "email", "content": {}}]}}]}"#
                .utf8)
        let shown = LoadedScreen(
            path: ScreenPath("home?name=Ada"), skeleton: skeleton, data: .success(Data(#"{"interface_data": []}"#.utf8)))
        #expect(shown.identifiers == ["title", "signup", "email"])
        #expect(shown.path.description == "home?name=Ada" && shown.passes == 1 && shown.degraded.isEmpty && shown.revision == nil)
        let failed = LoadedScreen(
            path: ScreenPath("home"), skeleton: skeleton, revision: "r1", data: .failure(.invalidRequest("no data")), degraded: ["feed"])
        #expect(failed != shown)
        #expect(failed.revision == "r1" && failed.degraded == ["feed"])
        guard case .failure(.invalidRequest(let why)) = failed.data else { throw Failure() }
        #expect(why == "no data")
    }

    struct Failure: Error {}
}
