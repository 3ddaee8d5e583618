import TaksiSchema

/// Reads parameter declarations, the same for a source's query parameters and a screen's path
/// parameters:
///
/// ```yaml
/// network: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
/// sort: {type: string, default: stars, one_of: [stars, forks, updated]}
/// page: {type: integer, default: 1}
/// ```
extension DefinitionReader {
    /// Where a parameter travels, which decides what it may declare.
    enum ParameterPlace {
        /// In the query string: optional unless `required`, with a `default`.
        case query
        /// A segment of the screen's path: always present, so never a default.
        case path
        /// An action's input: like a query parameter, with a `message` for people when it is refused.
        case input

        var what: String {
            switch self {
            case .query: "a query parameter"
            case .path: "a path parameter"
            case .input: "an input"
            }
        }
    }

    /// Query parameter names the server reads itself: `?version=` is the app version when the
    /// `X-Taksi-Version` header is absent, so a screen parameter of that name could never be read.
    /// `?only=` picks the components a data request answers (a refresh of part of a screen).
    static let reservedParameterNames: Set<String> = ["version", "only"]

    /// Reports a query parameter whose name the server reserves; true when it did.
    mutating func isReservedParameter(_ member: JSONNode.Member, at path: JSONPath) -> Bool {
        guard Self.reservedParameterNames.contains(member.key) else { return false }
        let meaning =
            member.key == "version"
            ? "?version= is the app version (when no X-Taksi-Version header is sent)"
            : "?only= names the components a data request answers"
        report(
            .invalidName, offset: member.keyOffset, path: path,
            "\"\(member.key)\" is reserved: \(meaning); name the parameter otherwise, like app_\(member.key) or api_\(member.key)"
        )
        return true
    }

    /// One parameter's declaration; nil (reported) when it is invalid.
    mutating func parameter(_ node: JSONNode, at path: JSONPath, place: ParameterPlace = .query) -> RequestParameter? {
        let allowed =
            switch place {
            case .query: ["type", "default", "required", "one_of", "pattern", "min_length", "max_length", "summary"]
            case .input: ["type", "default", "required", "one_of", "pattern", "min_length", "max_length", "message", "summary"]
            case .path: ["type", "one_of", "pattern", "min_length", "max_length", "summary"]
            }
        guard let members = object(node, at: path, what: place.what, allowed: allowed) else { return nil }
        if place == .path, members.contains(where: { $0.key == "default" || $0.key == "required" }) { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        var parameter = RequestParameter(isRequired: place == .path)
        if let typeName = string(member("type"), at: path.appending("type"), what: "type") {
            guard let kind = RequestParameter.Kind(rawValue: typeName) else {
                let kinds = RequestParameter.Kind.allCases.map(\.rawValue)
                report(
                    .invalidSource, at: member("type")!, path: path.appending("type"),
                    "unknown parameter type \"\(typeName)\"; use one of \(kinds.joined(separator: ", "))"
                        + NameSuggestion.hint(for: typeName, among: kinds)
                )
                return nil
            }
            parameter.kind = kind
        }
        if place != .path {
            parameter.isRequired = bool(member("required"), at: path.appending("required"), what: "required") ?? false
        }
        guard readTextConstraints(members, into: &parameter, at: path) else { return nil }
        if let oneOf = member("one_of") {
            guard case .array(let values) = oneOf.value, !values.isEmpty, values.allSatisfy(parameter.accepts) else {
                report(
                    .wrongType, at: oneOf, path: path.appending("one_of"),
                    "one_of is a non-empty list of \(parameter.kind.rawValue) values the parameter may take"
                )
                return nil
            }
            parameter.allowedValues = values
        }
        if let allowed = parameter.allowedValues, let defaultNode = member("default"), !allowed.contains(defaultNode.value) {
            report(.invalidSource, at: defaultNode, path: path.appending("default"), "the default must be one of the one_of values")
            return nil
        }
        if let defaultNode = member("default") {
            guard parameter.accepts(defaultNode.value) else {
                report(
                    .wrongType, at: defaultNode, path: path.appending("default"),
                    "the default must be a \(parameter.kind.rawValue), like the parameter"
                )
                return nil
            }
            if parameter.isRequired {
                report(
                    .invalidSource, at: defaultNode, path: path.appending("default"),
                    "a required parameter never uses its default; remove \"default\" or \"required\""
                )
            }
            if let text = defaultNode.value.stringValue, parameter.convert(text) == nil {
                report(
                    .invalidSource, at: defaultNode, path: path.appending("default"),
                    "the default must itself be a \(parameter.expectation)"
                )
                return nil
            }
            parameter.defaultValue = defaultNode.value
        }
        return parameter
    }

    /// `pattern`, `min_length` and `max_length`, which only strings take; false when one is invalid.
    private mutating func readTextConstraints(
        _ members: [JSONNode.Member], into parameter: inout RequestParameter, at path: JSONPath
    ) -> Bool {
        var valid = true
        for member in members where ["pattern", "min_length", "max_length"].contains(member.key) {
            let memberPath = path.appending(member.key)
            guard parameter.kind == .string else {
                report(
                    .invalidSource, at: member.value, path: memberPath,
                    "\(member.key) applies to strings; this parameter is \(parameter.kind.rawValue == "integer" ? "an" : "a") \(parameter.kind.rawValue)"
                )
                valid = false
                continue
            }
            if member.key == "pattern" {
                guard let source = string(member.value, at: memberPath, what: "pattern") else {
                    valid = false
                    continue
                }
                do {
                    parameter.pattern = try TextPattern(source)
                } catch {
                    report(.invalidSource, at: member.value, path: memberPath, "\"\(source)\" is not a regular expression: \(error)")
                    valid = false
                }
            } else {
                guard let length = member.value.value.exactInteger, length >= 0 else {
                    report(.wrongType, at: member.value, path: memberPath, "\(member.key) is a whole number of characters, 0 or more")
                    valid = false
                    continue
                }
                if member.key == "min_length" { parameter.minLength = length } else { parameter.maxLength = length }
            }
        }
        if valid, let low = parameter.minLength, let high = parameter.maxLength, low > high {
            report(
                .invalidSource, at: members.first { $0.key == "max_length" }!.value, path: path.appending("max_length"),
                "max_length (\(high)) is below min_length (\(low))")
            valid = false
        }
        return valid
    }
}
