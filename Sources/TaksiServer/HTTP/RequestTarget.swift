import TaksiScreens

/// A request's target split into its path and decoded query parameters.
struct RequestTarget: Sendable, Equatable {
    var path: Substring
    var query: [String: String]

    /// Splits and decodes a request target. Query values are percent-decoded, `+` is a space, and
    /// the first of repeated parameters wins. An absolute-form target (`http://host/screens/home`,
    /// which RFC 9112, 3.2.2 says a server must accept) is read as its path and query.
    /// - Throws: ``APIError`` `invalid_query` when a percent escape is malformed or not UTF-8.
    init(_ target: String) throws(APIError) {
        let uri = Self.originForm(target)
        guard let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else {
            path = uri[...]
            query = [:]
            return
        }
        path = uri[..<mark]
        do {
            query = try Self.fields(uri[uri.index(after: mark)...])
        } catch {
            throw .invalidQuery(error.description)
        }
    }

    /// `a=1&b=x+y`, a query or a form body, as names and values: percent-decoded, `+` a space,
    /// the first of repeated names wins.
    static func fields(_ text: Substring) throws(PercentEncoding.DecodingError) -> [String: String] {
        var fields: [String: String] = [:]
        // Split on the bytes: `&` and `=` are ASCII, so every cut is at a character's boundary
        // (splitting on Characters costs a grapheme break check per byte).
        let bytes = text.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            defer { start = end < bytes.endIndex ? bytes.index(after: end) : end }
            guard start < end else { continue }
            let equals = bytes[start..<end].firstIndex(of: UInt8(ascii: "="))
            let key = try PercentEncoding.decode(text[start..<(equals ?? end)], plusIsSpace: true)
            let value =
                try equals.map { equals throws(PercentEncoding.DecodingError) in
                    try PercentEncoding.decode(text[bytes.index(after: equals)..<end], plusIsSpace: true)
                } ?? ""
            if fields[key] == nil { fields[key] = value }
        }
        return fields
    }

    /// `/screens/home?x=1` for `http://host:8080/screens/home?x=1`; other targets as they are.
    static func originForm(_ target: String) -> Substring {
        let bytes = target.utf8
        guard bytes.first == UInt8(ascii: "h") || bytes.first == UInt8(ascii: "H") else { return target[...] }
        let lower = target.prefix(8).lowercased()
        let schemeLength = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
        guard schemeLength > 0 else { return target[...] }
        let afterScheme = target.utf8.index(target.startIndex, offsetBy: schemeLength)
        guard let start = target.utf8[afterScheme...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else {
            return "/"
        }
        return target.utf8[start] == UInt8(ascii: "?") ? Substring("/" + target[start...]) : target[start...]
    }
}
