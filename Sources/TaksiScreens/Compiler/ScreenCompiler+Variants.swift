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
                node, at: path, what: "an experiment",
                allowed: ["name", "weights", "summary", "audience", "holdout", "rollout", "layer", "winner", "stopped"],
                required: ["name", "weights"]
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
        guard let weights = readWeights(weightsNode, at: path.appending("weights"), reader: &reader) else { return nil }
        var experiment = Experiment(name: name, weights: weights)
        func member(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
        if let audience = member("audience") {
            guard let read = readAudience(audience, at: path.appending("audience"), reader: &reader) else { return nil }
            experiment.audience = read
        }
        if let node = member("holdout") {
            guard let buckets = readPercentage(node, at: path.appending("holdout"), what: "holdout", reader: &reader) else { return nil }
            experiment.holdout = buckets
        }
        if let node = member("rollout") {
            guard let buckets = readPercentage(node, at: path.appending("rollout"), what: "rollout", reader: &reader) else { return nil }
            guard experiment.holdout + buckets <= Experiment.bucketCount else {
                reader.report(
                    .invalidExperiment, at: node, path: path.appending("rollout"),
                    "holdout and rollout together are over 100% of the audience; the rollout can be at most \(Self.percentage(Experiment.bucketCount - experiment.holdout))"
                )
                return nil
            }
            experiment.rollout = buckets
        }
        if let node = member("layer") {
            guard let layer = readLayer(node, at: path.appending("layer"), reader: &reader) else { return nil }
            experiment.layer = layer
        }
        guard let decision = readDecision(winner: member("winner"), stopped: member("stopped"), at: path, reader: &reader) else {
            return nil
        }
        experiment.decision = decision
        return experiment
    }

    /// An experiment's `weights`: alternative names and whole numbers of 0 or more, one above 0.
    private static func readWeights(_ weightsNode: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> [String: Int]? {
        guard let weightMembers = weightsNode.members, !weightMembers.isEmpty else {
            reader.report(
                .invalidExperiment, at: weightsNode, path: path,
                "weights must be an object of alternative names and whole-number weights, like {\"default\": 50, \"B\": 50}"
            )
            return nil
        }
        var weights: [String: Int] = [:]
        for member in weightMembers {
            guard let weight = member.value.value.exactInteger, weight >= 0 else {
                reader.report(
                    .invalidExperiment, at: member.value, path: path.appending(member.key),
                    "a weight is a whole number of 0 or more"
                )
                return nil
            }
            weights[member.key] = weight
        }
        let total = weights.values.reduce(0, +)
        guard total > 0 else {
            reader.report(.invalidExperiment, at: weightsNode, path: path, "at least one weight must be above 0")
            return nil
        }
        // Shares of their sum either way; a sum other than 100 is usually a slip (60 and 60).
        if total != 100 {
            let shares = weightMembers.map { member in
                "\(member.key) \(Self.percentage(weights[member.key] ?? 0, of: total))"
            }
            reader.report(
                .experimentWeights, at: weightsNode, path: path,
                "the weights add up to \(total), not 100, so each alternative gets its weight's share of \(total): "
                    + shares.joined(separator: ", ") + "; make them add up to 100 to read them as percentages",
                severity: .warning)
        }
        return weights
    }

    /// `weight` as a percentage of `total`, one decimal where it is not whole: `33.3%`, `50%`.
    static func percentage(_ weight: Int, of total: Int) -> String {
        let tenths = (weight * 1000 + total / 2) / total
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
    }

    /// An experiment's decision: a `winner`, `stopped: true`, or neither (running); nil when the
    /// file says both (reported). A mistyped one is reported by the reader and counts as absent.
    private static func readDecision(
        winner winnerNode: JSONNode?, stopped stoppedNode: JSONNode?, at path: JSONPath, reader: inout DefinitionReader
    ) -> Experiment.Decision? {
        let winner = winnerNode.flatMap { reader.string($0, at: path.appending("winner"), what: "the winner") }
        let stopped = stoppedNode.flatMap { reader.bool($0, at: path.appending("stopped"), what: "stopped") } ?? false
        if let winner, stopped, let node = stoppedNode {
            reader.report(
                .invalidExperiment, at: node, path: path.appending("stopped"),
                "an experiment is either stopped (everyone gets default) or has a winner (everyone gets \"\(winner)\"), not both; remove one"
            )
            return nil
        }
        if let winner { return .winner(winner) }
        return stopped ? .stopped : .running
    }

    /// An experiment's `audience`: `versions` (a requirement), `platforms` and `locales` (lists).
    private static func readAudience(_ node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> Experiment.Audience? {
        guard let members = reader.object(node, at: path, what: "an audience", allowed: ["versions", "platforms", "locales"]) else {
            return nil
        }
        var audience = Experiment.Audience()
        var valid = true
        for member in members {
            let memberPath = path.appending(member.key)
            switch member.key {
            case "versions":
                audience.versions = readRequirement(member.value, at: memberPath, reader: &reader)
                valid = valid && audience.versions != nil
            case "platforms":
                audience.platforms = readNames(
                    member.value, at: memberPath, reader: &reader,
                    what:
                        "a platform is a lower-case name of letters, digits and '-' (ios, android, web), as apps send it in X-Taksi-Platform"
                ) {
                    !$0.isEmpty && $0.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
                }
                valid = valid && audience.platforms != nil
            case "locales":
                audience.locales = readNames(
                    member.value, at: memberPath, reader: &reader, what: "a locale is a language tag like de, en-GB or pt-BR",
                    isValid: Localization.isLanguageRange)
                valid = valid && audience.locales != nil
            default:
                break
            }
        }
        return valid ? audience : nil
    }

    /// A non-empty list of distinct names, each checked by `isValid`.
    private static func readNames(
        _ node: JSONNode, at path: JSONPath, reader: inout DefinitionReader, what: String, isValid: (String) -> Bool
    ) -> [String]? {
        guard let elements = node.elements, !elements.isEmpty else {
            reader.report(.invalidExperiment, at: node, path: path, "a non-empty list is needed here; \(what)")
            return nil
        }
        var names: [String] = []
        for (index, element) in elements.enumerated() {
            guard let name = element.stringValue, isValid(name) else {
                reader.report(.invalidExperiment, at: element, path: path.appending(index), what)
                return nil
            }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// A percentage from 0 to 100 in steps of 0.01, as buckets of 10,000.
    private static func readPercentage(_ node: JSONNode, at path: JSONPath, what: String, reader: inout DefinitionReader) -> Int? {
        guard let number = node.value.numberValue, (0...100).contains(number), (number * 100).rounded() == number * 100 else {
            reader.report(
                .invalidExperiment, at: node, path: path,
                "the \(what) is a percentage of the audience from 0 to 100, in steps of 0.01 (like 5 or 0.5), found \(JSONWriter.string(node.value))"
            )
            return nil
        }
        return Int((number * 100).rounded())
    }

    /// 1234 buckets as `12.34%`.
    static func percentage(_ buckets: Int) -> String {
        buckets % 100 == 0 ? "\(buckets / 100)%" : "\(Double(buckets) / 100)%"
    }

    /// An experiment's `layer`: `{name, from, to}`, percentages of the layer's users.
    private static func readLayer(_ node: JSONNode, at path: JSONPath, reader: inout DefinitionReader) -> Experiment.Layer? {
        guard
            let members = reader.object(
                node, at: path, what: "a layer", allowed: ["name", "from", "to"], required: ["name", "from", "to"]),
            let nameNode = members.first(where: { $0.key == "name" })?.value,
            let name = reader.string(nameNode, at: path.appending("name"), what: "the layer's name"),
            let fromNode = members.first(where: { $0.key == "from" })?.value,
            let toNode = members.first(where: { $0.key == "to" })?.value,
            let from = readPercentage(fromNode, at: path.appending("from"), what: "layer's from", reader: &reader),
            let to = readPercentage(toNode, at: path.appending("to"), what: "layer's to", reader: &reader)
        else { return nil }
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || $0 == "-" }) else {
            reader.report(.invalidName, at: nameNode, path: path.appending("name"), "a layer's name uses letters, digits, '-' and '_'")
            return nil
        }
        guard from < to else {
            reader.report(
                .invalidExperiment, at: toNode, path: path.appending("to"),
                "the experiment's range of the layer is empty: \"to\" must be above \"from\" (like from: 0, to: 50)")
            return nil
        }
        return Experiment.Layer(name: name, buckets: from..<to)
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
