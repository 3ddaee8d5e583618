@preconcurrency import Taksi

/// Opens any server screen by name.
final class ScreenNavigationAction: NavigationAction {
    let path: String

    init(path: String) {
        self.path = path
    }

    func view() -> any ViewRepresentable {
        ServerScreenView(path: path)
    }
}

/// What the app registers: the example screens' components and actions, and navigation to any screen.
struct ScreensFeature: NavigableFeatureProtocol {
    // The catalog's components and custom actions: the generated TaksiCatalog.swift decodes them.
    func component(from decoder: any Decoder, withName name: String) -> (any Component)? {
        TaksiCatalog.component(from: decoder, withName: name)
    }

    func action(from decoder: any Decoder, withIdentifier identifier: String) -> (any Action)? {
        TaksiCatalog.action(from: decoder, withIdentifier: identifier)
    }

    func navigationAction(from decoder: any Decoder, withInterfaceIdentifier interfaceIdentifier: String) -> (any NavigationAction)? {
        ScreenNavigationAction(path: interfaceIdentifier)
    }
}
