import TaksiSchema

/// Reads an `http` source, or an action's call, from its members: the upstream, the path and
/// query templates (each `{name}` a declared parameter, an action's input or a path parameter of
/// the screen), the forwarded headers and the limits. One step per part, each reporting its own
/// mistakes, so every mistake of a source is reported at once.
struct HTTPSourceReader {
    let members: [JSONNode.Member]
    let path: JSONPath
    let pattern: ScreenPattern
    /// The configured upstreams, when known.
    let upstreams: ConfiguredUpstreams?
    /// An action's inputs, which its call's templates fill in; nil for an http source.
    let inputs: [String: RequestParameter]?
    /// Whether every part read so far is valid.
    private var valid = true

    /// What the source answers as the upstream's OpenAPI document has it, else as the files of a
    /// `file:` upstream show it (one example per file the path can reach), read by
    /// ``read(reporting:)``; nil when neither says.
    private(set) var knownAnswer: KnownAnswer?
    /// What the source's `answers` statuses answer, as the OpenAPI document has it, by status.
    private(set) var statusAnswers: [HTTPSource.StatusMatch: KnownAnswer] = [:]

    init(
        members: [JSONNode.Member], path: JSONPath, pattern: ScreenPattern, upstreams: ConfiguredUpstreams?,
        inputs: [String: RequestParameter]?
    ) {
        self.members = members
        self.path = path
        self.pattern = pattern
        self.upstreams = upstreams
        self.inputs = inputs
    }

    func member(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }

    /// Marks the source as wrong (its mistake reported), so it is not served and bindings to it are not reported again.
    mutating func markInvalid() { valid = false }

    /// The source, or nil when a part of it is wrong (each mistake reported on `reader`).
    mutating func read(reporting reader: inout DefinitionReader) -> HTTPSource? {
        let parameters = readParameters(&reader)
        let upstream = readUpstream(&reader)
        let pathParts = readPath(parameters: parameters, &reader)
        let query = readQuery(parameters: parameters, &reader)
        let headers = readForwardedHeaders(&reader)
        guard valid, let upstream, let pathParts else { return nil }
        var source = HTTPSource(upstream: upstream, path: pathParts, query: query, parameters: parameters, forwardedHeaders: headers)
        readLimits(into: &source, &reader)
        source.fallback = member("fallback")?.value
        if inputs == nil { source.answers = readAnswers(&reader) }
        if inputs == nil { source.pages = readPages(&reader) }
        if inputs == nil, valid, let directory = upstreams?.directories[upstream] {
            knownAnswer = readFiles(of: upstream, in: directory, path: pathParts, &reader)
        }
        if inputs == nil, valid, let document = upstreams?.documents[upstream] {
            knownAnswer = readOperation(of: upstream, in: document, path: pathParts, answers: source.answers, &reader) ?? knownAnswer
            if valid, let parameter = source.pages?.parameter {
                checkPageParameter(parameter, of: upstream, in: document, path: pathParts, &reader)
            }
        }
        return valid ? source : nil
    }

    /// What the operation `GET path` of the upstream's OpenAPI document answers; a path the
    /// document does not have is reported with the paths it has.
    private mutating func readOperation(
        of upstream: String, in document: OpenAPIDocument, path parts: [HTTPSource.Part], answers: [HTTPSource.StatusAnswer],
        _ reader: inout DefinitionReader
    ) -> KnownAnswer? {
        let written = HTTPSource.written(parts)
        guard let node = member("path") else { return nil }
        switch document.operation("GET", written) {
        case .found(let template, let answer):
            for answer in answers {
                statusAnswers[answer.status] = document.answer("GET", template, status: answer.status)
            }
            return answer
        case .noPath:
            reader.report(.unknownOperation, at: node, path: path.appending("path"), document.notFound("GET", written, upstream: upstream))
        case .noMethod(let template, let methods):
            reader.report(
                .unknownOperation, at: node, path: path.appending("path"),
                "\(template) in the OpenAPI document of upstream \"\(upstream)\" (\(document.path)) answers \(methods.joined(separator: ", ")), not GET, which a source sends; call it from an action instead"
            )
        }
        markInvalid()
        return nil
    }

    /// The query parameters its templates may name: the source's `parameters`, or the action's inputs.
    private mutating func readParameters(_ reader: inout DefinitionReader) -> [String: RequestParameter] {
        var parameters: [String: RequestParameter] = inputs ?? [:]
        guard inputs == nil, let parametersNode = member("parameters") else { return parameters }
        guard let parameterMembers = parametersNode.members else {
            reader.report(
                .wrongType, at: parametersNode, path: path.appending("parameters"), "parameters must be an object of named query parameters"
            )
            valid = false
            return parameters
        }
        for parameterMember in parameterMembers {
            let parameterPath = path.appending("parameters").appending(parameterMember.key)
            guard !reader.isReservedParameter(parameterMember, at: parameterPath),
                !isPathParameter(parameterMember, at: parameterPath, &reader),
                let parameter = reader.parameter(parameterMember.value, at: parameterPath)
            else {
                valid = false
                continue
            }
            parameters[parameterMember.key] = parameter
        }
        return parameters
    }

    private func isPathParameter(_ member: JSONNode.Member, at path: JSONPath, _ reader: inout DefinitionReader) -> Bool {
        Self.isPathParameter(member, at: path, of: pattern, &reader)
    }

    /// Reports a query parameter named like one of the screen's path parameters; true when it did.
    static func isPathParameter(
        _ member: JSONNode.Member, at path: JSONPath, of pattern: ScreenPattern, _ reader: inout DefinitionReader
    ) -> Bool {
        guard pattern.parameters[member.key] != nil else { return false }
        reader.report(
            .invalidName, offset: member.keyOffset, path: path,
            "\"\(member.key)\" is a path parameter of this screen (\(pattern.name)); an http source's path and query use {\(member.key)} as they are, bindings read path.\(member.key); remove this declaration"
        )
        return true
    }

    /// The upstream's name: a key of `upstreams` in config.json (checked when the names are known).
    private mutating func readUpstream(_ reader: inout DefinitionReader) -> String? {
        let upstream = reader.string(member("upstream"), at: path.appending("upstream"), what: "upstream")
        guard let upstream, let node = member("upstream") else { return upstream }
        if upstream.isEmpty || !upstream.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || $0 == "-" }) {
            reader.report(
                .invalidSource, at: node, path: path.appending("upstream"),
                "upstream names a key of \"upstreams\" in config.json, like citybikes")
            valid = false
        } else if let known = upstreams?.names, !known.contains(upstream) {
            let names = known.sorted()
            reader.report(
                .unknownUpstream, at: node, path: path.appending("upstream"),
                "upstream \"\(upstream)\" is not configured; add it to \"upstreams\" in config.json and restart the server, which reads its configuration at start-up"
                    + (names.isEmpty ? "" : " (configured: \(names.joined(separator: ", ")))")
                    + NameSuggestion.hint(for: upstream, among: names)
            )
            valid = false
        }
        return upstream
    }

    /// The path template, starting with `/`.
    private mutating func readPath(parameters: [String: RequestParameter], _ reader: inout DefinitionReader) -> [HTTPSource.Part]? {
        guard let pathNode = member("path") else { return nil }
        guard pathNode.stringValue?.hasPrefix("/") != false else {
            reader.report(.invalidSource, at: pathNode, path: path.appending("path"), "the path starts with \"/\", like /v2/networks")
            valid = false
            return nil
        }
        return template(pathNode, at: path.appending("path"), what: "the path", parameters: parameters, &reader)
    }

    /// The query's items, each value a template.
    private mutating func readQuery(parameters: [String: RequestParameter], _ reader: inout DefinitionReader) -> [HTTPSource.QueryItem] {
        guard let queryNode = member("query") else { return [] }
        guard let items = queryNode.members else {
            reader.report(.wrongType, at: queryNode, path: path.appending("query"), "query must be an object of names and values")
            valid = false
            return []
        }
        var query: [HTTPSource.QueryItem] = []
        for item in items {
            let itemPath = path.appending("query").appending(item.key)
            if let value = template(item.value, at: itemPath, what: "query value", parameters: parameters, &reader) {
                query.append(HTTPSource.QueryItem(name: item.key, value: value))
            } else {
                valid = false
            }
        }
        return query
    }

    /// A template of the path or a query value: text with `{name}` placeholders that name known values.
    private func template(
        _ node: JSONNode, at path: JSONPath, what: String, parameters: [String: RequestParameter], _ reader: inout DefinitionReader
    ) -> [HTTPSource.Part]? {
        let text: String
        switch node.value {
        case .string(let string): text = string
        case .number, .bool: text = JSONWriter.string(node.value)
        default:
            reader.report(.wrongType, at: node, path: path, "\(what) must be a string, found \(node.typeName)")
            return nil
        }
        let parts: [HTTPSource.Part]
        switch HTTPSource.parseTemplate(text) {
        case .failure(let error):
            reader.report(.invalidSource, at: node, path: path, "\(what) \"\(text)\": \(error.message)")
            return nil
        case .success(let parsed):
            parts = parsed
        }
        for name in HTTPSource.parameterNames(parts) where parameters[name] == nil && pattern.parameters[name] == nil {
            let known = parameters.keys.sorted() + pattern.parameterNames
            reader.report(
                .invalidSource, at: node, path: path,
                (inputs == nil
                    ? "{\(name)} is not a parameter of this source or of the screen's path; declare it under \"parameters\""
                    : "{\(name)} is not an input of this action or a parameter of the screen's path; declare it under \"inputs\"")
                    + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))")
                    + NameSuggestion.hint(for: name, among: known)
            )
            return nil
        }
        return parts
    }

    /// The request headers forwarded to the upstream, by name.
    private mutating func readForwardedHeaders(_ reader: inout DefinitionReader) -> [String] {
        guard let headersNode = member("headers") else { return [] }
        guard case .array(let elements) = headersNode.kind else {
            reader.report(
                .wrongType, at: headersNode, path: path.appending("headers"),
                "headers must be a list of request header names, like [Authorization]")
            valid = false
            return []
        }
        var headers: [String] = []
        for (index, element) in elements.enumerated() {
            let elementPath = path.appending("headers").appending(index)
            guard let name = reader.string(element, at: elementPath, what: "a header name") else {
                valid = false
                continue
            }
            if !HTTPSource.isHeaderName(name) {
                reader.report(.invalidSource, at: element, path: elementPath, "\"\(name)\" is not a header name")
                valid = false
            } else if HTTPSource.alwaysSentHeaders.contains(name.lowercased()) {
                reader.report(
                    .invalidSource, at: element, path: elementPath,
                    "\(name) is sent on every upstream call already (with X-Request-Id, traceparent and tracestate), and never as part of the cache key; remove it",
                    severity: .warning)
            } else if HTTPSource.unforwardableHeaders.contains(name.lowercased()) {
                reader.report(
                    .invalidSource, at: element, path: elementPath, "\(name) describes this connection and is never forwarded; remove it")
                valid = false
            } else {
                headers.append(name)
            }
        }
        return headers
    }

    /// The timeout, cache times and size limit, where the source sets them.
    private mutating func readLimits(into source: inout HTTPSource, _ reader: inout DefinitionReader) {
        if let timeout = seconds("timeout", 0.001...60, &reader) { source.timeout = timeout }
        if let ttl = seconds("ttl", 0...86_400, &reader) { source.ttl = ttl }
        if let swr = seconds("stale_while_revalidate", 0...86_400, &reader) { source.staleWhileRevalidate = swr }
        if let sie = seconds("stale_if_error", 0...604_800, &reader) { source.staleIfError = sie }
        if let node = member("max_bytes") {
            if let bytes = node.value.exactInteger, (1...(64 << 20)).contains(bytes) {
                source.maxBytes = bytes
            } else {
                reader.report(
                    .invalidSource, at: node, path: path.appending("max_bytes"), "max_bytes is a whole number of bytes from 1 to 67108864")
                valid = false
            }
        }
    }

    /// The statuses the source answers, with how long each answer is kept; their `data` is
    /// compiled with the screen's components (``ScreenCompiler/readSourceAnswers(_:at:components:)``).
    private mutating func readAnswers(_ reader: inout DefinitionReader) -> [HTTPSource.StatusAnswer] {
        guard let answersNode = member("answers") else { return [] }
        let answersPath = path.appending("answers")
        guard let answerMembers = answersNode.members else {
            reader.report(
                .wrongType, at: answersNode, path: answersPath,
                "answers must be an object of statuses and their answers, like {\"404\": {data: [...]}}")
            valid = false
            return []
        }
        var answers: [HTTPSource.StatusAnswer] = []
        for answerMember in answerMembers {
            let answerPath = answersPath.appending(answerMember.key)
            guard let status = HTTPSource.StatusMatch(key: answerMember.key) else {
                reader.report(
                    .invalidSource, offset: answerMember.keyOffset, path: answerPath,
                    "\"\(answerMember.key)\" is not a status a source answers: write one from 400 to 599 (like \"404\", quoted in YAML) or a class, 4xx or 5xx; a 2xx is the source's value, and a timeout or a refused connection stays a failure (see fallback)"
                )
                valid = false
                continue
            }
            guard let members = reader.object(answerMember.value, at: answerPath, what: "an answer", allowed: HTTPSource.StatusAnswer.keys)
            else {
                valid = false
                continue
            }
            var ttl = HTTPSource.StatusAnswer.defaultTTL
            if let ttlNode = members.first(where: { $0.key == "ttl" })?.value {
                if case .number(let value) = ttlNode.value, let seconds = Duration.seconds(value, within: 0...86_400) {
                    ttl = seconds
                } else {
                    reader.report(
                        .invalidSource, at: ttlNode, path: answerPath.appending("ttl"),
                        "ttl is a number of seconds from 0 to 86400 (default \(HTTPSource.StatusAnswer.defaultTTL.components.seconds))")
                    valid = false
                }
            }
            answers.append(HTTPSource.StatusAnswer(status: status, ttl: ttl))
        }
        return answers.sorted { $0.status < $1.status }
    }

    /// The member `key`, a number of seconds within `range`, as a duration (to the nanosecond).
    private mutating func seconds(_ key: String, _ range: ClosedRange<Double>, _ reader: inout DefinitionReader) -> Duration? {
        guard let node = member(key) else { return nil }
        guard case .number(let value) = node.value, let duration = Duration.seconds(value, within: range) else {
            reader.report(
                .invalidSource, at: node, path: path.appending(key),
                "\(key) is a number of seconds from \(JSONWriter.string(.number(range.lowerBound))) to \(JSONWriter.string(.number(range.upperBound)))"
            )
            valid = false
            return nil
        }
        return duration
    }

    /// How the upstream pages the source's list (``HTTPSource/Paging``), when `pages` says; what
    /// the answer holds at `items` and `cursor` is checked where the answer is known
    /// (``SourcesReader``), the list that shows the pages by the screen's compiler.
    private mutating func readPages(_ reader: inout DefinitionReader) -> HTTPSource.Paging? {
        guard let node = member("pages") else { return nil }
        let pagesPath = path.appending("pages")
        guard let members = reader.object(node, at: pagesPath, what: "pages", allowed: HTTPSource.Paging.keys, required: ["kind", "items"])
        else {
            valid = false
            return nil
        }
        func value(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
        guard let kindNode = value("kind"), let itemsNode = value("items") else {
            valid = false
            return nil
        }
        let kinds = HTTPSource.Paging.kinds
        guard let kind = reader.string(kindNode, at: pagesPath.appending("kind"), what: "kind") else {
            valid = false
            return nil
        }
        guard kinds.contains(kind) else {
            reader.report(
                .invalidSource, at: kindNode, path: pagesPath.appending("kind"),
                "\"\(kind)\" is not a kind of paging; use cursor (the answer holds the next page's cursor), link (a Link header with rel=\"next\"), page (numbered pages) or offset"
                    + NameSuggestion.hint(for: kind, among: kinds))
            valid = false
            return nil
        }
        // Each kind's keys; another's is a mistake, not a setting silently ignored.
        let wanted: [String] =
            switch kind {
            case "cursor": ["cursor", "parameter"]
            case "link": []
            case "page": ["parameter", "size", "first"]
            default: ["parameter", "size"]
            }
        var fine = true
        for member in members where ["cursor", "parameter", "first", "size"].contains(member.key) && !wanted.contains(member.key) {
            reader.report(
                .unknownKey, offset: member.keyOffset, path: pagesPath.appending(member.key),
                "\(member.key) is not read for pages of kind \(kind)"
                    + (wanted.isEmpty
                        ? ": the next page is the one the answer's Link header names with rel=\"next\"; remove it"
                        : "; its keys are kind, items, \(wanted.joined(separator: ", "))"))
            fine = false
        }
        for key in wanted where key != "first" && value(key) == nil {
            reader.report(
                .missingKey, at: node, path: pagesPath.appending(key),
                "pages of kind \(kind) need \"\(key)\": " + Self.pageKeyMeaning[key, default: ""])
            fine = false
        }
        let items = answerPath(itemsNode, at: pagesPath.appending("items"), what: "items", &reader)
        let cursor = value("cursor").flatMap { answerPath($0, at: pagesPath.appending("cursor"), what: "cursor", &reader) }
        var parameter: String?
        if let parameterNode = value("parameter"),
            let name = reader.string(parameterNode, at: pagesPath.appending("parameter"), what: "parameter")
        {
            if name.isEmpty
                || !name.unicodeScalars.allSatisfy({ DefinitionReader.isIdentifierScalar($0) || "-.[]".unicodeScalars.contains($0) })
            {
                reader.report(
                    .invalidSource, at: parameterNode, path: pagesPath.appending("parameter"),
                    "parameter names the upstream's query parameter the next page's position goes in, like page or cursor")
                fine = false
            } else {
                parameter = name
            }
        }
        var size: Int?
        if let sizeNode = value("size") {
            if let number = sizeNode.value.exactInteger, (1...HTTPSource.Paging.maxSize).contains(number) {
                size = number
            } else {
                reader.report(
                    .invalidSource, at: sizeNode, path: pagesPath.appending("size"),
                    "size is the number of items a full page holds, from 1 to \(HTTPSource.Paging.maxSize) (a page with fewer is the last)")
                fine = false
            }
        }
        var first = 1
        if let firstNode = value("first") {
            if let number = firstNode.value.exactInteger, number >= 0 {
                first = number
            } else {
                reader.report(
                    .invalidSource, at: firstNode, path: pagesPath.appending("first"),
                    "first is the number of the first page, 0 or more (default 1)")
                fine = false
            }
        }
        guard fine, let items else {
            valid = false
            return nil
        }
        switch kind {
        case "cursor":
            guard let cursor, let parameter else { break }
            return HTTPSource.Paging(items: items, next: .cursor(at: cursor, parameter: parameter))
        case "link":
            return HTTPSource.Paging(items: items, next: .link)
        case "page":
            guard let parameter, let size else { break }
            return HTTPSource.Paging(items: items, next: .page(parameter: parameter, first: first, size: size))
        default:
            guard let parameter, let size else { break }
            return HTTPSource.Paging(items: items, next: .offset(parameter: parameter, size: size))
        }
        valid = false
        return nil
    }

    /// What each key of `pages` is, for the message when it is missing.
    private static let pageKeyMeaning = [
        "cursor": "where the answer holds the next page's cursor, like next_cursor or meta.next",
        "parameter": "the upstream's query parameter the next page's position goes in, like page or after",
        "size": "the number of items a full page holds (a page with fewer is the last)",
    ]

    /// A path into the source's answer, written `items` or `data.results`.
    private func answerPath(_ node: JSONNode, at path: JSONPath, what: String, _ reader: inout DefinitionReader) -> JSONPath? {
        guard let text = reader.string(node, at: path, what: what) else { return nil }
        guard let parsed = ValuePath(parsing: text) else {
            reader.report(
                .invalidSource, at: node, path: path,
                "\(what) is a path into the source's answer, keys separated by dots, like items or data.results; found \"\(text)\"")
            return nil
        }
        return JSONPath(segments: [.key(parsed.root)] + parsed.steps.segments)
    }

    /// Reports a paging parameter the operation of the upstream's OpenAPI document does not take.
    private mutating func checkPageParameter(
        _ parameter: String, of upstream: String, in document: OpenAPIDocument, path parts: [HTTPSource.Part],
        _ reader: inout DefinitionReader
    ) {
        guard case .found(let template, _) = document.operation("GET", HTTPSource.written(parts)),
            let taken = document.queryParameters("GET", template), !taken.contains(parameter),
            let node = member("pages")?["parameter"]
        else { return }
        reader.report(
            .unknownOperation, at: node, path: path.appending("pages").appending("parameter"),
            "GET \(template) in the OpenAPI document of upstream \"\(upstream)\" (\(document.path)) takes no query parameter \"\(parameter)\""
                + (taken.isEmpty ? "; it takes none" : "; it takes \(taken.joined(separator: ", "))")
                + NameSuggestion.hint(for: parameter, among: taken))
        markInvalid()
    }
}
