import TaksiSchema

/// Links from outside the app (universal links, custom schemes, push notifications) mapped to
/// screens, declared in `Screens/links.yaml`:
///
/// ```yaml
/// links:
///   - url: https://eats.example.com/r/{id}
///     screen: restaurants/{id}
///   - url: taksi-eats://restaurant/{id}
///     screen: restaurants/{id}
/// ```
/// A `{name}` fills a whole path segment of the link, and the screen's segment of that name.
public struct DeepLink: Sendable, Hashable {
    /// The scheme, lower-cased: `https`, `taksi-eats`.
    public var scheme: String
    /// The host, lower-cased (`eats.example.com`; `restaurant` in `taksi-eats://restaurant/{id}`).
    public var host: String
    /// The link's path segments: literal text (decoded) or a parameter.
    public var segments: [ScreenPattern.Segment]
    /// The screen the link opens, with `{name}` where a link parameter goes.
    public var screen: [ScreenPattern.Segment]
    /// The screen's pattern, whose parameter types the values must fit.
    public var target: ScreenPattern
    /// The link as written, for messages and the association files.
    public var written: String

    /// Whether this is a universal link (App Links on Android), which the association files list.
    public var isWeb: Bool { scheme == "https" }

    /// The navigation target for a link's decoded path segments, or nil when they do not match
    /// or a value does not fit the screen's parameter.
    func target(for path: [String]) -> String? {
        guard path.count == segments.count else { return nil }
        var values: [String: String] = [:]
        for (segment, text) in zip(segments, path) {
            switch segment {
            case .literal(let literal): guard literal == text else { return nil }
            case .parameter(let name): values[name] = text
            }
        }
        var output: [String] = []
        for (segment, patternSegment) in zip(screen, target.segments) {
            switch segment {
            case .literal(let literal): output.append(literal)
            case .parameter(let name):
                guard let value = values[name], ScreenPattern.segmentProblem(value) == nil else { return nil }
                if case .parameter(let parameter) = patternSegment, target.parameters[parameter]?.convert(value) == nil { return nil }
                output.append(PercentEncoding.encode(value))
            }
        }
        return output.joined(separator: "/")
    }

    /// The link's path for Apple's `components` (`/r/*`): a parameter is any text.
    public var applePath: String {
        "/" + segments.map { if case .literal(let text) = $0 { text } else { "*" } }.joined(separator: "/")
    }
}

/// Every deep link of a screen set, for `/links/resolve` and the association files.
public struct DeepLinks: Sendable {
    public var links: [DeepLink]

    public init(_ links: [DeepLink] = []) {
        self.links = links
    }

    /// Why a link cannot be resolved.
    public enum Failure: Error, Sendable, Equatable {
        /// The text is not an absolute URL with a scheme and a host.
        case notALink(String)
        /// No pattern matches it (or a value does not fit the screen's parameter).
        case noMatch
    }

    /// The navigation target a link opens: `https://eats.example.com/r/la-table` gives
    /// `restaurants/la-table`. The scheme and host compare without case; a trailing `/`, the
    /// query and the fragment are ignored.
    public func resolve(_ url: String) -> Result<String, Failure> {
        guard let parsed = Self.parse(url) else {
            return .failure(
                .notALink(
                    "not an absolute URL like https://host/path or scheme://host/path, as browsers read it: no spaces, control characters or backslashes; an ASCII host without percent signs; a port up to 65535"
                )
            )
        }
        var segments: [String] = []
        for text in parsed.path.split(separator: "/") {
            do {
                segments.append(try PercentEncoding.decode(text))
            } catch {
                return .failure(.notALink(error.description))
            }
        }
        for link in links where link.scheme == parsed.scheme && link.host == parsed.host {
            if let target = link.target(for: segments) { return .success(target) }
        }
        return .failure(.noMatch)
    }

    /// Scheme, host and path of `scheme://[userinfo@]host[:port]/path?query#fragment`,
    /// lower-casing scheme and host; nil for what is not such a URL.
    ///
    /// A link is resolved to a screen only when a browser would read the same host from it, so
    /// what RFC 3986 does not allow, or what browsers (WHATWG URL) read otherwise, is refused:
    /// a `\` (a browser reads `https://evil.example\@eats.example.com/` as host `evil.example`),
    /// spaces and control characters (which browsers drop or trim), a percent sign or a non-ASCII
    /// character in the host (which browsers decode), and a port that is not a number up to 65535.
    static func parse(_ url: String) -> (scheme: String, host: String, path: Substring)? {
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].lowercased()
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first),
            scheme.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return nil }
        var rest = url[url.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        rest = rest.dropFirst(2)
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        // Browsers and RFC 3986 both take the host after the last "@" of the authority.
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority
        if let portColon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            host = authority[..<portColon]
            let port = authority[authority.index(after: portColon)...]
            // Empty (the default port) or a number that is a port.
            guard port.isEmpty || (port.count <= 5 && port.allSatisfy({ ("0"..."9").contains($0) }) && (Int(port) ?? .max) <= 65_535) else {
                return nil
            }
        }
        guard host.unicodeScalars.allSatisfy(Self.isHostCharacter) else { return nil }
        guard !host.isEmpty || scheme != "https" else { return nil }
        return (scheme, host.lowercased(), rest[slash...])
    }

    /// A character of a host as RFC 3986 writes one (a name: letters, digits, `-._~` and the
    /// sub-delimiters; or an IP literal in brackets), without percent-encoding.
    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || "-._~!$&'()*+,;=[]:".unicodeScalars.contains(scalar)
    }
}
