import TaksiSchema

// Reading `links.yaml` into ``DeepLink``s.
extension DefinitionReader {
    /// Reads `links.yaml`: `{"links": [{"url": ..., "screen": ..., "summary": ...}]}`. Every link
    /// must open exactly one screen, fill each of its parameters, and not overlap another link.
    mutating func deepLinks(_ node: JSONNode, routes: ScreenRoutes) -> [DeepLink] {
        guard let members = object(node, at: .root, what: "the links file", allowed: ["links"], required: ["links"]),
            let list = members.first(where: { $0.key == "links" })?.value
        else { return [] }
        let listPath = JSONPath.root.appending("links")
        guard let elements = list.elements else {
            report(.wrongType, at: list, path: listPath, "links must be a list of {url, screen} objects")
            return []
        }
        var links: [(link: DeepLink, node: JSONNode)] = []
        for (index, element) in elements.enumerated() {
            let path = listPath.appending(index)
            guard
                let fields = object(
                    element, at: path, what: "a link", allowed: ["url", "screen", "summary"], required: ["url", "screen"]),
                let urlNode = fields.first(where: { $0.key == "url" })?.value,
                let screenNode = fields.first(where: { $0.key == "screen" })?.value,
                let url = string(urlNode, at: path.appending("url"), what: "url"),
                let screen = string(screenNode, at: path.appending("screen"), what: "screen"),
                let link = deepLink(url: url, screen: screen, urlNode: urlNode, screenNode: screenNode, at: path, routes: routes)
            else { continue }
            if let other = links.first(where: { Self.overlap($0.link, link) }) {
                report(
                    .ambiguousScreens, at: urlNode, path: path.appending("url"),
                    "link \(url) and link \(other.link.written) (line \(file.location(ofOffset: other.node.offset).line)) can match the same URL; make their paths differ in a literal segment"
                )
                continue
            }
            links.append((link, urlNode))
        }
        return links.map(\.link)
    }

    private mutating func deepLink(
        url: String, screen: String, urlNode: JSONNode, screenNode: JSONNode, at path: JSONPath, routes: ScreenRoutes
    ) -> DeepLink? {
        let urlPath = path.appending("url")
        guard !url.contains("?"), !url.contains("#"), let parsed = DeepLinks.parse(url), !parsed.host.isEmpty, !parsed.host.contains("{")
        else {
            report(
                .invalidLink, at: urlNode, path: urlPath,
                "\"\(url)\" is not a link pattern; write scheme://host/path with {name} for whole path segments, like https://eats.example.com/r/{id} or taksi-eats://restaurant/{id} (no query or fragment)"
            )
            return nil
        }
        guard let segments = linkSegments(parsed.path, of: url, node: urlNode, at: urlPath) else { return nil }
        let parameters = segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
        let screenPath = path.appending("screen")
        guard let (target, shape) = linkTarget(screen, parameters: parameters, of: url, node: screenNode, at: screenPath) else {
            return nil
        }
        let pattern: ScreenPattern
        switch routes.resolve(shape) {
        case .opens(let only):
            pattern = only
        case .valueAtFixedSegment(let near, let position, let literal):
            let name = if case .parameter(let name) = target[position] { name } else { "" }
            report(
                .brokenNavigation, at: screenNode, path: screenPath,
                "{\(name)} stands where screen \(near.name) has the fixed segment \"\(literal)\"; write that text")
            return nil
        case .nothing:
            report(
                .brokenNavigation, at: screenNode, path: screenPath,
                "\"\(screen)\" opens no screen" + NameSuggestion.hint(for: screen, among: routes.names))
            return nil
        case .several(let candidates):
            report(
                .brokenNavigation, at: screenNode, path: screenPath,
                "\"\(screen)\" could open any of \(candidates.map(\.name).joined(separator: ", ")); a link must open exactly one screen"
            )
            return nil
        }
        for name in parameters where !target.contains(.parameter(name)) {
            report(
                .invalidLink, at: urlNode, path: urlPath,
                "{\(name)} of \(url) is not used by the screen \"\(screen)\"; use it or write the segment literally", severity: .warning)
        }
        return DeepLink(scheme: parsed.scheme, host: parsed.host, segments: segments, screen: target, target: pattern, written: url)
    }

    /// The segments of a link pattern's path: literal text, or a `{name}` filling a whole segment, once.
    private mutating func linkSegments(
        _ path: Substring, of url: String, node urlNode: JSONNode, at urlPath: JSONPath
    ) -> [ScreenPattern.Segment]? {
        var segments: [ScreenPattern.Segment] = []
        for text in path.split(separator: "/") {
            if text.first == "{" {
                let name = String(text.dropFirst().dropLast())
                guard text.last == "}", !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isIdentifierScalar),
                    !segments.contains(.parameter(name))
                else {
                    report(
                        .invalidLink, at: urlNode, path: urlPath,
                        "\"\(text)\" in \(url) is not a parameter; a parameter is a name in braces that fills a whole segment, once")
                    return nil
                }
                segments.append(.parameter(name))
            } else if let literal = try? PercentEncoding.decode(text), !literal.contains("{"), !literal.contains("}") {
                segments.append(.literal(literal))
            } else {
                report(
                    .invalidLink, at: urlNode, path: urlPath,
                    "\"\(text)\" in \(url) is not a path segment; parameters fill whole segments, like /r/{id}")
                return nil
            }
        }
        return segments
    }

    /// The screen a link opens, segment by segment (each `{name}` a parameter of the link), and its
    /// shape for the routes.
    private mutating func linkTarget(
        _ screen: String, parameters: [String], of url: String, node screenNode: JSONNode, at screenPath: JSONPath
    ) -> (target: [ScreenPattern.Segment], shape: [ScreenRoutes.TargetSegment])? {
        var target: [ScreenPattern.Segment] = []
        var shape: [ScreenRoutes.TargetSegment] = []
        for text in screen.split(separator: "/", omittingEmptySubsequences: false) {
            if text.first == "{", text.last == "}", text.count > 2 {
                let name = String(text.dropFirst().dropLast())
                guard parameters.contains(name) else {
                    report(
                        .invalidLink, at: screenNode, path: screenPath,
                        "{\(name)} is not a parameter of \(url)"
                            + (parameters.isEmpty ? "" : "; its parameters are \(parameters.joined(separator: ", "))")
                            + NameSuggestion.hint(for: name, among: parameters)
                    )
                    return nil
                }
                target.append(.parameter(name))
                shape.append(.value)
            } else if PercentEncoding.isEncodedSegment(text), !text.isEmpty {
                target.append(.literal(String(text)))
                shape.append(.text(String(text)))
            } else {
                report(
                    .invalidLink, at: screenNode, path: screenPath,
                    "\"\(screen)\" is not a screen path; write it like restaurants/{id}, with {name} for a parameter of the link")
                return nil
            }
        }
        return (target, shape)
    }

    /// Whether two links can match the same URL: same scheme, host and number of segments, and no
    /// position where both have different literal text.
    private static func overlap(_ first: DeepLink, _ second: DeepLink) -> Bool {
        guard first.scheme == second.scheme, first.host == second.host, first.segments.count == second.segments.count else { return false }
        return zip(first.segments, second.segments).allSatisfy { pair in
            if case .literal(let a) = pair.0, case .literal(let b) = pair.1 { return a == b }
            return true
        }
    }
}
