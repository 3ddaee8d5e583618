import TaksiSchema

/// Reads the structure of one definition file and collects diagnostics that point into it.
/// Every "expected X" problem is reported with the file, line, column and JSON path.
///
/// Nodes copied in from a fragment carry offsets that name their ``Origin`` (see
/// ``relocated(_:fragment:file:paths:use:)`` and ``SourceOffset``), so a problem inside a fragment
/// is reported where the screen uses it, with the chain of fragments and the path in the
/// fragment's own file.
struct DefinitionReader {
    let file: SourceFile
    private(set) var diagnostics: [Diagnostic] = []
    /// The files that nodes copied in from fragments come from: origin `n` is `origins[n - 1]`.
    private(set) var origins: [Origin] = []
    /// The path of every node and key in the file, by byte offset, once a fragment is used (the
    /// paths the compiler sees are then those of the expanded screen).
    private var paths: [Int: JSONPath]?
    /// The problems inside fragments reported so far: a fragment placed many times (or inside one
    /// placed many times) with a mistake in it has one mistake, reported once, through its first use.
    private var reportedInFragments: Set<FragmentProblem> = []

    /// A problem inside a fragment as its author fixes it: what, and where in the fragment's file.
    private struct FragmentProblem: Hashable {
        var code: Diagnostic.Code
        var message: String
        var place: Diagnostic.Frame
        var path: JSONPath?
    }

    /// A fragment's file, copied into the screen at one use.
    struct Origin {
        var fragment: String
        var file: SourceFile
        /// The path of every node and key in the fragment's file, by byte offset.
        var paths: [Int: JSONPath]
        /// Where the fragment is used: a node of the file, or of another copy.
        var use: SourceOffset
    }

    init(file: SourceFile) {
        self.file = file
    }

    mutating func report(
        _ code: Diagnostic.Code, at node: JSONNode, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error
    ) {
        // A missing member is reported on its object; its key is kept after the object's own path.
        var tail: String?
        if paths != nil, case .key(let key)? = path.segments.last, node.members != nil, node[key] == nil { tail = key }
        report(code, offset: node.offset, path: path, message, severity: severity, tail: tail)
    }

    mutating func report(
        _ code: Diagnostic.Code, offset: SourceOffset, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error
    ) {
        report(code, offset: offset, path: path, message, severity: severity, tail: nil)
    }

    /// A problem at a byte of the file itself.
    mutating func report(
        _ code: Diagnostic.Code, offset: Int, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error
    ) {
        report(code, offset: SourceOffset(byte: offset), path: path, message, severity: severity, tail: nil)
    }

    private mutating func report(
        _ code: Diagnostic.Code, offset: SourceOffset, path: JSONPath, _ message: String, severity: Diagnostic.Severity, tail: String?
    ) {
        guard paths != nil else {
            diagnostics.append(
                Diagnostic(
                    severity: severity, code: code, file: file.path, location: file.location(ofOffset: offset), path: path,
                    message: message
                )
            )
            return
        }
        let (fileOffset, trace, innermostPath) = unwind(offset)
        var written = trace.isEmpty ? paths?[fileOffset] : innermostPath
        if let tail { written = written?.appending(tail) }
        if let place = trace.last {
            let problem = FragmentProblem(code: code, message: message, place: place, path: written)
            guard reportedInFragments.insert(problem).inserted else { return }
        }
        var diagnostic = Diagnostic(
            severity: severity, code: code, file: file.path, location: file.location(ofOffset: fileOffset), path: written, message: message
        )
        diagnostic.trace = trace
        diagnostics.append(diagnostic)
    }

    /// Where an offset was written: the byte offset in this file (where the outermost fragment is
    /// used), the fragments it was reached through (outermost first, each with where in its file),
    /// and its path in the innermost fragment's file.
    private func unwind(_ offset: SourceOffset) -> (offset: Int, trace: [Diagnostic.Frame], innermostPath: JSONPath?) {
        var trace: [Diagnostic.Frame] = []
        var innermostPath: JSONPath?
        var offset = offset
        while offset.origin > 0 {
            let origin = origins[offset.origin - 1]
            if trace.isEmpty { innermostPath = origin.paths[offset.byte] }
            trace.insert(
                Diagnostic.Frame(fragment: origin.fragment, file: origin.file.path, location: origin.file.location(ofOffset: offset.byte)),
                at: 0)
            offset = origin.use
        }
        return (offset.byte, trace, innermostPath)
    }

    /// Reports paths as written in the file from now on, not as `root` will be after fragments
    /// are expanded into it.
    mutating func trackPaths(of root: JSONNode) {
        if paths == nil { paths = Self.paths(of: root) }
    }

    /// Where a node was written, for a message that points at a second place:
    /// `line 12` or `line 12 (in fragment header at Screens/fragments/header.yaml:4:9)`.
    func place(of node: JSONNode) -> String {
        let (offset, trace, _) = unwind(node.offset)
        let inner = trace.reversed().map { "in fragment \($0.fragment) at \($0.file):\($0.location)" }
        return "line \(file.location(ofOffset: offset).line)" + (inner.isEmpty ? "" : " (\(inner.joined(separator: ", ")))")
    }

    /// A copy of a fragment's `node` whose offsets say they come from a new origin: `fragment`'s
    /// file, used at `use` (a node of this file or of another copy).
    mutating func relocated(
        _ node: JSONNode, fragment: String, file: SourceFile, paths fragmentPaths: [Int: JSONPath], use: JSONNode
    ) -> JSONNode {
        origins.append(Origin(fragment: fragment, file: file, paths: fragmentPaths, use: use.offset))
        let origin = origins.count
        func relocate(_ node: JSONNode) -> JSONNode {
            var copy = node
            copy.offset.origin = origin
            switch node.kind {
            case .array(let elements): copy.kind = .array(elements.map(relocate))
            case .object(let members):
                copy.kind = .object(
                    members.map {
                        JSONNode.Member(
                            key: $0.key, keyOffset: SourceOffset(byte: $0.keyOffset.byte, origin: origin), value: relocate($0.value))
                    })
            default: break
            }
            return copy
        }
        return relocate(node)
    }

    /// The fragments this file's expansion uses, each once: those its nodes came from, and those
    /// a use named that could not be expanded (too deep, say), which are used all the same.
    var fragmentsUsed: Set<String> { Set(origins.map(\.fragment)).union(fragmentsNamed) }

    /// Fragments named by uses, expanded or not.
    private var fragmentsNamed: Set<String> = []

    /// Notes that a use names fragment `name`, expanded or not.
    mutating func noteUse(ofFragment name: String) {
        fragmentsNamed.insert(name)
    }

    /// The path of every node (and every member's key) under `root`, by offset; the shallowest
    /// when two start at one offset.
    static func paths(of root: JSONNode) -> [Int: JSONPath] {
        var paths: [Int: JSONPath] = [:]
        func visit(_ node: JSONNode, _ path: JSONPath) {
            if paths[node.offset.byte] == nil { paths[node.offset.byte] = path }
            switch node.kind {
            case .array(let elements):
                for (index, element) in elements.enumerated() { visit(element, path.appending(index)) }
            case .object(let members):
                for member in members {
                    if paths[member.keyOffset.byte] == nil { paths[member.keyOffset.byte] = path.appending(member.key) }
                    visit(member.value, path.appending(member.key))
                }
            default: break
            }
        }
        visit(root, .root)
        return paths
    }

    /// How many errors (not warnings) were reported so far.
    var errorCount: Int { diagnostics.count { $0.severity == .error } }

    mutating func append(_ diagnostic: Diagnostic) {
        diagnostics.append(diagnostic)
    }

    /// Reports schema violations found inside `node` (their paths are relative to `path`).
    mutating func report(_ violations: [SchemaViolation], in node: JSONNode, at path: JSONPath) {
        for violation in violations {
            let target = node.closestNode(at: violation.path)
            report(Diagnostic.Code(violation.code), at: target, path: path.appending(violation.path), violation.message)
        }
    }

    /// The members of an object node; reports a wrong type, unknown keys (with a suggestion) and
    /// missing required keys.
    mutating func object(
        _ node: JSONNode, at path: JSONPath, what: String, allowed: [String], required: [String] = []
    ) -> [JSONNode.Member]? {
        guard let members = node.members else {
            report(.wrongType, at: node, path: path, "\(what) must be an object, found \(node.typeName)")
            return nil
        }
        for member in members where !allowed.contains(member.key) {
            report(
                .unknownKey, offset: member.keyOffset, path: path.appending(member.key),
                "unknown key \"\(member.key)\" in \(what); allowed keys are \(allowed.joined(separator: ", "))"
                    + NameSuggestion.hint(for: member.key, among: allowed)
            )
        }
        for key in required where !members.contains(where: { $0.key == key }) {
            report(.missingKey, at: node, path: path.appending(key), "\(what) needs a \"\(key)\" key; add it")
        }
        return members
    }

    /// A string member, reporting a wrong type.
    mutating func string(_ node: JSONNode?, at path: JSONPath, what: String) -> String? {
        guard let node else { return nil }
        guard let string = node.stringValue else {
            report(.wrongType, at: node, path: path, "\(what) must be a string, found \(node.typeName)")
            return nil
        }
        return string
    }

    /// A Boolean member, reporting a wrong type.
    mutating func bool(_ node: JSONNode?, at path: JSONPath, what: String) -> Bool? {
        guard let node else { return nil }
        guard case .bool(let flag) = node.kind else {
            report(.wrongType, at: node, path: path, "\(what) must be true or false, found \(node.typeName)")
            return nil
        }
        return flag
    }

    /// A positive integer member, reporting a wrong type.
    mutating func positiveInteger(_ node: JSONNode?, at path: JSONPath, what: String) -> Int? {
        guard let node else { return nil }
        guard let integer = node.value.exactInteger, integer > 0 else {
            report(.wrongType, at: node, path: path, "\(what) must be a positive integer, found \(JSONWriter.string(node.value))")
            return nil
        }
        return integer
    }
}
