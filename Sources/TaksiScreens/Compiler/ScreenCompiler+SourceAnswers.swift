import TaksiSchema

/// Reads the patches of the `http` sources' `answers` (``HTTPSource/StatusAnswer``), after the
/// components, as an action's answers are: each entry names a dynamic component of the screen,
/// with values that fit its fields. Their bindings read the screen's sources; the answered
/// source's value is the upstream's body when it is JSON (an API's `{"error": "..."}`), else null.
extension ScreenCompiler {
    mutating func readSourceAnswers(
        _ sourcesNode: JSONNode, at sourcesPath: JSONPath, components: [Component]
    )
        -> [String: [HTTPSource.StatusMatch: [DataPlan.Entry]]]
    {
        var patches: [String: [HTTPSource.StatusMatch: [DataPlan.Entry]]] = [:]
        for (sourceName, source) in sourceTable.declared.sorted(by: { $0.key < $1.key }) {
            guard case .http(let http) = source, !http.answers.isEmpty,
                let answersNode = sourcesNode[sourceName]?["answers"]?.members
            else { continue }
            let answersPath = sourcesPath.appending(sourceName).appending("answers")
            for member in answersNode {
                guard let status = HTTPSource.StatusMatch(key: member.key) else { continue }
                let answerPath = answersPath.appending(member.key)
                _ = reader.string(member.value["summary"], at: answerPath.appending("summary"), what: "summary")
                guard let dataNode = member.value["data"] else {
                    patches[sourceName, default: [:]][status] = []
                    continue
                }
                // The answered source's value is the status's body here, not its success answer:
                // bindings into it are checked against that status's response where the
                // upstream's OpenAPI document has one, else not at all.
                let known = sourceTable.answers[sourceName]
                sourceTable.answers[sourceName] = sourceTable.statusAnswers[sourceName]?[status]
                if let entries = readPatch(dataNode, at: answerPath.appending("data"), components: components) {
                    patches[sourceName, default: [:]][status] = entries
                }
                sourceTable.answers[sourceName] = known
            }
        }
        return patches
    }
}
