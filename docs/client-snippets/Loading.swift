import Taksi

/// Loads a screen: its skeleton (placeholders), then its data; again, past the caches, while the
/// server says the skeleton shown is outdated (`412`), so the data matches it. At most
/// `maximumTries` times over about 1.5 s: long enough for a fleet serving published screens to
/// agree (its replicas follow a publish within a second, and answer any published skeleton's
/// data anyway), short enough for a person waiting. On the main actor, with the components the
/// views show.
@MainActor
func load(_ screen: String, query: String? = nil, service: TaksiService, client: TaksiServerClient) async -> [any Component] {
    let maximumTries = 4
    var components: [any Component] = []
    for attempt in 0..<maximumTries {
        if attempt > 1 { try? await Task.sleep(nanoseconds: UInt64(attempt) * 250_000_000) }   // 0.5 s, then 0.75 s
        components = await service.fetchInitialComponents(for: screen) ?? []      // placeholders
        let path = query.map { "\(screen)?\($0)" } ?? screen
        components = await service.updateDynamicComponentsData(for: components, fetching: path) ?? components
        guard client.revisions.isOutdated(screen) else { break }                 // 412: again, fresh
    }
    return components
}
