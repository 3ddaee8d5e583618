import TaksiSchema
import TaksiScreens

/// How screens are described to people and tools: the entries of `GET /screens`, which the
/// preview's catalog shows as well (parameters, actions, experiments).
enum ScreenIndex {
    /// A parameter as the index and the preview show it: its type and constraints, as declared.
    static func parameterEntry(_ parameter: RequestParameter) -> JSONValue {
        var entry: [String: JSONValue] = ["type": .string(parameter.kind.rawValue)]
        if let values = parameter.allowedValues { entry["one_of"] = .array(values) }
        if let pattern = parameter.pattern { entry["pattern"] = .string(pattern.source) }
        if let length = parameter.minLength { entry["min_length"] = .number(Double(length)) }
        if let length = parameter.maxLength { entry["max_length"] = .number(Double(length)) }
        return .object(entry)
    }

    /// An action as the index and the preview show it: its inputs (typed like parameters, with
    /// `required`, `default` and `message`) and the outcomes it answers.
    static func actionEntry(_ action: ScreenAction) -> JSONValue {
        var inputs: [String: JSONValue] = [:]
        for input in action.inputs {
            var entry = parameterEntry(input.parameter).objectValue ?? [:]
            entry["required"] = .bool(input.parameter.isRequired)
            if let value = input.parameter.defaultValue { entry["default"] = value }
            if let message = input.message { entry["message"] = .string(message) }
            inputs[input.name] = .object(entry)
        }
        var entry: [String: JSONValue] = [
            "name": .string(action.name), "inputs": .object(inputs),
            "answers": .array(action.answers.keys.sorted().map { .string($0.description) }),
        ]
        if let summary = action.summary { entry["summary"] = .string(summary) }
        return .object(entry)
    }

    /// A screen's experiments as the index and the preview show them: name, version requirement,
    /// weights, `status` (`running`, `winner` or `stopped`, with the `winner`), the audience, the
    /// holdout and rollout (percentages) and the layer.
    static func experimentEntries(_ variants: ScreenVariants) -> [JSONValue] {
        variants.versions.compactMap { version in
            guard let experiment = version.experiment else { return nil }
            func percent(_ buckets: Int) -> JSONValue { .number(Double(buckets) / 100) }
            var entry: [String: JSONValue] = [
                "name": .string(experiment.name),
                "version": version.requirement.map { .string($0.description) } ?? .null,
                "weights": .object(
                    Dictionary(uniqueKeysWithValues: experiment.weights.map { ($0.alternative, .number(Double($0.weight))) })),
                "holdout": percent(experiment.holdout),
                "rollout": percent(experiment.rollout ?? Experiment.bucketCount - experiment.holdout),
            ]
            switch experiment.decision {
            case .running: entry["status"] = "running"
            case .stopped: entry["status"] = "stopped"
            case .winner(let winner):
                entry["status"] = "winner"
                entry["winner"] = .string(winner)
            }
            let audience = experiment.audience
            if !audience.isEveryone {
                var described: [String: JSONValue] = [:]
                if let versions = audience.versions { described["versions"] = .string(versions.description) }
                if let platforms = audience.platforms { described["platforms"] = .array(platforms.map(JSONValue.string)) }
                if let locales = audience.locales { described["locales"] = .array(locales.map(JSONValue.string)) }
                entry["audience"] = .object(described)
            }
            if let layer = experiment.layer {
                entry["layer"] = [
                    "name": .string(layer.name), "from": percent(layer.buckets.lowerBound), "to": percent(layer.buckets.upperBound),
                ]
            }
            return .object(entry)
        }
    }

    /// The entry of a screen in `GET /screens`: its parameters, variants (with revisions) and actions.
    static func entry(_ variants: ScreenVariants, revisions: [String: String]) -> JSONValue {
        let all = variants.all
        let experiments = experimentEntries(variants)
        let pattern = variants.pattern
        return [
            "name": .string(variants.name),
            "parameters": .object(pattern.parameters.mapValues(parameterEntry)),
            "requires_data": .bool(all.contains(where: \.requiresData)),
            "variants": .array(
                all.map {
                    [
                        "id": .string($0.variantID), "version": $0.requirement.map { .string($0.description) } ?? .null,
                        "revision": revisions[$0.file].map { .string($0) } ?? .null,
                        "alternative": .string($0.alternative), "requires_data": .bool($0.requiresData),
                        "actions": .array($0.actions.map(actionEntry)),
                        "uses": .array(AppManifest.componentTypes(of: $0.skeleton).map(JSONValue.string)),
                    ]
                }
            ),
            "experiments": .array(experiments),
        ]
    }
}
