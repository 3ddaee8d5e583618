import Foundation
@preconcurrency import Taksi
import TaksiServerClient

/// Serves the Taksi client what the library fetched: the client asks by name, the bytes are here.
struct FetchedScreen: TaksiAPIClient {
    let screen: LoadedScreen
    /// A submit's answer, applied after the data.
    var patch: Data?

    func fetchInterface(for path: String) async -> Interface? {
        try? JSONDecoder().decode(Interface.self, from: screen.skeleton)
    }

    func fetchInterfaceData(for path: String, using decoder: JSONDecoder) async -> InterfaceData? {
        // The decoder comes from TaksiService: it knows the skeleton's dynamic components.
        guard let body = path == "patch" ? patch : try? screen.data.get() else { return nil }
        return try? decoder.decode(InterfaceData.self, from: body)
    }
}

/// A loaded screen's components: made by the client here, off the main actor, and handed over
/// whole, so the views never show components the client is still updating. `typed` puts back
/// what the person typed in the form's fields; `patch` is a submit's answer.
func components(of screen: LoadedScreen, typed: [String: String] = [:], patch: Data? = nil) async -> sending [any Component] {
    let service = TaksiService(apiClient: FetchedScreen(screen: screen, patch: patch))
    var components = await service.fetchInitialComponents(for: "skeleton") ?? []
    for field in textFields(of: components) { field.content.text = typed[field.identifier] ?? "" }
    components = await service.updateDynamicComponentsData(for: components, fetching: "data") ?? components
    if patch != nil { components = await service.updateDynamicComponentsData(for: components, fetching: "patch") ?? components }
    return components
}

/// The form's fields.
func textFields(of components: [any Component]) -> [TextFieldComponent<TextFieldComponentView>] {
    components.compactMap { $0 as? TextFieldComponent<TextFieldComponentView> }
}

/// The action a deep link opens (run it like a tap's), or nil when the server has no screen for it.
func action(for link: URL) async -> (any Action)? {
    guard case .success(let resolved) = await AppServices.server.resolve(link) else { return nil }
    return (try? JSONDecoder().decode(AnyAction.self, from: resolved.action))?.action
}
