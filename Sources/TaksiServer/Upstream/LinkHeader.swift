import Foundation

/// Reads an upstream's `Link` header (RFC 8288) for the next page of a list: the target of the
/// link whose `rel` holds `next` (`<https://api.github.com/search/repositories?q=x&page=2>; rel="next"`).
enum LinkHeader {
    /// The URI reference of the link with relation `next` in one `Link` field value; nil when none.
    static func next(in value: String) -> String? {
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { return nil }
            let reference = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            // The link's parameters run to the next link: the next "<" after a comma.
            let end = rest.firstIndex(of: "<") ?? rest.endIndex
            let parameters = rest[..<end]
            rest = rest[end...]
            for parameter in parameters.split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel" else { continue }
                let relations = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\","))
                if relations.lowercased().split(separator: " ").contains("next") { return String(reference) }
            }
        }
        return nil
    }

    /// The path and query, from the upstream's `base`, that a link's `reference` leads to, resolved
    /// against `url` (the request it came with); nil when it leaves the upstream: another origin
    /// (scheme, host and port, as redirects are held to) or a path outside the base's.
    static func target(_ reference: String, from url: String, base: String) -> String? {
        guard let absolute = UpstreamClient.sameOrigin(reference, from: url), let found = URLComponents(string: absolute),
            let root = URLComponents(string: base)
        else { return nil }
        let basePath = root.percentEncodedPath.hasSuffix("/") ? String(root.percentEncodedPath.dropLast()) : root.percentEncodedPath
        let path = found.percentEncodedPath
        guard path.hasPrefix(basePath) else { return nil }
        var target = String(path.dropFirst(basePath.count))
        guard target.isEmpty || target.hasPrefix("/") else { return nil }
        if target.isEmpty { target = "/" }
        if let query = found.percentEncodedQuery { target += "?" + query }
        return isPrintable(target) ? target : nil
    }

    /// A `file:` upstream's link: a path from its folder (`</search/repositories?page=2>`), the
    /// only kind its files can name; nil for another.
    static func fileTarget(_ reference: String) -> String? {
        guard reference.hasPrefix("/"), !reference.hasPrefix("//"), isPrintable(reference) else { return nil }
        return reference
    }

    /// Printable ASCII with no space: a target as a request line carries it.
    private static func isPrintable(_ target: String) -> Bool {
        target.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
