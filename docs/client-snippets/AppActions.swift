import Taksi

// LoginSuccessAction, for Screens/actions.json's "login_success", is generated (TaksiCatalog.swift).

func handle(_ action: any Action, on screen: [any Component]) {
    switch action {
    case let navigation as any NavigationAction:
        present(navigation.view())                       // section 4
    case is LoginSuccessAction:
        // An app that logs in on its own: the text fields hold what the user typed.
        let fields = screen.compactMap { $0 as? TextFieldComponent<TextFieldComponentView> }
        let email = fields.first { $0.identifier == "email" }?.content.text ?? ""
        let password = fields.first { $0.identifier == "password" }?.content.text ?? ""
        logIn(email: email, password: password)
    case let executable as ExecutableAction:
        switch executable.name {
        case "open_restaurant": openRestaurant()
        case "reset_password": showPasswordReset()
        case "refresh": reload()
        default: break                                   // an action this release does not know
        }
    default:
        break
    }
}
