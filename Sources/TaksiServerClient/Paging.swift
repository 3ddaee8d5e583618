public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A list that continued by one page: the screen with the longer list, and the patch to hand the
/// client for it.
public struct ListPage: Sendable, Equatable {
    /// The screen with the list holding every item so far in its ``LoadedScreen/data``, and the
    /// token for the page after this one, when there is one: what the next
    /// ``ScreenServer/loadMore(_:on:)`` starts from.
    public let screen: LoadedScreen
    /// The list's component identifier.
    public let list: String
    /// `{"interface_data": [ENTRY]}`: the list's entry with every item so far. The client replaces
    /// a component's content with its data entry's, so this shows the longer list.
    public let patch: Data
    /// How many items this page added.
    public let added: Int
    /// Whether the server gave a token for another page.
    public let hasMore: Bool
}

extension LoadedScreen {
    /// Whether the list `identifier` has another page to load (its data gave a page token).
    public func hasMore(_ identifier: String) -> Bool {
        pageEntry(identifier)?["token"] is String
    }

    /// The identifiers of the lists whose data gave a page token, sorted.
    public var listsWithMore: [String] {
        guard case .success(let body) = data, let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let pages = object["pages"] as? [String: Any]
        else { return [] }
        return pages.filter { ($0.value as? [String: Any])?["token"] is String }.keys.sorted()
    }

    /// The list's entry of the data's `"pages"`: `{"token", "next", "field"}`.
    func pageEntry(_ identifier: String) -> [String: Any]? {
        guard case .success(let body) = data, let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return nil
        }
        return (object["pages"] as? [String: Any])?[identifier] as? [String: Any]
    }
}

extension ScreenServer {
    /// Loads the next page of the list `identifier` of `screen` and gives the screen with the
    /// longer list: the items so far and the page's, one data entry, as the client needs (it
    /// replaces a component's content; it has no "append").
    ///
    /// ```swift
    /// guard screen.hasMore("results") else { return }
    /// switch await server.loadMore("results", on: screen) {
    /// case .success(let page):
    ///     screen = page.screen
    ///     await taksi.updateDynamicComponentsData(with: page.patch)   // the longer list
    /// case .failure(let error):
    ///     showRetry(error)   // the list is as it was
    /// }
    /// ```
    ///
    /// The page comes from the skeleton revision the list was shown in, whatever was published
    /// since (its token says which). A page that fails leaves `screen` as it was: the error says
    /// why (`invalidRequest` when the list has no more pages; `412 skeleton_outdated` as
    /// ``TaksiServerError/skeletonOutdated`` when the server no longer keeps that revision: load
    /// the screen again).
    public func loadMore(_ identifier: String, on screen: LoadedScreen) async -> Result<ListPage, TaksiServerError> {
        guard case .success(let body) = screen.data, var data = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            var entries = data["interface_data"] as? [[String: Any]]
        else { return .failure(.invalidRequest("the screen \(screen.path) has no data to continue a list of; load it first")) }
        guard let page = screen.pageEntry(identifier), let token = page["token"] as? String else {
            return .failure(.invalidRequest("the list \"\(identifier)\" of \(screen.path) has no more pages"))
        }
        let field = page["field"] as? String ?? "values"
        let more =
            (screen.path.query.map { Self.query($0, removing: ["only", "page"]) + "&" } ?? "") + "only="
            + ScreenPath.encoded(identifier, allowing: ScreenPath.valueAllowed, keepingEscapes: false) + "&page="
            + ScreenPath.encoded(token, allowing: ScreenPath.valueAllowed, keepingEscapes: false)
        var request: URLRequest
        switch self.request("screens/" + screen.path.screen + "/data", query: more.hasPrefix("&") ? String(more.dropFirst()) : more) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        if let revision = screen.revision { request.setValue(revision, forHTTPHeaderField: "X-Taksi-Skeleton") }
        let answer: Answer
        switch await send(request) {
        case .success(let got): answer = got
        case .failure(let error): return .failure(error)
        }
        guard answer.status == 200 else { return .failure(answer.status == 412 ? .skeletonOutdated : answer.error) }
        guard let next = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any],
            let nextEntries = next["interface_data"] as? [[String: Any]],
            let entry = nextEntries.first(where: { $0["identifier"] as? String == identifier }),
            let content = entry["content"] as? [String: Any], let items = content[field] as? [Any]
        else {
            let degraded = answer.list("X-Taksi-Degraded")
            return .failure(
                .status(
                    200, code: "page_unavailable",
                    message: degraded.isEmpty
                        ? "the next page of \"\(identifier)\" came without the list; it is as it was"
                        : "the next page of \"\(identifier)\" did not come (\(degraded.joined(separator: ", ")) failed); the list is as it was"
                ))
        }
        // The items so far, then the page's; the rest of the content as the page has it.
        var merged = content
        let index = entries.firstIndex { $0["identifier"] as? String == identifier }
        let shown = index.flatMap { (entries[$0]["content"] as? [String: Any])?[field] as? [Any] } ?? []
        merged[field] = shown + items
        let mergedEntry: [String: Any] = ["identifier": identifier, "content": merged]
        if let index { entries[index] = mergedEntry } else { entries.append(mergedEntry) }
        data["interface_data"] = entries
        var pages = data["pages"] as? [String: Any] ?? [:]
        pages[identifier] = (next["pages"] as? [String: Any])?[identifier]
        data["pages"] = pages.isEmpty ? nil : pages
        guard let longer = try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys]),
            let patch = try? JSONSerialization.data(withJSONObject: ["interface_data": [mergedEntry]], options: [.sortedKeys])
        else { return .failure(.invalidRequest("the list's data could not be written")) }
        let grown = LoadedScreen(
            path: screen.path, skeleton: screen.skeleton, revision: screen.revision, variant: screen.variant, language: screen.language,
            data: .success(longer), degraded: screen.degraded, passes: screen.passes)
        return .success(ListPage(screen: grown, list: identifier, patch: patch, added: items.count, hasMore: grown.hasMore(identifier)))
    }

    /// A percent-encoded query without the parameters `names`.
    static func query(_ query: String, removing names: Set<String>) -> String {
        query.split(separator: "&").filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return !names.contains(name.removingPercentEncoding ?? String(name))
        }.joined(separator: "&")
    }
}
