import TaksiScreens

/// A request's target split into its path and its query. The query is kept as it was sent and
/// decoded when read (``query``, ``value(of:)``): a data response kept for its target is
/// answered without it (see ``DataEndpoint``), and selecting a variant reads one parameter.
struct RequestTarget: Sendable, Equatable {
    var path: Substring
    /// The query as sent (after `?`); nil without one. Its escapes were checked when the target
    /// was read, so reading it cannot fail.
    private let rawQuery: Substring?

    /// Splits a request target and checks its query: query values are percent-decoded, `+` is a
    /// space, and the first of repeated parameters wins. An absolute-form target
    /// (`http://host/screens/home`, which RFC 9112, 3.2.2 says a server must accept) is read as
    /// its path and query.
    /// - Throws: ``APIError`` `invalid_query` when a percent escape is malformed or not UTF-8.
    init(_ target: String) throws(APIError) {
        let uri = Self.originForm(target)
        guard let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else {
            self.init(path: uri[...], rawQuery: nil)
            return
        }
        try self.init(path: uri[..<mark], checking: uri[uri.index(after: mark)...])
    }

    /// The target of a head, read from its bytes: its path and query made text once; an
    /// absolute-form target as ``init(_:)`` reads it.
    /// - Throws: ``APIError`` `invalid_query` when a percent escape is malformed or not UTF-8.
    init(_ head: RequestHead) throws(APIError) {
        let split = head.withBytes { bytes -> (path: String, query: String?)? in
            let target = UnsafeBufferPointer(rebasing: bytes[head.target])
            guard target.first == UInt8(ascii: "/") else { return nil }
            guard let mark = target.firstIndex(of: UInt8(ascii: "?")) else { return (String(decoding: target, as: UTF8.self), nil) }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: target[..<mark]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: target[(mark + 1)...]), as: UTF8.self)
            )
        }
        guard let split else {
            try self.init(head.uri)
            return
        }
        guard let query = split.query else {
            self.init(path: split.path[...], rawQuery: nil)
            return
        }
        try self.init(path: split.path[...], checking: query[...])
    }

    /// A target whose query is checked now: only an escape can fail to decode, so a query with
    /// none is read when it is asked for, and one with some is decoded once here.
    private init(path: Substring, checking query: Substring) throws(APIError) {
        if query.utf8.contains(UInt8(ascii: "%")) {
            do {
                _ = try Self.fields(query)
            } catch {
                throw .invalidQuery(error.description)
            }
        }
        self.init(path: path, rawQuery: query)
    }

    private init(path: Substring, rawQuery: Substring?) {
        self.path = path
        self.rawQuery = rawQuery
    }

    /// The query's names and values: percent-decoded, `+` a space, the first of repeated names
    /// wins. Decoded on each call: read it once.
    var query: [String: String] {
        guard let rawQuery else { return [:] }
        return (try? Self.fields(rawQuery)) ?? [:]
    }

    /// The value of one query parameter, as ``query`` has it, read without decoding the others.
    func value(of name: String) -> String? {
        guard var raw = rawQuery else { return nil }
        var name = name
        return raw.withUTF8 { bytes in
            name.withUTF8 { name in
                var found: String?
                Self.forEachPair(in: bytes) { key, value in
                    let matches =
                        key.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
                        ? (try? PercentEncoding.decode(key, plusIsSpace: true))?.utf8.elementsEqual(name) == true
                        : HeaderList.equals(key, name)
                    guard matches else { return false }
                    found = value.map { (try? PercentEncoding.decode($0, plusIsSpace: true)) ?? "" } ?? ""
                    return true
                }
                return found
            }
        }
    }

    /// The query as sent without the parameters `names` (decoded names compared), each kept
    /// pair as it was written; empty without a query.
    func rawQuery(removing names: Set<String>) -> String {
        guard let rawQuery else { return "" }
        return rawQuery.split(separator: "&").filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return !names.contains((try? PercentEncoding.decode(name, plusIsSpace: true)) ?? String(name))
        }.joined(separator: "&")
    }

    /// Calls `body` with each `name=value` pair's bytes (the value nil without `=`), empty pairs
    /// skipped, until it returns true. On the bytes where they lie: `&` and `=` are ASCII, so
    /// every cut is at a character's boundary (a walk of a substring's UTF-8 view a byte at a
    /// time cost more than the rest).
    private static func forEachPair<Failure: Error>(
        in bytes: UnsafeBufferPointer<UInt8>,
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>?) throws(Failure) -> Bool
    ) throws(Failure) {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            defer { start = end + 1 }
            guard start < end else { continue }
            let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                if try body(pair, nil) { return }
                continue
            }
            if try body(UnsafeBufferPointer(rebasing: pair[..<equals]), UnsafeBufferPointer(rebasing: pair[(equals + 1)...])) { return }
        }
    }

    /// `a=1&b=x+y`, a query or a form body, as names and values: percent-decoded, `+` a space,
    /// the first of repeated names wins.
    static func fields(_ text: Substring) throws(PercentEncoding.DecodingError) -> [String: String] {
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(PercentEncoding.DecodingError) in
                var fields: [String: String] = [:]
                try forEachPair(in: bytes) { name, value throws(PercentEncoding.DecodingError) in
                    let key = try PercentEncoding.decode(name, plusIsSpace: true)
                    let value = try value.map { value throws(PercentEncoding.DecodingError) in
                        try PercentEncoding.decode(value, plusIsSpace: true)
                    }
                    if fields[key] == nil { fields[key] = value ?? "" }
                    return false
                }
                return fields
            }
        }.get()
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
