import SwiftUI
@preconcurrency import Taksi
import TaksiServerClient

/// A whole server-driven screen: loads it, shows it, and sends its forms.
struct ServerScreenView: View, ViewRepresentable {
    let path: String
    @State private var screen: LoadedScreen?
    @State private var shown: [any Component] = []
    @State private var notice: String?

    var body: some View {
        ScrollView {
            VStack(alignment: .leading) {
                if let notice { Text(notice) }
                ForEach(shown, id: \.identifier) { component in
                    component.view(onAction: { action in Task { await run(action) } })?.asView()
                }
            }
        }
        .onAppear { Task { await open() } }
    }

    @MainActor private func open() async {
        switch await AppServices.server.load(path) {
        case .success(let loaded):
            (screen, shown) = (loaded, await components(of: loaded))
            // A kept screen (ScreenServer's keeping), shown because the server could not be reached.
            notice = loaded.isStale ? "You are offline: this is the screen as it was last shown." : nil
        case .failure: notice = "This screen could not be loaded. Check your connection and try again."
        }
    }

    /// A tap's action: the app's own first (section 3), else the screen's server action.
    @MainActor private func run(_ action: any Action) async {
        guard !handle(action, on: shown), let executable = action as? ExecutableAction, let screen else { return }
        let typed = Dictionary(textFields(of: shown).map { ($0.identifier, $0.content.text) }) { $1 }
        switch await AppServices.server.submit(executable.name, inputs: typed.filter { !$0.value.isEmpty }, on: screen) {
        case .success(let answer):
            // The answer patches the screen (error labels filled, or cleared), then its next action.
            (self.screen, shown, notice) = (answer.screen, await components(of: answer.screen, typed: typed, patch: answer.patch), nil)
            if let then = answer.then, let next = try? JSONDecoder().decode(AnyAction.self, from: then) { await run(next.action) }
        case .failure(.screenChanged(let changed)):
            (self.screen, shown) = (changed, await components(of: changed, typed: typed))
            notice = "This form changed. Check it and send it again."
        case .failure(let error) where error.code == "action_not_found":
            break  // an action neither this release nor the server knows
        case .failure:
            notice = "That did not go through. Check your connection and try again."
        }
    }
}
