import TaksiSchema

/// Reads the structure of one definition file and collects diagnostics that point into it.
/// Every "expected X" problem is reported with the file, line, column and JSON path.
struct DefinitionReader {
    let file: SourceFile
    private(set) var diagnostics: [Diagnostic] = []

    init(file: SourceFile) {
        self.file = file
    }

    mutating func report(
        _ code: Diagnostic.Code, at node: JSONNode, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error
    ) {
        report(code, offset: node.offset, path: path, message, severity: severity)
    }

    mutating func report(
        _ code: Diagnostic.Code, offset: Int, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error
    ) {
        diagnostics.append(
            Diagnostic(
                severity: severity, code: code, file: file.path, location: file.location(ofOffset: offset), path: path,
                message: message
            )
        )
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
