import Taksi

/// The screen on show and what its buttons do: on the main actor, like the views that call it.
@MainActor
final class ScreenController {
    let client: TaksiServerClient
    let service: TaksiService
    /// The screen's path, like "login" or "bikes/stations/velib".
    let path: String
    private(set) var components: [any Component] = []
    /// What the app does with every other action: navigation, custom actions, its own
    /// executables (section 3's `handle(_:on:)`).
    let onAppAction: (any Action, [any Component]) -> Void
    /// Tells the person that the form changed under them and nothing was sent (an alert, a
    /// banner): the screen shown is the new one.
    var onScreenChanged: () -> Void = {}

    init(
        client: TaksiServerClient, service: TaksiService, path: String,
        onAppAction: @escaping (any Action, [any Component]) -> Void
    ) {
        self.client = client
        self.service = service
        self.path = path
        self.onAppAction = onAppAction
    }

    func open(query: String? = nil) async {
        components = await load(path, query: query, service: service, client: client)
    }

    /// The `onAction` of the screen's views.
    func handle(_ action: any Action) {
        // The server's actions and their inputs, as the screen files declare them (login.json:
        // submit; newsletter.yaml: subscribe).
        let serverActions: [String: Set<String>] = ["submit": ["email", "password"], "subscribe": ["email", "frequency"]]
        guard let executable = action as? ExecutableAction, let inputs = serverActions[executable.name] else {
            return onAppAction(action, components)
        }
        Task {
            let submitted = await client.submit(executable.name, inputs: inputs, on: path, components: components, service: service)
            components = submitted.components                                     // error labels filled, or cleared
            if submitted.screenChanged { onScreenChanged() }                      // nothing sent: ask to check and send again
            if let then = submitted.then { handle(then) }                         // the login's navigation to home
        }
    }
}
