import Foundation
import Observation
import SwiftUI
import Taksi
import TaksiServerClient

/// The tutorial's shop, from the taksi-server the scheme's environment names (`TAKSI_SERVER_URL`),
/// else this Mac's (`http://localhost:8080`, which a simulator reaches).
struct ShopApp: App {
    init() {
        _ = AppServices.features
    }

    var body: some Scene {
        WindowGroup {
            NavigationStack(path: Bindable(Router.shared).path) {
                ServerScreenView(path: "products")
                    .navigationDestination(for: String.self) { path in ServerScreenView(path: path) }
            }
        }
    }
}

#if os(iOS) || os(macOS)
@main
enum Main {
    @MainActor static func main() { ShopApp.main() }
}
#endif

enum AppServices {
    static let server = ScreenServer(baseURL: serverURL, userID: installID)
    /// Keep the builder alive: it installs the features the decoders use.
    @MainActor static let features = FeatureBuilder(features: [ScreensFeature()])

    static var serverURL: URL {
        ProcessInfo.processInfo.environment["TAKSI_SERVER_URL"].flatMap(URL.init(string:)) ?? URL(string: "http://localhost:8080")!
    }

    /// A random id kept for this install: the user of experiments.
    static var installID: String {
        if let id = UserDefaults.standard.string(forKey: "taksi-install-id") { return id }
        let id = UUID().uuidString
        UserDefaults.standard.set(id, forKey: "taksi-install-id")
        return id
    }
}

/// The screens pushed on the navigation stack, by path.
@Observable @MainActor
final class Router {
    static let shared = Router()
    var path: [String] = []
}
