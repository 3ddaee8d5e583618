import TaksiSchema

// Reading a screen file's `sources` (``SourcesReader``) and http sources (an action's call is
// read as an http source too).

extension ScreenCompiler {
    /// The screen's `sources` (see ``SourcesReader``).
    mutating func readSources(_ node: JSONNode, at path: JSONPath) {
        let read = SourcesReader.read(node, at: path, pattern: pattern, context: context, reporting: &reader)
        sourceTable.declare(read.sources, invalid: read.invalid, answers: read.answers)
        sourceTable.statusAnswers.merge(read.statusAnswers) { _, read in read }
        made.fixturesRead.formUnion(read.fixturesRead)
    }

    /// An `http` source, or an action's call (see ``HTTPSourceReader``).
    /// - Parameter inputs: an action's inputs, which its call's templates fill in (a call declares
    ///   no `parameters` of its own); nil for an http source.
    mutating func readHTTPSource(_ members: [JSONNode.Member], at path: JSONPath, inputs: [String: RequestParameter]? = nil) -> HTTPSource?
    {
        var sourceReader = HTTPSourceReader(members: members, path: path, pattern: pattern, upstreams: context.upstreams, inputs: inputs)
        return sourceReader.read(reporting: &reader)
    }

    /// The roots of every `$bind`, `$each` and `$template` reference in a definition, read loosely
    /// (for a component that failed to compile, whose bindings were never read properly).
    static func sourcesNamed(in node: JSONNode) -> Set<String> {
        func root(_ path: Substring) -> String {
            String(path.prefix { $0 != "." && $0 != "[" && $0 != "}" }).trimmingSpaces
        }
        var names: Set<String> = []
        switch node.kind {
        case .object(let members):
            for member in members {
                if let text = member.value.stringValue {
                    switch member.key {
                    case "$bind", "$each": names.insert(root(text[...]))
                    case "$template":
                        for piece in text.split(separator: "{").dropFirst() where !piece.hasPrefix("{") { names.insert(root(piece)) }
                    default: break
                    }
                }
                names.formUnion(sourcesNamed(in: member.value))
            }
        case .array(let elements):
            for element in elements { names.formUnion(sourcesNamed(in: element)) }
        default:
            break
        }
        return names
    }
}
