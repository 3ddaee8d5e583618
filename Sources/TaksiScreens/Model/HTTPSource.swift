public import TaksiSchema

/// A GET to one of the team's upstream APIs, declared as an `http` source:
///
/// ```yaml
/// stations:
///   type: http
///   upstream: citybikes               # base URL from config.json's "upstreams"
///   path: /v2/networks/{network}      # {name} is a parameter below, percent-encoded
///   query: {fields: "id,name,stations"}
///   parameters:                       # read from the data request's query string, typed
///     network: {type: string, required: true}
///   headers: [Accept-Language]        # forwarded from the data request; nothing else is
///   timeout: 2                        # seconds
///   ttl: 60                           # seconds a response is fresh
///   fallback: {network: {stations: []}}
///   answers:                          # statuses that are answers, not failures
///     "404": {ttl: 10, data: [{identifier: title, content: {value: No such network}}]}
/// ```
///
/// The source's value is the upstream's JSON body; bindings read into it like any other source.
/// A status with an answer is the upstream's word, not its failure: the answer's patch replaces
/// the entries of the components bound to the source, and nothing is degraded.
public struct HTTPSource: Sendable, Hashable {
    /// A piece of the path or of a query value: literal text or a parameter's value.
    public enum Part: Sendable, Hashable {
        case text(String)
        case parameter(String)
    }

    /// The upstream's name in `config.json`'s `upstreams`.
    public var upstream: String
    public var path: [Part]
    /// Query items in order; values may hold parameters.
    public var query: [QueryItem]
    public var parameters: [String: RequestParameter]
    /// Request headers forwarded to the upstream, as written (matched case-insensitively).
    public var forwardedHeaders: [String]
    /// How long to wait for the whole response.
    public var timeout: Duration = .seconds(2)
    /// Seconds a response stays fresh in the cache.
    public var ttl: Duration = .seconds(30)
    /// Seconds after that a stale response is still served while one refresh runs.
    public var staleWhileRevalidate: Duration = .seconds(30)
    /// Seconds after it expired a stale response may stand in when the upstream fails.
    public var staleIfError: Duration = .seconds(300)
    /// Largest response body accepted, in bytes.
    public var maxBytes: Int = 1 << 20
    /// The value used when the upstream fails and no stale copy may stand in.
    public var fallback: JSONValue?
    /// The statuses the source answers (its patches are in ``DataPlan/answers``), most specific first.
    public var answers: [StatusAnswer] = []
    /// How the upstream pages the list its answer holds, when it does (``Paging``).
    public var pages: Paging? = nil

    /// A status an upstream may answer that is not a failure (a deleted product's 404), and how
    /// long that answer is kept.
    public struct StatusAnswer: Sendable, Hashable {
        public var status: StatusMatch
        /// Seconds the answer stays fresh in the cache (and in the data response's `max-age`).
        public var ttl: Duration

        public init(status: StatusMatch, ttl: Duration) {
            self.status = status
            self.ttl = ttl
        }

        /// Seconds an answer is kept unless it says otherwise: short, since what was missing may appear.
        public static let defaultTTL: Duration = .seconds(10)
        /// The keys an answer may have in a screen file.
        public static let keys = ["ttl", "data", "summary"]
    }

    /// Which statuses an answer is for: one (`"404"`) or a class (`4xx`, `5xx`).
    public enum StatusMatch: Sendable, Hashable, Comparable, CustomStringConvertible {
        case status(Int)
        case statusClass(Int)

        /// `"404"`, `"4xx"` or `"5xx"`; nil for anything else (a 2xx is never an answer of its own).
        public init?(key: String) {
            switch key {
            case "4xx": self = .statusClass(4)
            case "5xx": self = .statusClass(5)
            default:
                guard key.utf8.count == 3, let code = Int(key), (400...599).contains(code) else { return nil }
                self = .status(code)
            }
        }

        public func matches(_ code: Int) -> Bool {
            switch self {
            case .status(let status): status == code
            case .statusClass(let digit): code / 100 == digit
            }
        }

        public var description: String {
            switch self {
            case .status(let code): String(code)
            case .statusClass(let digit): "\(digit)xx"
            }
        }

        /// Exact statuses before classes, each in order.
        public static func < (lhs: StatusMatch, rhs: StatusMatch) -> Bool {
            switch (lhs, rhs) {
            case (.status(let a), .status(let b)), (.statusClass(let a), .statusClass(let b)): a < b
            case (.status, .statusClass): true
            case (.statusClass, .status): false
            }
        }
    }

    /// The answer declared for an upstream's status, the most specific first; nil when the status
    /// is a failure.
    public func answer(for status: Int) -> StatusAnswer? {
        answers.first { $0.status.matches(status) }
    }

    /// One query item.
    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: [Part]
    }

    /// The settings with their keys in screen files, for messages and the editor schema.
    public static let keys = [
        "type", "upstream", "path", "query", "parameters", "headers", "timeout", "ttl", "stale_while_revalidate",
        "stale_if_error", "max_bytes", "fallback", "answers", "pages", "summary", "example", "schema",
    ]

    /// Request headers every upstream call carries already (the request's id and W3C trace
    /// context): listing them would put them in the cache key and `Vary`, one entry per request.
    public static let alwaysSentHeaders: Set<String> = ["x-request-id", "traceparent", "tracestate"]

    /// Request headers that are never forwarded: they describe this hop, not the caller.
    public static let unforwardableHeaders: Set<String> = [
        "host", "connection", "keep-alive", "content-length", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-connection", "expect", "accept-encoding",
    ]

    /// The path and query for these parameter values, percent-encoded: `/v2/networks/velib?fields=id`.
    /// ``target(parameters:)``, after checking that every value filling a path segment is one
    /// segment's worth of text.
    /// - Throws: ``DataRequestError/invalidPathValue(name:found:reason:)`` for one that is not.
    public func checkedTarget(parameters values: [String: JSONValue]) throws(DataRequestError) -> String {
        try target(parameters: values, checked: true)
    }

    public func target(parameters values: [String: JSONValue]) -> String {
        // Unchecked, nothing throws.
        (try? target(parameters: values, checked: false)) ?? ""
    }

    /// The target written in one pass into one string (made for every data request that calls
    /// an upstream, so each value's text is made once, and no piece is joined).
    private func target(parameters values: [String: JSONValue], checked: Bool) throws(DataRequestError) -> String {
        var target = ""
        target.reserveCapacity(64)
        try Self.render(path, values, allowed: Self.pathCharacters, checksSegments: checked, into: &target)
        for (index, item) in query.enumerated() {
            target += index == 0 ? "?" : "&"
            target += PercentEncoding.encode(item.name, allowed: Self.literalCharacters)
            target += "="
            try Self.render(item.value, values, allowed: Self.queryCharacters, checksSegments: false, into: &target)
        }
        return target
    }

    /// The path as written, with `{name}` where a value goes: what a trace shows (never the values).
    public var pathTemplate: String {
        path.map { part in
            switch part {
            case .text(let text): text
            case .parameter(let name): "{\(name)}"
            }
        }.joined()
    }

    /// A parameter's value as the text put into a template: strings as they are, other JSON as
    /// written, nothing for a missing value.
    static func text(of value: JSONValue?) -> String {
        switch value {
        case .string(let string): string
        case .none, .null: ""
        case let value?: JSONWriter.string(value)
        }
    }

    /// Why `text` cannot fill a path segment of an upstream request (``PathSegment``'s rule), or
    /// nil when it can.
    public static func pathSegmentProblem(_ text: String) -> String? {
        switch PathSegment.fault(of: text) {
        case nil: nil
        case .empty: "it fills a path segment of an upstream request and is empty; send a value"
        case .dotSegment: "it fills a path segment of an upstream request, where \"\(text)\" would change the path; send a name"
        case .controlCharacter: "it holds a control character, which a path segment of an upstream request never takes"
        }
    }

    /// Whether `name` is an HTTP field name (an RFC 9110 token).
    public static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { tokenCharacters.contains($0) }
    }

    private static let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// Parses `{name}` references out of a path or query template.
    /// - Returns: the parts, or a message saying what is wrong.
    public static func parseTemplate(_ text: String) -> Result<[Part], TemplateError> {
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        while let first = rest.first {
            rest = rest.dropFirst()
            guard first == "{" else {
                if first == "}" { return .failure(TemplateError(message: "a \"}\" without its \"{\"")) }
                literal.append(first)
                continue
            }
            guard let close = rest.firstIndex(of: "}") else {
                return .failure(TemplateError(message: "a \"{\" is never closed; write {parameter}"))
            }
            let name = String(rest[..<close])
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar) else {
                return .failure(TemplateError(message: "{\(name)} is not a parameter name; use letters, digits and '_'"))
            }
            if !literal.isEmpty { parts.append(.text(literal)) }
            literal = ""
            parts.append(.parameter(name))
            rest = rest[rest.index(after: close)...]
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        return .success(parts)
    }

    /// Why a template does not parse.
    public struct TemplateError: Error, Sendable, Equatable {
        public var message: String
    }

    /// The names of the parameters a template refers to.
    /// The template as written: `/products/{id}`.
    static func written(_ parts: [Part]) -> String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .parameter(let name): "{\(name)}"
            }
        }.joined()
    }

    static func parameterNames(_ parts: [Part]) -> [String] {
        parts.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// A path's or a query value's parts, appended to `output`: a value's text keeps only the
    /// `allowed` characters, and in a path (`checksSegments`) must be one segment's worth.
    private static func render(
        _ parts: [Part], _ values: [String: JSONValue], allowed: PercentEncoding.ByteSet, checksSegments: Bool,
        into output: inout String
    ) throws(DataRequestError) {
        for part in parts {
            switch part {
            case .text(let text):
                // Literal text is the author's; only characters that cannot appear are escaped.
                output += PercentEncoding.encode(text, allowed: literalCharacters)
            case .parameter(let name):
                let text = text(of: values[name])
                if checksSegments, let reason = pathSegmentProblem(text) {
                    throw .invalidPathValue(name: name, found: text, reason: reason)
                }
                output += PercentEncoding.encode(text, allowed: allowed)
            }
        }
    }

    /// Characters a parameter's value may keep in a path segment: a value never adds a segment.
    private static let pathCharacters = PercentEncoding.unreserved
    /// Characters a parameter's value may keep in a query value: never `&`, `=`, `+` or `#`.
    private static let queryCharacters = PercentEncoding.unreserved
    /// Delimiters an author may write literally in a template.
    private static let reserved = PercentEncoding.ByteSet("/?&=:@!$'()*,;")
    /// What literal text keeps as written (path and query characters are both unreserved ones).
    private static let literalCharacters = PercentEncoding.unreserved.union(reserved)
}
