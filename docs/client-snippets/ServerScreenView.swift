import SwiftUI
import Taksi

/// A whole server-driven screen: the skeleton at once, then its data.
struct ServerScreenView: View, ViewRepresentable {
    let path: String
    @State private var components: [any Component] = []

    var body: some View {
        ScrollView {
            VStack(alignment: .leading) {
                ForEach(components, id: \.identifier) { component in
                    component.view(onAction: { action in handle(action, on: components) })?.asView()
                }
            }
        }
        .onAppear {
            Task {
                components = await AppServices.taksi.fetchInitialComponents(for: path) ?? []
                components = await AppServices.taksi.updateDynamicComponentsData(for: components, fetching: path) ?? components
            }
        }
    }
}
