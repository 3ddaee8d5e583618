import Foundation
@preconcurrency import Taksi
import TaksiServerClient

/// What the whole app shares.
enum AppServices {
    /// Keep the builder alive: it installs the features the decoders use. Touch it once at start-up.
    @MainActor static let features = FeatureBuilder(features: [ScreensFeature()])
    /// The server, one for the app: every screen's requests and submits go through it. The screens
    /// it showed are kept (8 MiB in the caches folder) for when the network is not there.
    static let server = ScreenServer(
        baseURL: URL(string: "https://screens.example.com")!, userID: InstallID.current,
        keeping: .inCaches(maxBytes: 8 << 20, timeout: 6))
}
