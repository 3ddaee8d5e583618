import TaksiSchema

// Navigation targets built from data: the one screen a `$template` target opens, and whether the
// values it is filled with fit that screen's parameters.

extension ScreenCompiler {
    /// A navigation action whose target is a `$template` over data:
    /// `{identifier: navigation, content: {interface_identifier: {$template: "bikes/stations/{network.id}"}}}`.
    /// The template must open exactly one screen, each value filling one of its parameter
    /// segments, with a type that fits where the type is known at load.
    mutating func compileNavigation(_ node: JSONNode, at path: JSONPath, scope: Set<String>) -> ContentExpression? {
        let contentPath = path.appending("content")
        let targetPath = contentPath.appending("interface_identifier")
        guard node["identifier"]?.stringValue == "navigation", let content = node["content"], let target = content["interface_identifier"],
            let binding = target.members?.first(where: { $0.key.hasPrefix("$") }),
            node.members?.count == 2, content.members?.count == 1,
            let bindingPath = Self.firstBinding(in: node, at: path), bindingPath.absolute == targetPath
        else {
            let found = Self.firstBinding(in: node, at: path)
            reader.report(
                .invalidBinding, at: found.map { node.closestNode(at: $0.relative) } ?? node, path: found?.absolute ?? path,
                "in an action, only a navigation's interface_identifier may come from data, as a $template: {identifier: navigation, content: {interface_identifier: {$template: \"bikes/stations/{network.id}\"}}}"
            )
            return nil
        }
        guard binding.key == "$template" else {
            reader.report(
                .invalidBinding, at: target, path: targetPath,
                "a navigation target is built with $template, which percent-encodes each value as one path segment (like {$template: \"bikes/stations/{network.id}\"}); \(binding.key) cannot make one"
            )
            return nil
        }
        guard let members = reader.object(target, at: targetPath, what: "a $template binding", allowed: ["$template"]),
            let textNode = members.first?.value,
            let text = reader.string(textNode, at: targetPath.appending("$template"), what: "a $template"),
            let parts = readTemplate(text, node: textNode, at: targetPath.appending("$template"), scope: scope)
        else { return nil }
        guard resolveTarget(text, parts: parts, node: textNode, at: targetPath.appending("$template"), scope: scope) != nil else {
            return nil
        }
        return .object(["identifier": .literal("navigation"), "content": .object(["interface_identifier": .target(parts)])])
    }

    /// The one screen a target template opens; nil (reported) when it opens none, could open
    /// several, or fills a parameter with a value of another type.
    private mutating func resolveTarget(
        _ text: String, parts: [ContentExpression.TemplatePart], node: JSONNode, at path: JSONPath, scope: Set<String>
    ) -> ScreenPattern? {
        guard let (shape, values) = targetShape(text, parts: parts, node: node, at: path) else { return nil }
        let written = shape.map { if case .text(let literal) = $0 { literal } else { "{}" } }.joined(separator: "/")
        let screen: ScreenPattern
        switch context.routes.resolve(shape) {
        case .opens(let only):
            screen = only
        case .valueAtFixedSegment(let near, let position, let fixed):
            reader.report(
                .brokenNavigation, at: node, path: path,
                "in navigation target \"\(text)\", {\(values[position].map(\.description) ?? "")} stands where screen \(near.name) has the fixed segment \"\(fixed)\"; write that text instead"
            )
            return nil
        case .nothing:
            let shapes = Dictionary(
                context.routes.patterns.values.map { pattern in
                    (
                        pattern.segments.map { if case .literal(let literal) = $0 { literal } else { "{}" } }.joined(separator: "/"),
                        pattern.name
                    )
                }, uniquingKeysWith: { first, _ in first })
            let suggestion = NameSuggestion.closest(to: written, among: shapes.keys).flatMap { shapes[$0] }
            reader.report(
                .brokenNavigation, at: node, path: path,
                "navigation target \"\(text)\" opens no screen: none has the path \(written) (a {} stands for a value)"
                    + (suggestion.map { " (did you mean \"\($0)\"?)" } ?? "")
            )
            return nil
        case .several(let candidates):
            reader.report(
                .brokenNavigation, at: node, path: path,
                "navigation target \"\(text)\" could open any of \(candidates.map(\.name).joined(separator: ", ")); a target must open exactly one screen, so give them different paths"
            )
            return nil
        }
        for (segment, value) in zip(screen.segments, values) {
            guard let value, case .parameter(let name) = segment, let parameter = screen.parameters[name] else { continue }
            if let known = knownParameter(value, scope: scope), let problem = Self.fitProblem(known, into: parameter) {
                reader.report(
                    .brokenNavigation, at: node, path: path,
                    "in navigation target \"\(text)\", {\(value)} fills {\(name)} of screen \(screen.name), but \(problem)"
                )
                return nil
            }
        }
        return screen
    }

    /// A target template's shape, segment by segment (literal text, or exactly one value), with
    /// each segment's value; nil (reported) when a segment is empty, mixed or not a path segment.
    private mutating func targetShape(
        _ text: String, parts: [ContentExpression.TemplatePart], node: JSONNode, at path: JSONPath
    ) -> (shape: [ScreenRoutes.TargetSegment], values: [ValuePath?])? {
        var segments: [[ContentExpression.TemplatePart]] = [[]]
        for part in parts {
            guard case .text(let literal) = part else {
                segments[segments.count - 1].append(part)
                continue
            }
            for (index, piece) in literal.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
                if index > 0 { segments.append([]) }
                if !piece.isEmpty { segments[segments.count - 1].append(.text(String(piece))) }
            }
        }
        var shape: [ScreenRoutes.TargetSegment] = []
        var values: [ValuePath?] = []
        for segment in segments {
            if segment.isEmpty {
                reader.report(.brokenNavigation, at: node, path: path, "navigation target \"\(text)\" has an empty path segment")
                return nil
            }
            guard segment.count == 1 else {
                reader.report(
                    .brokenNavigation, at: node, path: path,
                    "in navigation target \"\(text)\", a value fills a whole path segment; write it between slashes, like bikes/stations/{network.id}"
                )
                return nil
            }
            switch segment[0] {
            case .text(let literal):
                guard PercentEncoding.isEncodedSegment(literal[...]) else {
                    reader.report(
                        .brokenNavigation, at: node, path: path,
                        "\"\(literal)\" in navigation target \"\(text)\" is not a path segment; write letters, digits, '-', '_', '.' and '~' (values from data are encoded for you)"
                    )
                    return nil
                }
                shape.append(.text(literal))
                values.append(nil)
            case .value(let value):
                shape.append(.value)
                values.append(value)
            case .formatted(_, let format):
                reader.report(
                    .brokenNavigation, at: node, path: path,
                    "in navigation target \"\(text)\", a value is one path segment as it is; remove \"| \(format)\" (formats are for text people read)"
                )
                return nil
            }
        }
        return (shape, values)
    }

    /// The declared type of a value that is a request or path parameter (`path.network`,
    /// `query.name`); nil for data whose type is only known when it arrives.
    private func knownParameter(_ value: ValuePath, scope: Set<String>) -> RequestParameter? {
        guard !scope.contains(value.root), value.steps.segments.count == 1, case .key(let key)? = value.steps.segments.first else {
            return nil
        }
        switch sourceTable[value.root] {
        case .request(let parameters)?, .path(let parameters)?: return parameters[key]
        default: return nil
        }
    }

    /// Why every value of `source` may not fit `target` (nil when it always does).
    static func fitProblem(_ source: RequestParameter, into target: RequestParameter) -> String? {
        if let values = source.allowedValues {
            let refused = values.filter { target.convert(HTTPSource.text(of: $0)) == nil }
            return refused.isEmpty
                ? nil
                : "it may be \(refused.map { JSONWriter.string($0) }.joined(separator: ", ")), which is not \(target.expectation == "integer" ? "an" : "a") \(target.expectation)"
        }
        let constrained = target.allowedValues != nil || target.pattern != nil || target.minLength != nil || target.maxLength != nil
        if constrained {
            var unconstrainedSource = source
            unconstrainedSource.defaultValue = nil
            unconstrainedSource.isRequired = target.isRequired
            return unconstrainedSource == target
                ? nil
                : "it is any \(source.kind.rawValue), and the parameter is only \(target.expectation); declare the same constraints on both"
        }
        let fits: Bool
        switch target.kind {
        case .string: fits = true
        case .number: fits = source.kind == .integer || source.kind == .number
        case .integer: fits = source.kind == .integer
        case .bool: fits = source.kind == .bool
        }
        return fits
            ? nil
            : "it is \(source.kind == .integer ? "an" : "a") \(source.kind.rawValue), and the parameter is \(target.kind == .integer ? "an" : "a") \(target.kind.rawValue)"
    }
}
