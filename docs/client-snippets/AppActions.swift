@preconcurrency import Taksi

// LoginSuccessAction, for Screens/actions.json's "login_success", is generated (TaksiCatalog.swift).

/// What the app does itself; false for an executable it leaves to the screen's server actions.
@MainActor
func handle(_ action: any Action, on screen: [any Component]) -> Bool {
    switch action {
    case let navigation as any NavigationAction:
        present(navigation.view())                       // section 4
    case is LoginSuccessAction:
        // An app that logs in on its own: the text fields hold what the user typed.
        let fields = textFields(of: screen)
        let email = fields.first { $0.identifier == "email" }?.content.text ?? ""
        let password = fields.first { $0.identifier == "password" }?.content.text ?? ""
        logIn(email: email, password: password)
    case let executable as ExecutableAction:
        switch executable.name {
        case "open_restaurant": openRestaurant()
        case "reset_password": showPasswordReset()
        case "refresh": reload()
        default: return false                            // the screen's action: submitted to the server
        }
    default:
        break                                            // an action this release does not know
    }
    return true
}
