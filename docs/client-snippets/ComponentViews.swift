import SwiftUI
import Taksi

// The views of the generated components: a <Type>View each, with init(content:onAction:).

struct RestaurantComponentView: View, ViewRepresentable {
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

struct StationComponentView: View, ViewRepresentable {
    let content: StationComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        HStack {
            Text(content.dynamicData.name)
            Spacer()
            Text("\(Int(content.dynamicData.freeBikes)) bikes")
        }
    }
}

struct RepositoryComponentView: View, ViewRepresentable {
    let content: RepositoryComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        Button {
            if let action = content.action { onAction(action) }    // opens repositories/<owner>/<repo>
        } label: {
            VStack(alignment: .leading) {
                Text(content.dynamicData.fullName).font(.headline)
                if let description = content.dynamicData.description { Text(description).font(.subheadline) }
                Text("★ \(Int(content.dynamicData.stars))")
            }
        }
    }
}

struct NetworkComponentView: View, ViewRepresentable {
    let content: NetworkComponent.Content
    let onAction: (any Action) -> Void

    var body: some View {
        Button {
            if let action = content.action { onAction(action) }
        } label: {
            VStack(alignment: .leading) {
                Text(content.dynamicData.name).font(.headline)
                Text([content.dynamicData.city, content.dynamicData.country].compactMap { $0 }.joined(separator: ", "))
            }
        }
    }
}
