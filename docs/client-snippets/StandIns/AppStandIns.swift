// Not shown in docs/client.md: what the app has and Linux does not. The SwiftUI views of the
// document are stood in for with the same names and initializers (Linux has no SwiftUI), and the
// app's own functions that its code calls are declared, so that everything around them compiles.
// ClientDocTests checks that the document shows every other file of docs/client-snippets.
import Taksi

#if !canImport(SwiftUI)
struct RestaurantCardView: ViewRepresentable {
    let content: RestaurantComponent.Content
    let onAction: (any Action) -> Void
}

struct StationRowView: ViewRepresentable {
    let content: StationComponent.Content
}

struct RepositoryRowView: ViewRepresentable {
    let content: RepositoryComponent.Content
    let onAction: (any Action) -> Void
}

struct NetworkRowView: ViewRepresentable {
    let content: NetworkComponent.Content
    let onAction: (any Action) -> Void
}

struct ServerScreenView: ViewRepresentable {
    let path: String
}
#endif

/// The app's own code, which docs/client.md calls by name.
func present(_ view: any ViewRepresentable) {}
func logIn(email: String, password: String) {}
func openRestaurant() {}
func showPasswordReset() {}
func reload() {}

enum InstallID {
    static let current = "install-id"
}
