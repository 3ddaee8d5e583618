import Taksi

final class RestaurantComponent: DecodableBaseComponent<RestaurantComponent.Content, RestaurantCardView>, DynamicComponent {
    final class Content: DynamicComponentContent, Decodable {
        enum Kind: String, Decodable {
            case fastFood = "fast_food", casual, fineDining = "fine_dining"
        }

        /// The dynamic fields: placeholders in the skeleton, values from the data request.
        struct DynamicData: DynamicComponentData {
            private enum CodingKeys: String, CodingKey {
                case iconURL = "icon_url", title, rating
            }

            var iconURL: URL
            var title: String
            var rating: Double?
        }

        private enum CodingKeys: String, CodingKey {
            case kind, action
        }

        let kind: Kind
        let action: (any Action)?
        var dynamicData: DynamicData

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kind = try container.decode(Kind.self, forKey: .kind)
            action = try container.decodeIfPresent(AnyAction.self, forKey: .action)?.action
            dynamicData = try DynamicData(from: decoder)
        }

        func update(using dynamicData: DynamicData) {
            self.dynamicData = dynamicData
        }
    }

    override func view(onAction: @escaping (any Action) -> Void) -> RestaurantCardView? {
        RestaurantCardView(content: content, onAction: onAction)
    }
}
