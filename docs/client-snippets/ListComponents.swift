import Taksi

/// Screens/components/station_component.json: name, free_bikes, empty_slots (optional).
final class StationComponent: DecodableBaseComponent<StationComponent.Content, StationRowView>, DynamicComponent {
    final class Content: DynamicComponentContent, Decodable {
        struct DynamicData: DynamicComponentData {
            private enum CodingKeys: String, CodingKey {
                case name, freeBikes = "free_bikes", emptySlots = "empty_slots"
            }

            var name: String
            var freeBikes: Double      // "number" in the schema: decode as Double
            var emptySlots: Double?
        }

        var dynamicData: DynamicData

        required init(from decoder: any Decoder) throws {
            dynamicData = try DynamicData(from: decoder)
        }

        func update(using dynamicData: DynamicData) {
            self.dynamicData = dynamicData
        }
    }

    override func view(onAction: @escaping (any Action) -> Void) -> StationRowView? {
        StationRowView(content: content)
    }
}

/// Screens/components/repository_component.json: full_name, description and language (optional),
/// stars, url, and the action that opens the repository's screen.
final class RepositoryComponent: DecodableBaseComponent<RepositoryComponent.Content, RepositoryRowView>, DynamicComponent {
    final class Content: DynamicComponentContent, Decodable {
        struct DynamicData: DynamicComponentData {
            private enum CodingKeys: String, CodingKey {
                case fullName = "full_name", description, language, stars, url
            }

            var fullName: String
            var description: String?
            var language: String?
            var stars: Double
            var url: URL
        }

        private enum CodingKeys: String, CodingKey {
            case action
        }

        let action: (any Action)?
        var dynamicData: DynamicData

        required init(from decoder: any Decoder) throws {
            action = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(AnyAction.self, forKey: .action)?.action
            dynamicData = try DynamicData(from: decoder)
        }

        func update(using dynamicData: DynamicData) {
            self.dynamicData = dynamicData
        }
    }

    override func view(onAction: @escaping (any Action) -> Void) -> RepositoryRowView? {
        RepositoryRowView(content: content, onAction: onAction)
    }
}

/// Screens/components/network_component.json: name, city, country (optional), and the action
/// that opens the network's stations (bikes/stations/<id>).
final class NetworkComponent: DecodableBaseComponent<NetworkComponent.Content, NetworkRowView>, DynamicComponent {
    final class Content: DynamicComponentContent, Decodable {
        struct DynamicData: DynamicComponentData {
            var name: String
            var city: String
            var country: String?
        }

        private enum CodingKeys: String, CodingKey {
            case action
        }

        let action: (any Action)?
        var dynamicData: DynamicData

        required init(from decoder: any Decoder) throws {
            action = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(AnyAction.self, forKey: .action)?.action
            dynamicData = try DynamicData(from: decoder)
        }

        func update(using dynamicData: DynamicData) {
            self.dynamicData = dynamicData
        }
    }

    override func view(onAction: @escaping (any Action) -> Void) -> NetworkRowView? {
        NetworkRowView(content: content, onAction: onAction)
    }
}
