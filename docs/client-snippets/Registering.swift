import Foundation
@preconcurrency import Taksi
import TaksiServerClient

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

enum AppServices {
    /// Keep the builder alive: it installs the features the decoders use. Touch it once at start-up.
    @MainActor static let features = FeatureBuilder(features: [ScreensFeature()])
    /// The server, one for the app: every screen's requests and submits go through it.
    static let server = TaksiServer(baseURL: URL(string: "https://screens.example.com")!, userID: InstallID.current)
}
