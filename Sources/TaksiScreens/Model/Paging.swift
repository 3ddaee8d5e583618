public import TaksiSchema

extension HTTPSource {
    /// How an `http` source's upstream pages a list, declared under the source's `pages`:
    ///
    /// ```yaml
    /// pages: {kind: link, items: items}                                  # Link: <...>; rel="next" (GitHub)
    /// pages: {kind: cursor, items: reviews, cursor: next_cursor, parameter: after}
    /// pages: {kind: page, items: results, parameter: page, size: 20}    # page=1, 2, ... (first: 1)
    /// pages: {kind: offset, items: results, parameter: offset, size: 20}
    /// ```
    ///
    /// A list whose `$each` walks `items` of the source continues: its data entry comes with a
    /// signed token for the next page (``nextTarget(after:answer:link:)`` makes its request from
    /// the upstream's answer, never from what a client sends).
    public struct Paging: Sendable, Hashable {
        /// How the request for the next page is made from the answer to this one.
        public enum Next: Sendable, Hashable {
            /// The answer holds the next page's cursor at `at` (none, null or `""`: the last page);
            /// it is sent back as the query parameter `parameter`.
            case cursor(at: JSONPath, parameter: String)
            /// The answer's `Link` header names it with `rel="next"` (RFC 8288); no such link: the last page.
            case link
            /// Pages numbered from `first` in the query parameter `parameter`; a page with fewer
            /// than `size` items is the last.
            case page(parameter: String, first: Int, size: Int)
            /// Items counted from 0 in the query parameter `parameter`; a page with fewer than
            /// `size` items is the last.
            case offset(parameter: String, size: Int)
        }

        /// Where the answer holds the page's items: the array a list's `$each` walks.
        public var items: JSONPath
        public var next: Next

        public init(items: JSONPath, next: Next) {
            self.items = items
            self.next = next
        }

        /// The kinds, as a screen file writes them.
        public static let kinds = ["cursor", "link", "page", "offset"]
        /// The keys `pages` may have in a screen file.
        public static let keys = ["kind", "items", "cursor", "parameter", "first", "size", "summary"]
        /// The largest `size` a page may declare.
        public static let maxSize = 1000

        /// The query parameter the next page's position goes in; nil for a `Link` header.
        public var parameter: String? {
            switch next {
            case .cursor(_, let parameter), .page(let parameter, _, _), .offset(let parameter, _): parameter
            case .link: nil
            }
        }

        /// The number of items a full page holds, where the declaration says.
        public var size: Int? {
            switch next {
            case .page(_, _, let size), .offset(_, let size): size
            case .cursor, .link: nil
            }
        }

        /// The path and query of the request for the page after the one `target` fetched, made
        /// from what the upstream answered (`answer`, and `link`: its `Link` header's `rel="next"`
        /// target, already resolved against the upstream's base); nil when that page was the last.
        /// A next request equal to this one ends the list too: an upstream that hands back the same
        /// cursor would otherwise be asked for ever.
        public func nextTarget(after target: String, answer: JSONValue, link: String?) -> String? {
            let made: String?
            switch next {
            case .link:
                made = link
            case .cursor(let at, let parameter):
                switch Self.value(at: at, in: answer) {
                case .string(let cursor) where !cursor.isEmpty:
                    made = Self.target(target, setting: parameter, to: cursor)
                case let .number(number) where number.isFinite:
                    made = Self.target(target, setting: parameter, to: JSONWriter.string(.number(number)))
                default:
                    made = nil
                }
            case .page(let parameter, let first, let size):
                let count = Self.value(at: items, in: answer)?.arrayValue?.count ?? 0
                guard count > 0, count >= size else { return nil }
                let current = Self.query(target, parameter).flatMap { Int($0) } ?? first
                made = Self.target(target, setting: parameter, to: String(current + 1))
            case .offset(let parameter, let size):
                let count = Self.value(at: items, in: answer)?.arrayValue?.count ?? 0
                guard count > 0, count >= size else { return nil }
                let current = Self.query(target, parameter).flatMap { Int($0) } ?? 0
                made = Self.target(target, setting: parameter, to: String(current + count))
            }
            guard let made, made != target else { return nil }
            return made
        }

        /// The page's items in an answer: the array at ``items``; nil when there is none.
        public func items(in answer: JSONValue) -> [JSONValue]? {
            Self.value(at: items, in: answer)?.arrayValue
        }

        /// The value at `path` in `value` (a binding's walk, ``ValuePath/lookup(in:)``).
        static func value(at path: JSONPath, in value: JSONValue) -> JSONValue? {
            ValuePath(root: "", steps: path).lookup(in: value)
        }

        /// The decoded value of the query parameter `name` of a target (`/path?a=1&b=2`).
        static func query(_ target: String, _ name: String) -> String? {
            guard let mark = target.firstIndex(of: "?") else { return nil }
            for item in target[target.index(after: mark)...].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard (try? PercentEncoding.decode(pair[0], plusIsSpace: true)) == name else { continue }
                return pair.count > 1 ? (try? PercentEncoding.decode(pair[1], plusIsSpace: true)) ?? "" : ""
            }
            return nil
        }

        /// `target` with the query parameter `name` set to `value` (percent-encoded): in place of
        /// the first item of that name, the others of that name dropped, else added at the end.
        static func target(_ target: String, setting name: String, to value: String) -> String {
            let item = PercentEncoding.encode(name) + "=" + PercentEncoding.encode(value)
            guard let mark = target.firstIndex(of: "?") else { return target + "?" + item }
            var items: [String] = []
            var placed = false
            for existing in target[target.index(after: mark)...].split(separator: "&") {
                let key = existing.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                guard (try? PercentEncoding.decode(key, plusIsSpace: true)) == name else {
                    items.append(String(existing))
                    continue
                }
                if !placed { items.append(item) }
                placed = true
            }
            if !placed { items.append(item) }
            return target[..<mark] + "?" + items.joined(separator: "&")
        }
    }
}

/// A list of a screen that continues: a top-level component's field filled by an `$each` over
/// the items of a paged `http` source (``HTTPSource/Paging``).
public struct PagedList: Sendable, Hashable {
    /// The component's identifier.
    public var identifier: String
    /// The field the `$each` fills (`values` for a collection).
    public var field: String
    /// The paged source's name.
    public var source: String

    /// The query parameter a data request for a list's next page carries its token in; reserved
    /// on a screen with a list that continues.
    public static let tokenParameter = "page"

    public init(identifier: String, field: String, source: String) {
        self.identifier = identifier
        self.field = field
        self.source = source
    }
}
