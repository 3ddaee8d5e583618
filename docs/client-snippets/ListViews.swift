import SwiftUI
import Taksi

struct StationRowView: View, ViewRepresentable {
    let content: StationComponent.Content

    var body: some View {
        HStack {
            Text(content.dynamicData.name)
            Spacer()
            Text("\(Int(content.dynamicData.freeBikes)) bikes")
        }
    }
}

struct RepositoryRowView: View, ViewRepresentable {
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

struct NetworkRowView: View, ViewRepresentable {
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
