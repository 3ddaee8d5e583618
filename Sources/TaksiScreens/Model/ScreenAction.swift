public import TaksiSchema

/// A named intent a screen accepts, declared under `actions` in a screen file and answered at
/// `POST /screens/<path>/actions/<name>`:
///
/// ```yaml
/// actions:
///   submit:
///     inputs:                                  # typed like parameters
///       email: {type: string, required: true, pattern: "[^@ ]+@[^@ ]+", max_length: 254}
///     call:                                    # optional: one request to an upstream
///       upstream: auth
///       method: POST
///       path: /sessions
///       body: {email: {$bind: inputs.email}}
///     answers:                                 # per outcome: a data patch and/or the next action
///       success: {then: {identifier: navigation, content: {interface_identifier: home}}}
///       "401": {data: [{identifier: error, content: {value: Wrong email or password}}]}
///       invalid: {data: [{identifier: error, content: {value: {$bind: errors.email, default: " "}}}]}
/// ```
///
/// The answer always decodes as the client's data payload (`{"interface_data": [...]}`), with the
/// next action under `then`, which the client's data decoder ignores.
public struct ScreenAction: Sendable {
    public var name: String
    public var summary: String?
    /// The inputs, in the order the file declares them.
    public var inputs: [Input]
    /// The upstream request the action makes, if any.
    public var call: Call?
    /// The answers the file declares, by outcome.
    public var answers: [Outcome: Answer]

    /// One declared input: a name, the parameter rules its value must meet, and what to tell
    /// people when it does not.
    public struct Input: Sendable {
        public var name: String
        public var parameter: RequestParameter
        /// Said instead of the generic message when the value is refused (`errors.<name>` in an
        /// answer, `message` in the answer's `errors`): "Enter an email like ada@example.com".
        public var message: String?
    }

    /// The upstream request: an http source's path, query, forwarded headers, timeout and size
    /// limit (``HTTPSource``), with a method and a JSON body built from the inputs.
    public struct Call: Sendable {
        /// The methods a call makes.
        public enum Method: String, Sendable, CaseIterable {
            case GET, POST, PUT, PATCH, DELETE

            /// Whether sending it twice does what sending it once does (RFC 9110, 9.2.2), so a
            /// connection that failed may be tried again.
            public var isIdempotent: Bool { self == .GET || self == .PUT || self == .DELETE }
        }

        /// The keys a call may have in a screen file.
        public static let keys = ["upstream", "method", "path", "query", "headers", "body", "timeout", "max_bytes", "summary"]

        public var method: Method
        /// Where and how to call: its `parameters` are the action's inputs.
        public var request: HTTPSource
        /// The JSON body, over the sources `inputs` and `path`; nil sends none.
        public var body: ContentExpression?
    }

    /// One declared answer.
    public struct Answer: Sendable {
        /// The HTTP status; nil for the outcome's default (``Outcome/defaultStatus(for:)``).
        public var status: Int?
        /// The data entries, over the sources `inputs`, `path`, `response` and `errors`.
        public var patch: DataPlan
        /// The next action, in the client's action shape.
        public var then: ContentExpression?

        /// The keys an answer may have in a screen file.
        public static let keys = ["status", "data", "then", "summary"]
    }

    /// The outcomes an answer is declared for, by its key in the file.
    public enum Outcome: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// No call, or the upstream answered 2xx (`success`).
        case success
        /// The inputs do not meet their declarations; nothing is called (`invalid`).
        case invalid
        /// The upstream answered this status (`"409"`), 400 to 599.
        case status(Int)
        /// The upstream answered a status of this class (`4xx`, `5xx`): 4 or 5.
        case statusClass(Int)
        /// No complete answer within the call's timeout (`timeout`).
        case timeout
        /// Any other failure, and any outcome without an answer of its own (`failure`).
        case failure

        /// The keys written in files, for messages.
        public static let keyNames = ["success", "invalid", "4xx", "5xx", "<status, like 409>", "timeout", "failure"]

        public init?(key: String) {
            switch key {
            case "success": self = .success
            case "invalid": self = .invalid
            case "timeout": self = .timeout
            case "failure": self = .failure
            default:
                // A status or a class, as a source's answers take them.
                switch HTTPSource.StatusMatch(key: key) {
                case .status(let code)?: self = .status(code)
                case .statusClass(let digit)?: self = .statusClass(digit)
                case nil: return nil
                }
            }
        }

        public var description: String {
            switch self {
            case .success: "success"
            case .invalid: "invalid"
            case .status(let code): String(code)
            case .statusClass(let digit): "\(digit)xx"
            case .timeout: "timeout"
            case .failure: "failure"
            }
        }

        /// Whether the upstream's body (`response`) can be bound in this answer.
        var hasResponse: Bool {
            switch self {
            case .success, .status, .statusClass, .failure: true
            case .invalid, .timeout: false
            }
        }

        /// Whether this outcome needs a call to happen at all.
        var needsCall: Bool {
            switch self {
            case .success, .invalid: false
            case .status, .statusClass, .timeout, .failure: true
            }
        }
    }

    /// What happened to a submit, which decides the answer.
    public enum Result: Sendable, Equatable {
        /// The inputs were valid and there is no call.
        case done
        /// The inputs do not meet their declarations.
        case invalid([FieldError])
        /// The upstream answered: its status and its JSON body (nil when empty or not JSON).
        case answered(status: Int, body: JSONValue?)
        /// The call did not complete within its timeout.
        case timedOut
        /// The call failed otherwise (refused, a 2xx body that is not JSON, too large, a redirect).
        case failed

        /// The outcome reported in the answer's `outcome` key.
        public var name: String {
            switch self {
            case .done: "success"
            case .invalid: "invalid"
            case .answered(let status, _) where (200..<300).contains(status): "success"
            case .answered(let status, _) where (400..<500).contains(status): "rejected"
            case .answered, .failed: "failed"
            case .timedOut: "timeout"
            }
        }

        /// The declared outcomes that may answer it, most specific first.
        var candidates: [Outcome] {
            switch self {
            case .done: [.success]
            case .invalid: [.invalid]
            case .answered(let status, _) where (200..<300).contains(status): [.success]
            case .answered(let status, _): [.status(status), .statusClass(status / 100), .failure]
            case .timedOut: [.timeout, .failure]
            case .failed: [.failure]
            }
        }

        /// The HTTP status answered when the declared answer names none.
        public var defaultStatus: Int {
            switch self {
            case .done: 200
            case .answered(let status, _) where (200..<300).contains(status): 200
            case .invalid: 422
            case .answered(let status, _) where (400..<500).contains(status): 422
            case .timedOut: 504
            case .answered, .failed: 502
            }
        }
    }

    /// Why one input was refused: machine-readable (`input`, `code`) and a sentence for people.
    public struct FieldError: Sendable, Equatable {
        public var input: String
        /// `required`, `invalid` (wrong type or rule), `unknown` (not declared).
        public var code: String
        public var message: String

        public var jsonValue: JSONValue {
            ["input": .string(input), "code": .string(code), "message": .string(message)]
        }
    }

    /// Inputs as sent: a form's text values, or a JSON object's values.
    public enum Submitted: Sendable {
        case form([String: String])
        case json([String: JSONValue])

        /// The values as sent (a form's as text).
        public var values: [String: JSONValue] {
            switch self {
            case .form(let fields): fields.mapValues { .string($0) }
            case .json(let object): object
            }
        }
    }

    /// The typed inputs, or every problem with them. A form's values are converted like query
    /// parameters; a JSON value must have its input's type, or be text that converts to it (an
    /// app often sends a text field's contents as they are). Empty text is a field left blank: the
    /// input's default, or `required` when it has none.
    ///
    /// Undeclared inputs are ignored, never refused: an app build newer than the screens (it sends
    /// a field the next screens will declare) can still submit, and an older screen set keeps
    /// working with it. They are never sent on (only declared inputs bind into a call), and are
    /// named in `ignored` for the answer to say so.
    /// - Returns: the typed values, the errors (none when the inputs are valid), and the names of
    ///   the undeclared inputs, sorted.
    public func validate(_ submitted: Submitted) -> (values: [String: JSONValue], errors: [FieldError], ignored: [String]) {
        var values: [String: JSONValue] = [:]
        var errors: [FieldError] = []
        let declared = Set(inputs.map(\.name))
        let given = submitted.values
        for input in inputs {
            let parameter = input.parameter
            let value = given[input.name]
            switch value {
            case nil, .null?:
                if let fallback = parameter.defaultValue {
                    values[input.name] = fallback
                } else if parameter.isRequired {
                    errors.append(Self.required(input))
                }
            case .string(let text)?:
                if text.isEmpty {
                    // A blank field is a field left out.
                    if let fallback = parameter.defaultValue {
                        values[input.name] = fallback
                    } else if parameter.isRequired {
                        errors.append(Self.required(input))
                    }
                    continue
                }
                guard let converted = parameter.convert(text) else {
                    errors.append(Self.invalid(input))
                    continue
                }
                values[input.name] = converted
            case let value?:
                guard parameter.kind != .string, parameter.accepts(value),
                    parameter.allowedValues.map({ $0.contains(value) }) ?? true
                else {
                    errors.append(Self.invalid(input))
                    continue
                }
                values[input.name] = parameter.kind == .integer ? .number(Double(value.exactInteger ?? 0)) : value
            }
        }
        return (values, errors, given.keys.filter { !declared.contains($0) }.sorted())
    }

    private static func required(_ input: Input) -> FieldError {
        FieldError(input: input.name, code: "required", message: input.message ?? "\(input.name) is required")
    }

    private static func invalid(_ input: Input) -> FieldError {
        let expected = input.parameter.expectation
        let article = expected.hasPrefix("one of") ? "" : expected == "integer" ? "an " : "a "
        return FieldError(input: input.name, code: "invalid", message: input.message ?? "\(input.name) must be \(article)\(expected)")
    }

    /// The answer to a submit: its HTTP status and body, `{"interface_data": [...], "outcome": ...}`
    /// with `then` and `errors` when there are some, and why a value was left out (for logs).
    /// - Parameters:
    ///   - inputs: the typed inputs (or, for invalid ones, the values as sent).
    ///   - path: the screen's path parameters.
    public func answer(
        to result: Result, inputs: [String: JSONValue], path: [String: JSONValue], catalog: ComponentCatalog
    ) -> (status: Int, body: JSONValue, problems: [DataPlan.Problem]) {
        let declared = result.candidates.lazy.compactMap { answers[$0] }.first
        var values: [String: JSONValue] = ["inputs": .object(inputs), "path": .object(path)]
        var fieldErrors: [FieldError] = []
        switch result {
        case .answered(_, let body?): values["response"] = body
        case .invalid(let errors):
            fieldErrors = errors
            values["errors"] = .object(Dictionary(errors.map { ($0.input, .string($0.message)) }, uniquingKeysWith: { first, _ in first }))
        default: break
        }
        var body: [String: JSONValue] = ["outcome": .string(result.name)]
        var problems: [DataPlan.Problem] = []
        if let declared {
            let (data, found) = declared.patch.build(values: values, catalog: catalog)
            body["interface_data"] = data.jsonValue["interface_data"]
            problems = found
            if let then = declared.then {
                let evaluation = then.evaluate(values)
                // A next action that cannot be made (a value missing from the upstream's answer) is
                // left out; what is sent always decodes.
                if let action = evaluation.value, catalog.check(action, as: .action, mode: .data).isValid {
                    body["then"] = action
                } else {
                    problems.append(
                        DataPlan.Problem(
                            identifier: "then", message: evaluation.problems.first ?? "the next action does not decode; it is left out",
                            isLoss: true,
                            field: "then"
                        )
                    )
                }
            }
        } else {
            body["interface_data"] = []
        }
        if !fieldErrors.isEmpty { body["errors"] = .array(fieldErrors.map(\.jsonValue)) }
        return (declared?.status ?? result.defaultStatus, .object(body), problems)
    }
}
