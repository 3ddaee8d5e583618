import Foundation
@preconcurrency import Taksi
import TaksiServerClient

/// The next page of a list that continues, when the person reaches its end: the screen with the
/// longer list and its components, or nil when there is no more (or the page did not come: the
/// list stays as it was, and reaching its end again tries again).
@MainActor func more(
    of list: String, on screen: LoadedScreen, typed: [String: String] = [:]
) async -> (screen: LoadedScreen, components: [any Component])? {
    guard screen.hasMore(list) else { return nil }
    guard case .success(let page) = await AppServices.server.loadMore(list, on: screen) else { return nil }
    // page.screen's data holds every item so far: the client replaces the list's content with it.
    return (page.screen, await components(of: page.screen, typed: typed))
}
