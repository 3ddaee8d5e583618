public import TaksiSchema

/// The paths one screen serves: its name split into literal segments and typed parameter
/// segments (`bikes/stations/{network}`), with every parameter's declared type.
public struct ScreenPattern: Sendable, Hashable {
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    /// The screen's name as written.
    public var name: String
    public var segments: [Segment]
    /// Every parameter segment's type (a string when the screen does not declare one).
    public var parameters: [String: RequestParameter]

    /// The pattern of a valid screen name (see ``ScreenName``).
    public init(name: String, declared: [String: RequestParameter] = [:]) {
        self.name = name
        var parameters: [String: RequestParameter] = [:]
        self.segments = name.split(separator: "/").map { segment in
            guard segment.first == "{" else { return .literal(String(segment)) }
            let parameter = String(segment.dropFirst().dropLast())
            parameters[parameter] = declared[parameter] ?? RequestParameter(isRequired: true)
            return .parameter(parameter)
        }
        self.parameters = parameters
    }

    /// Whether the name holds a parameter.
    public var hasParameters: Bool { !parameters.isEmpty }

    /// The parameters in the order of the path.
    public var parameterNames: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// Whether a path's segments (percent-encoded, as requested) have this shape: as many, and
    /// the literal ones equal. Types are not looked at: a path of the right shape whose value has
    /// the wrong type is a bad request, not another screen.
    func matches(_ raw: [Substring]) -> Bool {
        guard raw.count == segments.count else { return false }
        for (segment, text) in zip(segments, raw) {
            if case .literal(let literal) = segment, !text.utf8.elementsEqual(literal.utf8) { return false }
        }
        return true
    }

    /// The typed values of a path of this shape.
    /// - Throws: ``DataRequestError/invalidPathParameter(name:screen:problem:)`` for a value that
    ///   does not decode, is not one segment's worth of text, or does not have its parameter's type.
    public func values(_ raw: [Substring]) throws(DataRequestError) -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for (segment, text) in zip(segments, raw) {
            guard case .parameter(let name) = segment, let parameter = parameters[name] else { continue }
            let value: String
            do {
                value = try PercentEncoding.decode(text)
            } catch {
                throw .invalidPathParameter(name: name, screen: self.name, problem: error.description)
            }
            if let problem = Self.segmentProblem(value) {
                throw .invalidPathParameter(name: name, screen: self.name, problem: problem)
            }
            guard let converted = parameter.convert(value) else {
                let expected = parameter.expectation
                let article = expected.hasPrefix("one of") ? "" : expected == "integer" ? "an " : "a "
                throw .invalidPathParameter(
                    name: name, screen: self.name, problem: "it must be \(article)\(expected), found \"\(Self.printable(value))\""
                )
            }
            values[name] = converted
        }
        return values
    }

    /// Why `value` cannot fill one segment of a screen's path (``PathSegment``'s rule), as a
    /// clause; nil when it can.
    public static func segmentProblem(_ value: String) -> String? {
        switch PathSegment.fault(of: value) {
        case nil: nil
        case .empty: "it is empty"
        case .dotSegment: "\"\(value)\" is not a name: URLs drop or climb such segments"
        case .controlCharacter: "it holds a control character"
        }
    }

    /// `value` with control characters shown as `?`, for messages.
    static func printable(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.map { PathSegment.isControl($0) ? "?" : $0 }))
    }
}

/// Every screen's path shape, for matching request paths and navigation targets. Literal names
/// win over patterns; two patterns that can match one path are refused at load (``overlaps``), so
/// a path matches at most one screen.
public struct ScreenRoutes: Sendable {
    /// Navigation targets checked against these routes.
    public var navigationTargets: NavigationTargets {
        let routes = self
        // The problems carry their own suggestion, made from the target's values.
        return NavigationTargets(names: []) { routes.problem(withTarget: $0) }
    }

    /// Every screen's pattern, by name.
    public private(set) var patterns: [String: ScreenPattern] = [:]
    /// Patterns with parameters, by their number of segments.
    private var parameterised: [Int: [ScreenPattern]] = [:]

    public init(_ patterns: [ScreenPattern] = []) {
        for pattern in patterns where self.patterns[pattern.name] == nil {
            self.patterns[pattern.name] = pattern
            if pattern.hasParameters { parameterised[pattern.segments.count, default: []].append(pattern) }
        }
        for (count, list) in parameterised { parameterised[count] = list.sorted { $0.name < $1.name } }
    }

    /// The screen names, sorted.
    public var names: [String] { patterns.keys.sorted() }

    /// A path matched to a screen: the screen's pattern and the path's segments, still encoded.
    public struct Match: Sendable {
        public var pattern: ScreenPattern
        public var segments: [Substring]
    }

    /// The screen a path (a screen name, or a pattern's name with values: `bikes/stations/velib`)
    /// opens: a literal name first, else the one pattern of its shape.
    public func match(_ path: Substring) -> Match? {
        if let literal = patterns[String(path)], !literal.hasParameters { return Match(pattern: literal, segments: []) }
        return matchParameterised(path)
    }

    /// The one screen with parameters whose shape `path` has, for a caller that has already
    /// looked the literal names up (the server, which keeps them in its own table).
    public func matchParameterised(_ path: Substring) -> Match? {
        guard !parameterised.isEmpty else { return nil }
        let segments = Self.segments(of: path)
        return parameterised[segments.count]?.first { $0.matches(segments) }.map { Match(pattern: $0, segments: segments) }
    }

    /// `path` cut at every `/`, empty segments kept. On the bytes: `/` is ASCII, so every cut is
    /// at a character's boundary (splitting on Characters costs a grapheme break check per byte,
    /// on every request for a screen with parameters).
    static func segments(of path: Substring) -> [Substring] {
        var segments: [Substring] = []
        let bytes = path.utf8
        var start = bytes.startIndex
        while let slash = bytes[start...].firstIndex(of: UInt8(ascii: "/")) {
            segments.append(path[start..<slash])
            start = bytes.index(after: slash)
        }
        segments.append(path[start...])
        return segments
    }

    /// Pairs of patterns that can match the same path: same number of segments, and no position
    /// where both have different literal text. Each pair once, in name order.
    public var overlaps: [(ScreenPattern, ScreenPattern)] {
        var pairs: [(ScreenPattern, ScreenPattern)] = []
        for count in parameterised.keys.sorted() {
            let list = parameterised[count] ?? []
            for (index, first) in list.enumerated() {
                for second in list[(index + 1)...] where Self.canOverlap(first, second) { pairs.append((first, second)) }
            }
        }
        return pairs
    }

    private static func canOverlap(_ first: ScreenPattern, _ second: ScreenPattern) -> Bool {
        zip(first.segments, second.segments).allSatisfy { pair in
            if case .literal(let a) = pair.0, case .literal(let b) = pair.1 { return a == b }
            return true
        }
    }

    /// Why a navigation target does not open a screen, as a predicate (nil when it does): it must
    /// be a path of encoded segments that matches a screen, with values of the parameters' types.
    public func problem(withTarget target: String) -> String? {
        let segments = target.split(separator: "/", omittingEmptySubsequences: false)
        if target.contains("{") {
            return
                "holds a pattern's braces; a target names a screen with its values (bikes/stations/velib), or a $template fills them from data"
        }
        if segments.contains(where: \.isEmpty) { return "has an empty path segment" }
        if let bad = segments.first(where: { !PercentEncoding.isEncodedSegment($0) }) {
            return
                "has \"\(bad)\", which is not a path segment: a target is a URL path, with spaces, '?', '#' and non-ASCII text percent-encoded"
        }
        guard let match = match(target[...]) else { return NavigationTargets.notAScreen + suggestion(for: segments) }
        do {
            _ = try match.pattern.values(match.segments)
        } catch {
            return "opens \(match.pattern.name), but \(error.pathProblem)"
        }
        return nil
    }

    /// ` (did you mean "bikes/stations/velib"?)` for a target that opens nothing: the closest of
    /// the literal names and of the patterns filled with the target's own values; or what a
    /// pattern the target stops short of still needs; else the screens there are.
    private func suggestion(for segments: [Substring]) -> String {
        var candidates: [String] = []
        for pattern in patterns.values {
            if pattern.segments.count == segments.count {
                candidates.append(
                    zip(pattern.segments, segments).map { if case .literal(let text) = $0.0 { text } else { String($0.1) } }.joined(
                        separator: "/"))
            } else if pattern.hasParameters, pattern.segments.count > segments.count,
                zip(pattern.segments, segments).allSatisfy({ if case .literal(let text) = $0.0 { text == $0.1 } else { true } })
            {
                let missing = pattern.parameterNames.suffix(pattern.segments.count - segments.count)
                return "; screen \(pattern.name) needs a value for " + missing.map { "{\($0)}" }.joined(separator: " and ")
            }
        }
        let hint = NameSuggestion.hint(for: segments.joined(separator: "/"), among: candidates)
        return hint.isEmpty ? ": " + Self.listing(patterns.keys.sorted()) : hint
    }

    /// Up to a dozen names, then how many more: `a, b, c and 20 more`.
    static func listing(_ names: [String], limit: Int = 12) -> String {
        guard names.count > limit else { return names.joined(separator: ", ") }
        return names.prefix(limit).joined(separator: ", ") + " and \(names.count - limit) more"
    }

    /// One segment of a navigation target as written in a `$template`: literal text, or a value
    /// from data that will fill the whole segment.
    public enum TargetSegment: Sendable, Hashable {
        case text(String)
        case value
    }

    /// What a templated target (or a deep link's screen) of some shape opens.
    public enum ShapeResolution: Sendable {
        /// Exactly this screen.
        case opens(ScreenPattern)
        /// None; the nearest screen has fixed text at `position`, where the shape has a value.
        case valueAtFixedSegment(screen: ScreenPattern, position: Int, text: String)
        /// None, not even with a value in place of fixed text.
        case nothing
        /// More than one (only patterns that overlap, which the set refuses anyway).
        case several([ScreenPattern])
    }

    /// The one screen a shape opens, or why there is not exactly one: the check that templated
    /// navigation targets and deep links share.
    public func resolve(_ shape: [TargetSegment]) -> ShapeResolution {
        let found = candidates(for: shape)
        if found.count > 1 { return .several(found) }
        if let only = found.first { return .opens(only) }
        if let near = candidates(for: shape, loosely: true).first {
            for (position, (segment, given)) in zip(near.segments, shape).enumerated() {
                if case .literal(let text) = segment, given == .value {
                    return .valueAtFixedSegment(screen: near, position: position, text: text)
                }
            }
        }
        return .nothing
    }

    /// The screens a templated target of this shape is meant to open: those with as many
    /// segments, whose literal segments equal the target's text, whose parameters take its text,
    /// and with a parameter wherever a value stands. A literal name of the same shape still wins
    /// for the value that spells it, as for any path. A shape of text alone is a literal target:
    /// the screen it opens, as ``match(_:)`` says. With `loosely`, a value may also stand where a
    /// screen has literal text (to explain a target that opens nothing).
    private func candidates(for shape: [TargetSegment], loosely: Bool = false) -> [ScreenPattern] {
        let texts = shape.compactMap { if case .text(let text) = $0 { text } else { nil } }
        if texts.count == shape.count {
            return match(texts.joined(separator: "/")[...]).map { [$0.pattern] } ?? []
        }
        return patterns.values.filter { pattern in
            guard pattern.segments.count == shape.count else { return false }
            return zip(pattern.segments, shape).allSatisfy { pair in
                switch pair {
                case (.literal(let literal), .text(let text)): literal == text
                case (.parameter(let name), .text(let text)):
                    (try? PercentEncoding.decode(text[...])).flatMap { pattern.parameters[name]?.convert($0) } != nil
                case (.parameter, .value): true
                case (.literal, .value): loosely
                }
            }
        }.sorted { $0.name < $1.name }
    }
}
