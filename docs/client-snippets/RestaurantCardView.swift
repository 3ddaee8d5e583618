import SwiftUI
import Taksi

struct RestaurantCardView: View, ViewRepresentable {
    let content: RestaurantComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        Button {
            if let action = content.action { onAction(action) }
        } label: {
            HStack {
                RemoteImage(url: content.dynamicData.iconURL)    // your image loader (AsyncImage needs iOS 15)
                    .frame(width: 44, height: 44)
                VStack(alignment: .leading) {
                    Text(content.dynamicData.title).font(.headline)
                    if let rating = content.dynamicData.rating { Text("★ \(rating, specifier: "%.1f")") }
                }
            }
        }
    }
}
