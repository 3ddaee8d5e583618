import Foundation
import Taksi

/// Once, at start-up (after the FeatureBuilder of section 4): one client and one service for the
/// app, and a controller per screen shown.
@MainActor
func openHome(installID: String, onAppAction: @escaping (any Action, [any Component]) -> Void) async -> ScreenController {
    let client = TaksiServerClient(baseURL: URL(string: "https://screens.example.com")!, userID: installID)
    let service = TaksiService(apiClient: client)
    let home = ScreenController(client: client, service: service, path: "home", onAppAction: onAppAction)
    await home.open(query: "name=Ada")
    return home
}
