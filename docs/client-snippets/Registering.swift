import Foundation
import Taksi

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
    func component(from decoder: any Decoder, withName name: String) -> (any Component)? {
        switch name {
        case "restaurant_component": return try? RestaurantComponent(from: decoder)
        case "station_component": return try? StationComponent(from: decoder)
        case "repository_component": return try? RepositoryComponent(from: decoder)
        case "network_component": return try? NetworkComponent(from: decoder)
        default: return nil
        }
    }

    func action(from decoder: any Decoder, withIdentifier identifier: String) -> (any Action)? {
        switch identifier {
        case "login_success": return try? LoginSuccessAction(from: decoder)
        default: return nil
        }
    }

    func navigationAction(from decoder: any Decoder, withInterfaceIdentifier interfaceIdentifier: String) -> (any NavigationAction)? {
        ScreenNavigationAction(path: interfaceIdentifier)
    }
}

enum AppServices {
    /// Keep the builder alive: it installs the features the decoders use.
    static let features = FeatureBuilder(features: [ScreensFeature()])
    static let taksi = TaksiService(
        apiClient: TaksiServerClient(baseURL: URL(string: "https://screens.example.com")!, userID: InstallID.current)
    )
}
