import TaksiSchema

// The lists that continue (``PagedList``): each `http` source's `pages` checked against what the
// source answers and against the screen's lists.

extension ScreenCompiler {
    /// The lists of the screen that continue: for each `http` source with `pages`, the top-level
    /// components whose field is an `$each` over its items. Reports `items` or `cursor` missing
    /// from what the source answers, `items` that is not an array, a source whose pages no list
    /// shows, a list that shows fewer items than a page holds, and a query parameter named like the
    /// page token's.
    mutating func pagedLists(sourcesNode: JSONNode?, entries: [DataPlan.Entry]) -> [PagedList] {
        guard let sourcesNode else { return [] }
        var lists: [PagedList] = []
        for (name, definition) in sourceTable.declared.sorted(by: { $0.key < $1.key }) {
            guard case .http(let source) = definition, let pages = source.pages, let pagesNode = sourcesNode[name]?["pages"] else {
                continue
            }
            let pagesPath = JSONPath.root.appending("sources").appending(name).appending("pages")
            let items = ValuePath(root: name, steps: pages.items)
            // Items the answer lacks are the one mistake: no list could show them either.
            guard let itemsNode = pagesNode["items"], checkPageItems(items, node: itemsNode, at: pagesPath.appending("items")) else {
                continue
            }
            if case .cursor(let at, _) = pages.next, let cursorNode = pagesNode["cursor"] {
                _ = sourceTable.checkKeys(
                    ValuePath(root: name, steps: at), node: cursorNode, at: pagesPath.appending("cursor"), reader: &reader)
            }
            var shown: [PagedList] = []
            for entry in entries {
                for (field, expression) in entry.fields.sorted(by: { $0.key < $1.key }) {
                    guard case .each(let walked, _, _, let limit) = expression, walked == items else { continue }
                    shown.append(PagedList(identifier: entry.identifier, field: field, source: name))
                    if let limit, let size = pages.size, limit < size, let sizeNode = pagesNode["size"] {
                        reader.report(
                            .invalidSource, at: sizeNode, path: pagesPath.appending("size"),
                            "component \"\(entry.identifier)\" shows at most \(limit) items of a page (its $each's limit), and a page holds \(size): items \(limit + 1) to \(size) of every page would never be shown; raise its limit to \(size) or more"
                        )
                    }
                }
            }
            if shown.isEmpty {
                reader.report(
                    .invalidSource, at: pagesNode, path: pagesPath,
                    "no list of this screen shows these pages: a top-level component's field (a collection's values) is {$each: \(items), ...}; add one, or remove pages"
                )
            }
            lists += shown
        }
        if !lists.isEmpty { reportPageParameterClash(sourcesNode) }
        return lists
    }

    /// Whether `items` is in what the source answers and an array there (true when nothing is
    /// known of it); reports it when not.
    private mutating func checkPageItems(_ items: ValuePath, node: JSONNode, at path: JSONPath) -> Bool {
        guard sourceTable.checkKeys(items, node: node, at: path, reader: &reader) else { return false }
        guard let known = sourceTable.answers[items.root], case .found(let shape, _) = known.walk(items.steps) else { return true }
        let alternatives = shape.withoutNull.shape.alternatives
        guard !alternatives.contains(where: { if case .array = $0 { true } else { $0 == .unknown } }) else { return true }
        reader.report(
            .answerTypeMismatch, at: node, path: path,
            "\(items) is \(shape.described) as \(known.origin) has it, but items is the array of a page's items; name that array")
        return false
    }

    /// A query parameter of the screen named like the page token's (`page`) would never reach the
    /// screen on a request for more: reported where it is declared.
    private mutating func reportPageParameterClash(_ sourcesNode: JSONNode) {
        let name = PagedList.tokenParameter
        for member in sourcesNode.members ?? [] {
            guard let parameters = member.value["parameters"], let declared = parameters.members?.first(where: { $0.key == name })
            else { continue }
            reader.report(
                .invalidName, offset: declared.keyOffset,
                path: JSONPath.root.appending("sources").appending(member.key).appending("parameters").appending(name),
                "\"\(name)\" is reserved on a screen with a list that pages: ?\(name)= carries the token of the next page; name the parameter otherwise, like app_\(name)"
            )
        }
    }
}
