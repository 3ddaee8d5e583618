import SwiftUI
@preconcurrency import Taksi

/// What the app does itself: navigation. Executables are the screens' forms, sent to the server.
@MainActor
func handle(_ action: any Action, on screen: [any Component]) -> Bool {
    switch action {
    case let navigation as ScreenNavigationAction: Router.shared.path.append(navigation.path)
    case is ExecutableAction: return false
    default: break
    }
    return true
}

struct ProductRowComponentView: View, ViewRepresentable {
    let content: ProductRowComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        Button {
            if let action = content.action { onAction(action) }
        } label: {
            HStack {
                AsyncImage(url: content.dynamicData.imageURL).frame(width: 44, height: 44)
                VStack(alignment: .leading) {
                    Text(content.dynamicData.name).font(.headline)
                    Text(content.dynamicData.price)
                }
            }
        }
    }
}

struct CardComponentView: View, ViewRepresentable {
    let content: CardComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        VStack(alignment: .leading) {
            AsyncImage(url: content.dynamicData.imageURL).frame(height: 120)
            Text(content.dynamicData.title).font(.headline)
            if let subtitle = content.dynamicData.subtitle { Text(subtitle) }
        }
    }
}
