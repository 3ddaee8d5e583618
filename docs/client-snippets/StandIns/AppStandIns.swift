// Not shown in docs/client.md: the app's own code, which the document's code calls by name
// (docs/client.md says they stand for your app's functions). Declared here so that everything
// around them compiles. ClientDocTests checks that the document shows every other file of
// docs/client-snippets.
import SwiftUI
import Taksi

func present(_ view: any ViewRepresentable) {}
func logIn(email: String, password: String) {}
func openRestaurant() {}
func showPasswordReset() {}
func reload() {}

enum InstallID {
    static let current = "install-id"
}

/// The app's image loader (AsyncImage needs iOS 15).
struct RemoteImage: View {
    let url: URL

    var body: some View {
        EmptyView()
    }
}
