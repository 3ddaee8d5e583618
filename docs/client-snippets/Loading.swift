import Taksi

/// Loads a screen: its skeleton (placeholders), then its data; once more, past the caches, when
/// the server says the skeleton shown is outdated (`412`), so the data matches it. On the main
/// actor, with the components the views show.
@MainActor
func load(_ screen: String, query: String? = nil, service: TaksiService, client: TaksiServerClient) async -> [any Component] {
    var components: [any Component] = []
    for _ in 0..<2 {
        components = await service.fetchInitialComponents(for: screen) ?? []      // placeholders
        let path = query.map { "\(screen)?\($0)" } ?? screen
        components = await service.updateDynamicComponentsData(for: components, fetching: path) ?? components
        guard client.revisions.isOutdated(screen) else { break }                 // 412: once more, fresh
    }
    return components
}
