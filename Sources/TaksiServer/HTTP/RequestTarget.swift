import TaksiScreens

/// A request's target split into its path and decoded query parameters.
struct RequestTarget: Sendable, Equatable {
    var path: Substring
    var query: [String: String]

    /// Splits and decodes `uri`. Query values are percent-decoded, `+` is a space, and the first
    /// of repeated parameters wins.
    /// - Throws: ``APIError`` `invalid_query` when a percent escape is malformed or not UTF-8.
    init(_ uri: String) throws(APIError) {
        guard let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else {
            path = uri[...]
            query = [:]
            return
        }
        path = uri[..<mark]
        var query: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            if query[key] == nil { query[key] = value }
        }
        self.query = query
    }

    private static func decode(_ component: Substring) throws(APIError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(JSONParser.hexValue), let low = iterator.next().flatMap(JSONParser.hexValue) else {
                    throw .invalidQuery("a '%' must be followed by two hexadecimal digits")
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidQuery("a percent-encoded value is not UTF-8")
        }
        return string
    }
}
