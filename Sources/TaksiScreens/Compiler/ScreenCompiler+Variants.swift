import TaksiSchema

// Reading a screen file's variant, before anything else: its app-version requirement, its alternative and its experiment.

extension ScreenCompiler {
    static func readRequirement(_ node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> VersionRequirement? {
        guard let text = reader.string(node, at: path, what: "version") else { return nil }
        do {
            return try VersionRequirement(parsing: text)
        } catch {
            reader.report(.invalidVersion, at: node, path: path, "\"\(text)\" is not a version requirement: \(error.message)")
            return nil
        }
    }

    /// The screen's `alternative`: a name of letters, digits, `-` and `_`.
    static func readAlternative(_ node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> String {
        guard let given = reader.string(node, at: path, what: "alternative") else { return ScreenVariant.defaultAlternative }
        if given.isEmpty || !given.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || $0 == "-" }) {
            reader.report(.invalidName, at: node, path: path, "an alternative's name uses letters, digits, '-' and '_' (like B or compact)")
        }
        return given
    }

    /// The experiment over the screen's alternatives, declared in the default alternative's file.
    static func readExperiment(_ node: JSONNode, at path: JSONPath, alternative: String, reader: inout DefinitionReader) -> Experiment? {
        guard
            let members = reader.object(
                node, at: path, what: "an experiment", allowed: ["name", "weights", "summary"], required: ["name", "weights"]
            ),
            let name = reader.string(members.first { $0.key == "name" }?.value, at: path.appending("name"), what: "the experiment's name"),
            let weightsNode = members.first(where: { $0.key == "weights" })?.value
        else { return nil }
        if alternative != ScreenVariant.defaultAlternative {
            reader.report(
                .invalidExperiment, at: node, path: path,
                "declare the experiment in the default alternative's file (the one without \"alternative\"), once for all alternatives"
            )
            return nil
        }
        guard !name.isEmpty else {
            reader.report(
                .invalidExperiment, at: node, path: path.appending("name"), "the experiment needs a name; it seeds the assignment")
            return nil
        }
        guard let weightMembers = weightsNode.members, !weightMembers.isEmpty else {
            reader.report(
                .invalidExperiment, at: weightsNode, path: path.appending("weights"),
                "weights must be an object of alternative names and whole-number weights, like {\"default\": 50, \"B\": 50}"
            )
            return nil
        }
        var weights: [String: Int] = [:]
        for member in weightMembers {
            guard let weight = member.value.value.exactInteger, weight >= 0 else {
                reader.report(
                    .invalidExperiment, at: member.value, path: path.appending("weights").appending(member.key),
                    "a weight is a whole number of 0 or more"
                )
                return nil
            }
            weights[member.key] = weight
        }
        guard weights.values.reduce(0, +) > 0 else {
            reader.report(.invalidExperiment, at: weightsNode, path: path.appending("weights"), "at least one weight must be above 0")
            return nil
        }
        return Experiment(name: name, weights: weights)
    }

    /// The component types a component uses: its own and, for collections, its items' (at any depth).
    static func componentTypes(in node: JSONNode, at path: JSONPath) -> [(String, JSONNode, JSONPath)] {
        var found: [(String, JSONNode, JSONPath)] = []
        if let nameNode = node["name"], let name = nameNode.stringValue { found.append((name, nameNode, path.appending("name"))) }
        func search(_ node: JSONNode, _ path: JSONPath) {
            switch node.kind {
            case .object(let members):
                for member in members {
                    if member.key == "component_name", let name = member.value.stringValue {
                        found.append((name, member.value, path.appending(member.key)))
                    }
                    search(member.value, path.appending(member.key))
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { search(element, path.appending(index)) }
            default:
                break
            }
        }
        if let content = node["content"] { search(content, path.appending("content")) }
        return found
    }
}
