import TaksiSchema

/// Reads a screen's `actions` (see ``ScreenAction``), after its components: an answer's patch
/// may only name the screen's dynamic components, with values that fit their fields, since the
/// client drops all data when one entry does not decode.
extension ScreenCompiler {
    static let actionKeys = ["summary", "inputs", "call", "answers"]
    /// The values an action's bindings read: its inputs, the screen's path parameters, the
    /// upstream's answer and the refused inputs' messages.
    static let inputsSourceName = "inputs"
    static let responseSourceName = "response"
    static let errorsSourceName = "errors"

    mutating func readActions(_ node: JSONNode, at path: JSONPath, components: [Component]) -> [ScreenAction] {
        guard let members = node.members else {
            reader.report(
                .wrongType, at: node, path: path, "actions must be an object of named actions, like {submit: {inputs: ..., answers: ...}}")
            return []
        }
        // An action reads none of the screen's sources: its own table replaces the screen's
        // while it is read.
        let screenTable = sourceTable
        defer { sourceTable = screenTable }
        var actions: [ScreenAction] = []
        for member in members {
            let actionPath = path.appending(member.key)
            guard Self.isActionName(member.key) else {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: actionPath,
                    "an action's name is 1 to 64 letters, digits and '_' (like submit), since it is a segment of /screens/<path>/actions/<name>"
                )
                continue
            }
            if let action = readAction(member.key, member.value, at: actionPath, components: components) {
                actions.append(action)
            }
        }
        return actions
    }

    /// An action's `inputs`: each a named parameter (not a path parameter's name), with the
    /// message said when its value is refused.
    private mutating func readInputs(_ inputsNode: JSONNode, at inputsPath: JSONPath) -> [ScreenAction.Input] {
        guard let inputMembers = inputsNode.members else {
            reader.report(
                .wrongType, at: inputsNode, path: inputsPath,
                "inputs must be an object of named inputs, like {email: {type: string, required: true}}")
            return []
        }
        var inputs: [ScreenAction.Input] = []
        for input in inputMembers {
            let inputPath = inputsPath.appending(input.key)
            guard !input.key.isEmpty, input.key.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar) else {
                reader.report(
                    .invalidName, offset: input.keyOffset, path: inputPath,
                    "an input's name uses letters, digits and '_' (like email), so bindings and templates can name it"
                )
                continue
            }
            if pattern.parameters[input.key] != nil {
                reader.report(
                    .invalidName, offset: input.keyOffset, path: inputPath,
                    "\"\(input.key)\" is a path parameter of this screen, which a call's path fills as {\(input.key)}; name the input otherwise"
                )
                continue
            }
            let message = reader.string(input.value["message"], at: inputPath.appending("message"), what: "message")
            if let parameter = reader.parameter(input.value, at: inputPath, place: .input) {
                inputs.append(ScreenAction.Input(name: input.key, parameter: parameter, message: message))
            }
        }
        return inputs
    }

    private mutating func readAction(_ name: String, _ node: JSONNode, at path: JSONPath, components: [Component]) -> ScreenAction? {
        guard let members = reader.object(node, at: path, what: "an action", allowed: Self.actionKeys, required: ["answers"]) else {
            return nil
        }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        let summary = reader.string(member("summary"), at: path.appending("summary"), what: "summary")
        let errorsBefore = reader.errorCount

        let inputs = member("inputs").map { readInputs($0, at: path.appending("inputs")) } ?? []
        let inputParameters = Dictionary(inputs.map { ($0.name, $0.parameter) }, uniquingKeysWith: { first, _ in first })
        var scope: [String: SourceDefinition] = [Self.inputsSourceName: .request(inputParameters)]
        if pattern.hasParameters { scope[Self.pathSourceName] = .path(pattern.parameters) }

        var call: ScreenAction.Call?
        var operation: CallOperation?
        if let callNode = member("call") {
            (call, operation) = readCall(callNode, at: path.appending("call"), inputs: inputParameters, scope: scope)
        }

        var answers: [ScreenAction.Outcome: ScreenAction.Answer] = [:]
        if let answersNode = member("answers") {
            let answersPath = path.appending("answers")
            guard let answerMembers = answersNode.members else {
                reader.report(
                    .wrongType, at: answersNode, path: answersPath,
                    "answers must be an object of answers by outcome, like {success: {data: [...]}}")
                return nil
            }
            for answer in answerMembers {
                let answerPath = answersPath.appending(answer.key)
                guard let outcome = ScreenAction.Outcome(key: answer.key) else {
                    reader.report(
                        .invalidAction, offset: answer.keyOffset, path: answerPath,
                        "\"\(answer.key)\" is not an outcome; answer one of \(ScreenAction.Outcome.keyNames.joined(separator: ", "))"
                            + NameSuggestion.hint(for: answer.key, among: ["success", "invalid", "4xx", "5xx", "timeout", "failure"])
                    )
                    continue
                }
                if outcome.needsCall, member("call") == nil {
                    reader.report(
                        .invalidAction, offset: answer.keyOffset, path: answerPath,
                        "this action calls no upstream, so it never has a \"\(answer.key)\" outcome; add a call or remove this answer"
                    )
                    continue
                }
                var answerScope = scope
                // A call with errors of its own still has a response, so bindings to it are not reported twice.
                if member("call") != nil, outcome.hasResponse {
                    answerScope[Self.responseSourceName] = call.map { .http($0.request) } ?? .request([:])
                }
                if outcome == .invalid {
                    answerScope[Self.errorsSourceName] = .request(inputParameters.mapValues { _ in RequestParameter() })
                }
                var values = SourceTable(declared: answerScope, context: "the \(answer.key) answer of action \(name)")
                // What the upstream answers with this outcome, as its OpenAPI document has it.
                values.answers[Self.responseSourceName] = operation?.answer(for: outcome)
                if let read = readAnswer(answer.value, at: answerPath, outcome: outcome, values: values, components: components) {
                    answers[outcome] = read
                }
            }
        }
        guard reader.errorCount == errorsBefore else { return nil }
        return ScreenAction(name: name, summary: summary, inputs: inputs, call: call, answers: answers)
    }

    /// A call's operation in its upstream's OpenAPI document: what each outcome's response holds.
    struct CallOperation {
        let document: OpenAPIDocument
        let method: String
        let template: String

        func answer(for outcome: ScreenAction.Outcome) -> KnownAnswer? {
            switch outcome {
            case .success:
                guard case .found(_, let answer) = document.operation(method, template) else { return nil }
                return answer
            case .status(let code): return document.answer(method, template, status: .status(code))
            case .statusClass(let digit): return document.answer(method, template, status: .statusClass(digit))
            case .invalid, .timeout, .failure: return nil
            }
        }
    }

    /// The call, and its operation where the upstream's OpenAPI document has one; a method and path
    /// the document does not have are reported (the call is then nil).
    private mutating func readCall(
        _ node: JSONNode, at path: JSONPath, inputs: [String: RequestParameter], scope: [String: SourceDefinition]
    ) -> (ScreenAction.Call?, CallOperation?) {
        guard
            let members = reader.object(node, at: path, what: "a call", allowed: ScreenAction.Call.keys, required: ["upstream", "path"])
        else { return (nil, nil) }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        var method = ScreenAction.Call.Method.POST
        if let methodNode = member("method"), let given = reader.string(methodNode, at: path.appending("method"), what: "method") {
            guard let known = ScreenAction.Call.Method(rawValue: given) else {
                let methods = ScreenAction.Call.Method.allCases.map(\.rawValue)
                reader.report(
                    .invalidAction, at: methodNode, path: path.appending("method"),
                    "method \"\(given)\" is not one a call makes; use \(methods.joined(separator: ", ")) (upper case)"
                        + NameSuggestion.hint(for: given.uppercased(), among: methods)
                )
                return (nil, nil)
            }
            method = known
        }
        let request = readHTTPSource(members, at: path, inputs: inputs)
        var body: ContentExpression?
        if let bodyNode = member("body") {
            if method == .GET {
                reader.report(
                    .invalidAction, at: bodyNode, path: path.appending("body"),
                    "a GET sends no body; send the inputs in the query, or use POST")
                return (nil, nil)
            }
            sourceTable = SourceTable(declared: scope, context: "a call's body")
            body = compileValue(bodyNode, as: nil, at: path.appending("body"), siblings: [], scope: [])
            guard body != nil else { return (nil, nil) }
        }
        guard let request else { return (nil, nil) }
        // A `file:` upstream answers a call from the file its method and path name, as a source's GET.
        if let directory = context.upstreams?.directories[request.upstream], let pathNode = member("path") {
            let written = HTTPSource.written(request.path)
            let segments = written.split(separator: "/").map(String.init)
            if HTTPSourceReader.files(matching: segments, in: directory, method: method.rawValue).isEmpty {
                reader.report(
                    .missingFixture, at: pathNode, path: path.appending("path"),
                    HTTPSourceReader.missingFile(of: request.upstream, in: directory, method: method.rawValue, path: written))
                return (nil, nil)
            }
        }
        var operation: CallOperation?
        if let document = context.upstreams?.documents[request.upstream], let pathNode = member("path") {
            let written = HTTPSource.written(request.path)
            switch document.operation(method.rawValue, written) {
            case .found(let template, _):
                operation = CallOperation(document: document, method: method.rawValue, template: template)
            case .noPath:
                reader.report(
                    .unknownOperation, at: pathNode, path: path.appending("path"),
                    document.notFound(method.rawValue, written, upstream: request.upstream))
                return (nil, nil)
            case .noMethod(let template, let methods):
                reader.report(
                    .unknownOperation, at: member("method") ?? pathNode, path: path.appending(member("method") == nil ? "path" : "method"),
                    "\(template) in the OpenAPI document of upstream \"\(request.upstream)\" (\(document.path)) answers \(methods.joined(separator: ", ")), not \(method.rawValue)"
                        + (member("method") == nil ? " (a call's method is POST unless it says)" : "") + "; call it with one of those")
                return (nil, nil)
            }
        }
        return (ScreenAction.Call(method: method, request: request, body: body), operation)
    }

    private mutating func readAnswer(
        _ node: JSONNode, at path: JSONPath, outcome: ScreenAction.Outcome, values: SourceTable, components: [Component]
    ) -> ScreenAction.Answer? {
        guard let members = reader.object(node, at: path, what: "an answer", allowed: ScreenAction.Answer.keys) else { return nil }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        _ = reader.string(member("summary"), at: path.appending("summary"), what: "summary")
        sourceTable = values
        var valid = true
        var status: Int?
        if let statusNode = member("status") {
            let allowed = [200, 201, 202] + Array(400...599)
            if let code = statusNode.value.exactInteger, allowed.contains(code) {
                status = code
            } else {
                reader.report(
                    .invalidAction, at: statusNode, path: path.appending("status"),
                    "status is the HTTP status of the answer: 200, 201, 202, or 400 to 599 (the answer always has a body)"
                )
                valid = false
            }
        }
        var entries: [DataPlan.Entry] = []
        if let dataNode = member("data") {
            if let patch = readPatch(dataNode, at: path.appending("data"), components: components) {
                entries = patch
            } else {
                valid = false
            }
        }
        var then: ContentExpression?
        if let thenNode = member("then") {
            then = compileValue(thenNode, as: .action, at: path.appending("then"), siblings: [], scope: [])
            if then == nil { valid = false }
        }
        return valid ? ScreenAction.Answer(status: status, patch: DataPlan(sources: [:], entries: entries), then: then) : nil
    }

    /// A patch's entries (an action's or a source's answer): each names a dynamic component of
    /// the screen once, with values that fit its fields; nil when one does not.
    mutating func readPatch(_ dataNode: JSONNode, at dataPath: JSONPath, components: [Component]) -> [DataPlan.Entry]? {
        guard let elements = dataNode.elements else {
            reader.report(
                .wrongType, at: dataNode, path: dataPath,
                "data must be a list of entries, like [{identifier: error, content: {value: Try again}}]"
            )
            return nil
        }
        var valid = true
        var entries: [DataPlan.Entry] = []
        var seen: [String: JSONPath] = [:]
        for (index, element) in elements.enumerated() {
            let entryPath = dataPath.appending(index)
            guard let entry = readPatchEntry(element, at: entryPath, components: components) else {
                valid = false
                continue
            }
            if let first = seen[entry.identifier] {
                reader.report(
                    .duplicateIdentifier, at: element["identifier"] ?? element, path: entryPath.appending("identifier"),
                    "\"\(entry.identifier)\" is already patched at \(first); one entry per component"
                )
                valid = false
            }
            seen[entry.identifier] = entryPath
            entries.append(entry)
        }
        return valid ? entries : nil
    }

    /// One entry of a patch: a dynamic component of the screen and values for its dynamic fields,
    /// checked as the component's own bindings are.
    private mutating func readPatchEntry(_ node: JSONNode, at path: JSONPath, components: [Component]) -> DataPlan.Entry? {
        guard
            let members = reader.object(
                node, at: path, what: "a data entry", allowed: ["identifier", "content"], required: ["identifier", "content"]),
            let identifierNode = members.first(where: { $0.key == "identifier" })?.value,
            let identifier = reader.string(identifierNode, at: path.appending("identifier"), what: "identifier"),
            let contentNode = members.first(where: { $0.key == "content" })?.value
        else { return nil }
        let dynamic = catalog.dynamicIdentifiers(of: components)
        guard let component = components.first(where: { $0.identifier == identifier }), let schema = catalog.schema(named: component.name)
        else {
            // The component is there but failed to compile: its own error says why.
            if leftOut.failed.contains(identifier) { return nil }
            reader.report(
                .invalidPatch, at: identifierNode, path: path.appending("identifier"),
                "\"\(identifier)\" is not a component of this screen, and the client drops all data when one entry names none; patch one of its dynamic components"
                    + (dynamic.isEmpty ? " (it has none)" : " (\(dynamic.joined(separator: ", ")))")
                    + NameSuggestion.hint(for: identifier, among: dynamic)
            )
            return nil
        }
        guard schema.isDynamic else {
            reader.report(
                .invalidPatch, at: identifierNode, path: path.appending("identifier"),
                "\"\(identifier)\" is a \(component.name), which takes no data: the client drops all data when an entry names one; patch a dynamic component"
                    + (dynamic.isEmpty ? " (this screen has none)" : " (\(dynamic.joined(separator: ", ")))")
            )
            return nil
        }
        guard let contentMembers = contentNode.members else {
            reader.report(
                .wrongType, at: contentNode, path: path.appending("content"), "content must be an object of the component's dynamic fields")
            return nil
        }
        // The static fields come from the skeleton (a collection's items are typed by its
        // component_name); a patch writing one would be ignored by the client.
        let staticContent = component.content.objectValue ?? [:]
        var merged = contentMembers
        for member in contentMembers {
            guard let field = schema.field(named: member.key), !field.isDynamic else { continue }
            reader.report(
                .staticFieldBound, offset: member.keyOffset, path: path.appending("content").appending(member.key),
                "\"\(member.key)\" is static: the client never changes it from data; patch \(schema.dynamicFields.map(\.name).joined(separator: ", "))"
            )
            return nil
        }
        for field in schema.fields where !field.isDynamic {
            guard let value = staticContent[field.name] else { continue }
            merged.append(
                JSONNode.Member(key: field.name, keyOffset: contentNode.offset, value: JSONNode(value, offset: contentNode.offset)))
        }
        let contentPath = path.appending("content")
        let mergedNode = JSONNode(kind: .object(merged), offset: contentNode.offset)
        guard let fields = compileContent(mergedNode, schema: schema, at: contentPath, topLevel: true, scope: []) else { return nil }
        reader.report(
            versionCheck.findings(inContent: mergedNode, fields: schema.dynamicFields, component: component.name, at: contentPath))
        return DataPlan.Entry(
            identifier: identifier, componentName: component.name, staticContent: staticContent,
            fields: fields.filter { schema.field(named: $0.key)?.isDynamic == true }
        )
    }

    /// Whether `name` can name an action: 1 to 64 letters, digits and `_` (a path segment).
    static func isActionName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.unicodeScalars.allSatisfy(DefinitionReader.isIdentifierScalar)
    }

    /// Reports an `executable` action whose name is neither one of the screen's actions nor an
    /// executable the app declares in `actions.json`: the app finds no handler of that name, and the
    /// button does nothing. A declared name close to an action (`sned` beside `send`) is still
    /// reported: the two are too easily mistaken. (Components placed by fragments are checked in
    /// their fragment's own terms, not here.) While an action's name is wrong (reported), a name
    /// that is no action is not reported again: it may well be the one meant.
    mutating func checkExecutableNames(in node: JSONNode, at path: JSONPath, actions: [String], judgesUndeclared: Bool = true) {
        if let members = node.members {
            if node["identifier"]?.stringValue == "executable", let nameNode = node["content"]?["name"],
                let name = nameNode.stringValue, !actions.contains(name)
            {
                let namePath = path.appending("content").appending("name")
                if let meant = NameSuggestion.closest(to: name, among: actions) {
                    reader.report(
                        .invalidAction, at: nameNode, path: namePath,
                        "executable \"\(name)\" is no action of this screen, and so close to its action \"\(meant)\" that it is most likely meant: "
                            + "the app would run an executable of its own named \"\(name)\", and this one does nothing (did you mean \"\(meant)\"?); "
                            + "if the app does register \"\(name)\", rename it or the action so they cannot be mistaken"
                    )
                } else if judgesUndeclared, !context.executables.contains(name) {
                    let known = (actions + context.executables.sorted())
                    reader.report(
                        .invalidAction, at: nameNode, path: namePath,
                        "executable \"\(name)\" is no action of this screen and no executable the app declares, so the button would do nothing; "
                            + "if the app runs it, declare it in actions.json: {\"executables\": [{\"name\": \"\(name)\"}]}"
                            + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))")
                            + NameSuggestion.hint(for: name, among: known)
                    )
                }
            }
            for member in members {
                checkExecutableNames(in: member.value, at: path.appending(member.key), actions: actions, judgesUndeclared: judgesUndeclared)
            }
        } else if let elements = node.elements {
            for (index, element) in elements.enumerated() {
                checkExecutableNames(in: element, at: path.appending(index), actions: actions, judgesUndeclared: judgesUndeclared)
            }
        }
    }
}
