import Logging
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import Tracing

/// `POST /screens/<path>/actions/<name>`: a screen's action (``ScreenAction``) run for the
/// request's variant, answered in the client's data shape.
struct ActionEndpoint: Sendable {
    let selector: VariantSelector
    let logger: Logger
    /// Calls the actions' upstreams; nil when the server calls no upstreams.
    let resolver: DataResolver?
    let counters: EndpointCounters
    /// Submits that call an upstream, answered once per `Idempotency-Key` through the store (the
    /// fleet's, or this process's memory for a server that runs alone); nil runs every submit.
    let submits: FleetSubmits?

    /// The media types an action's body may have, for `Accept-Post` and 415's message.
    static let actionMediaTypes = "application/json, application/x-www-form-urlencoded"

    /// The action `name` of the screen at `path`, in the variant the request selects from the set
    /// of the skeleton it names (see ``VariantSelector/answering(at:target:head:)``); 404 when there is none.
    func lookUp(
        _ name: String, at path: String, head: RequestHead, target: RequestTarget
    ) throws(APIError) -> (action: ScreenAction, selection: VariantSelector.Selection) {
        let selection = try selector.answering(at: path, target: target, head: head)
        let variant = selection.variant
        guard let action = variant.compiled.actions.first(where: { $0.name == name }) else {
            let names = variant.compiled.actions.map(\.name)
            throw APIError(
                .actionNotFound,
                message: "screen \(variant.compiled.name) (variant \(variant.compiled.variantID)) has no action \"\(name)\""
                    + (names.isEmpty ? "; it declares none" : "; its actions: \(names.joined(separator: ", "))")
                    + NameSuggestion.hint(for: name, among: names)
            )
        }
        return (action, selection)
    }

    /// The definition a submit runs: the current set's, whatever skeleton the app holds. A submit
    /// for a skeleton of an earlier set (kept after a reload) is checked and called as the screen
    /// is now, so a reload that removes an action or tightens an input applies at once; the
    /// earlier variant only shapes the answer's patch, which must fit the skeleton the app shows.
    /// - Throws: `action_not_found` when the current set no longer has the screen or the action.
    func currentDefinition(
        of shown: ScreenAction, at path: String, head: RequestHead, target: RequestTarget, for selection: VariantSelector.Selection
    ) throws(APIError) -> (action: ScreenAction, pathValues: [String: JSONValue]) {
        let now = selector.store.snapshot
        guard selection.screens !== now else { return (shown, selection.pathValues) }
        let removed = APIError(
            .actionNotFound,
            message:
                "screen \(selection.variant.compiled.name) no longer has action \"\(shown.name)\": a reload removed it; load the screen again to show what it offers now"
        )
        guard let (screen, pathValues) = try? now.screen(at: path) else { throw removed }
        let variant = try selector.select(in: screen, target: target, head: head)
        guard let action = variant.compiled.actions.first(where: { $0.name == shown.name }) else { throw removed }
        return (action, pathValues)
    }

    /// A submit from a skeleton of an earlier set whose form had inputs the action no longer
    /// declares (a field renamed with its input, or removed): `412 skeleton_outdated`, and nothing
    /// runs. Ignoring them (as an input no skeleton ever had is) would refuse a valid form with
    /// the new input's "required" message; the app loads the screen again and shows its form.
    static func checkInputsHeld(
        _ ignored: [String], shown: ScreenAction, current: ScreenAction, screen: String
    ) throws(APIError) {
        guard !ignored.isEmpty else { return }
        let formerly = Set(shown.inputs.map(\.name)).subtracting(current.inputs.map(\.name))
        let gone = ignored.filter { formerly.contains($0) }
        guard !gone.isEmpty else { return }
        throw APIError(
            .skeletonOutdated,
            message:
                "action \"\(current.name)\" of \(screen) no longer takes \(gone.map { "\"\(PercentEncoding.encode($0))\"" }.joined(separator: ", ")), which the skeleton this app holds had in its form; nothing ran: load the screen again (Cache-Control: no-cache) and submit its form",
            headers: [("Vary", ServedScreenSet.skeletonHeader)]
        )
    }

    /// The header that names the inputs a submit sent and the action does not declare, which were
    /// ignored (see ``ScreenAction/validate(_:)``): an app sees them without a failure.
    static let ignoredInputsHeader = "X-Taksi-Ignored-Inputs"

    /// `response`, saying which undeclared inputs were ignored, when there were some.
    static func naming(_ ignored: [String], in response: HTTPResponse) -> HTTPResponse {
        guard !ignored.isEmpty else { return response }
        var response = response
        // Names are keys as sent, so percent-encoded (no comma or line break of theirs reaches the
        // header), and at most ten of them: a body of a thousand keys makes no header of a thousand.
        var names = ignored.prefix(10).map { PercentEncoding.encode($0) }
        if ignored.count > 10 { names.append("and \(ignored.count - 10) more") }
        response.headers.add(name: ignoredInputsHeader, value: names.joined(separator: ", "))
        return response
    }

    func respond(_ name: String, at path: String, request: HTTPRequest, target: RequestTarget) throws(APIError) -> Reply {
        let (shown, selection) = try lookUp(name, at: path, head: request.head, target: target)
        let (action, pathValues) = try currentDefinition(of: shown, at: path, head: request.head, target: target, for: selection)
        let variant = selection.variant
        try DataEndpoint.checkForwarded(action.call?.request.forwardedHeaders ?? [], in: request.headers)
        let submitted = try Self.inputs(of: request)
        let catalog = selection.screens.screenSet.catalog(for: VariantSelector.appVersion(target: target, head: request.head)).catalog
        let (values, errors, ignored) = action.validate(submitted)
        try Self.checkInputsHeld(ignored, shown: shown, current: action, screen: variant.compiled.name)
        let correlation = request.correlation
        if !ignored.isEmpty {
            logger.debug(
                "undeclared inputs ignored",
                metadata: correlation.logMetadata.merging([
                    "screen": .string(variant.compiled.name), "action": .string(name), "inputs": .string(ignored.joined(separator: ",")),
                ]) { $1 })
        }
        if !errors.isEmpty {
            return .ready(
                Self.naming(
                    ignored,
                    in: answer(
                        shown, of: variant, to: .invalid(errors), inputs: submitted.values, path: pathValues, catalog: catalog,
                        correlation: correlation)))
        }
        let key = try Self.idempotencyKey(request.headers)
        let done: @Sendable () -> HTTPResponse = {
            Self.naming(
                ignored,
                in: self.answer(shown, of: variant, to: .done, inputs: values, path: pathValues, catalog: catalog, correlation: correlation)
            )
        }
        let respond: @Sendable () async -> HTTPResponse
        if let call = action.call {
            guard let resolver else { throw .upstreamsUnavailable }
            let submit = try Self.submit(call, inputs: values, path: pathValues)
            var headers = call.request.forwardedValues(from: request.headers)
            if let key { headers.append(("Idempotency-Key", key)) }
            respond = { [headers] in
                let outcome = await self.send(
                    submit, of: action, on: variant.compiled, headers: headers, client: resolver.client, correlation: correlation)
                return Self.naming(
                    ignored,
                    in: self.answer(
                        shown, of: variant, to: outcome, inputs: values, path: pathValues, catalog: catalog, correlation: correlation))
            }
        } else {
            respond = done
        }
        // A keyed submit that calls an upstream is answered once per key; one that calls nothing
        // has nothing to do twice.
        guard let key, let submits, let call = action.call else { return action.call == nil ? .ready(done()) : .pending(respond) }
        // The same key from another request (body, identity, screen) is a client bug, not a retry.
        let fingerprint = FleetSubmits.fingerprint(
            contentType: request.headers.first(name: "Content-Type"), forwarded: call.request.forwardedValues(from: request.headers),
            body: request.body.map { String(buffer: $0) } ?? "")
        return .pending {
            await submits.answer(
                key: FleetSubmits.key(path: path, action: name, clientKey: key), clientKey: key, fingerprint: Array(fingerprint.utf8),
                timeout: call.request.timeout, correlation: correlation, run: respond)
        }
    }

    /// `Idempotency-Key` `key` came with another request than the first with it.
    static func keyReused(_ key: String) -> APIError {
        APIError(
            .idempotencyKeyReused,
            message:
                "Idempotency-Key \"\(key)\" was sent with another request to this action; send a new key for each submit, and the same key only to retry it unchanged"
        )
    }

    /// Sends an action's call and says what came of it: with the request's id and trace context,
    /// as every upstream call carries them, as a client span of its own when tracing is on, and
    /// logged when it failed.
    private func send(
        _ submit: UpstreamClient.Submit, of action: ScreenAction, on screen: ScreenVariant, headers: [(String, String)],
        client: UpstreamClient, correlation: Correlation
    ) async -> ScreenAction.Result {
        let upstream = submit.upstream
        let span = correlation.callSpan("\(submit.method.rawValue) \(upstream)")
        span?.attributes["taksi.upstream"] = upstream
        span?.attributes["taksi.action"] = action.name
        span?.attributes["url.template"] = action.call?.request.pathTemplate
        let result = await client.submit(submit, headers: headers + correlation.headers(for: span), span: span)
        if let span {
            switch result {
            case .success(let answer): span.attributes["http.response.status_code"] = answer.status
            case .failure(let failure):
                span.recordError(failure)
                span.setStatus(SpanStatus(code: .error, message: failure.description))
            }
            span.end()
        }
        switch result {
        case .success(let answer):
            // A 404 (or 405) is an answer the screen may declare, but usually a path or method the
            // upstream does not have: said in the log, where the app shows only "rejected".
            if answer.status == 404 || answer.status == 405 {
                logger.warning(
                    "action call answered \(answer.status): the upstream has no \(submit.method.rawValue) \(action.call?.request.pathTemplate ?? "at that path"); check the call's path and method",
                    metadata: correlation.logMetadata.merging([
                        "screen": .string(screen.name), "action": .string(action.name), "upstream": .string(upstream),
                        "status": .stringConvertible(answer.status),
                    ]) { $1 }
                )
            }
            return .answered(status: answer.status, body: answer.body)
        case .failure(let failure):
            logger.error(
                "action call failed",
                metadata: correlation.logMetadata.merging([
                    "screen": .string(screen.name), "action": .string(action.name), "upstream": .string(upstream),
                    "cause": .string(failure.description),
                ]) { $1 }
            )
            if case .timeout = failure { return .timedOut }
            return .failed
        }
    }

    /// `OPTIONS` on an action's path.
    static let options: HTTPResponse = {
        var response = HTTPResponse(
            status: .noContent,
            headers: [("Allow", APIError.actionMethods), ("Accept-Post", actionMediaTypes), ("Cache-Control", "no-store")],
            body: ByteBuffer()
        )
        response.metricsLabel = .options
        return response.precomputed()
    }()

    /// The answer to a submit, logged when a value was left out.
    private func answer(
        _ action: ScreenAction, of variant: ServedScreenSet.Variant, to result: ScreenAction.Result, inputs: [String: JSONValue],
        path: [String: JSONValue], catalog: ComponentCatalog, correlation: Correlation
    ) -> HTTPResponse {
        let (status, body, problems) = action.answer(to: result, inputs: inputs, path: path, catalog: catalog)
        if !problems.isEmpty { logger.dataProblems(problems, in: variant.compiled, correlation: correlation) }
        counters.answered(action.name, of: variant.compiled.name, outcome: result.name)
        let headers = variant.headers.filter { $0.0 != "Vary" } + [("Cache-Control", "no-store")]
        var response = HTTPResponse(
            status: HTTPResponseStatus(statusCode: status), json: ByteBuffer(bytes: JSONWriter.bytes(body)), headers: headers)
        response.metricsLabel = .action
        response.variant = variant.id
        return response
    }

    /// The inputs of a submit: a JSON body `{"inputs": {...}}`, a form, or no body at all.
    static func inputs(of request: HTTPRequest) throws(APIError) -> ScreenAction.Submitted {
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        guard let contentType = request.headers.first(name: "Content-Type") else {
            if body.isEmpty { return .form([:]) }
            throw unsupportedMediaType("a body without a Content-Type")
        }
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let parameters = parts.dropFirst()
        if parameters.contains(where: { $0.hasPrefix("charset=") && !["charset=utf-8", "charset=\"utf-8\""].contains($0) }) {
            throw unsupportedMediaType("\(contentType) (only UTF-8 is read)")
        }
        switch parts.first {
        case "application/json":
            if body.isEmpty { return .json([:]) }
            let value: JSONValue
            do {
                value = try JSONParser.parse(body, exactIntegers: true).value
            } catch {
                throw invalidBody("the body cannot be read as JSON: \(error.message)")
            }
            guard let object = value.objectValue else {
                throw invalidBody("the body must be an object, {\"inputs\": {...}}, found \(value.typeName)")
            }
            if let unknown = object.keys.sorted().first(where: { $0 != "inputs" }) {
                throw invalidBody("unknown key \"\(unknown)\" in the body; send {\"inputs\": {...}}")
            }
            guard let inputs = object["inputs"] else { return .json([:]) }
            guard let fields = inputs.objectValue else {
                throw invalidBody("\"inputs\" must be an object of inputs by name, found \(inputs.typeName)")
            }
            return .json(fields)
        case "application/x-www-form-urlencoded":
            let fields: [String: String]
            do {
                fields = try RequestTarget.fields(String(decoding: body, as: UTF8.self)[...])
            } catch {
                throw invalidBody("the form is malformed: \(error.description)")
            }
            if body.contains(where: { $0 >= 0x80 }) { throw invalidBody("a form is ASCII, with other characters percent-encoded as UTF-8") }
            return .form(fields)
        default:
            throw unsupportedMediaType(contentType)
        }
    }

    /// The upstream request of a call: path and query filled from the inputs and path values,
    /// and the body rendered. A value that cannot fill a path segment is refused like a bad input.
    static func submit(
        _ call: ScreenAction.Call, inputs: [String: JSONValue], path: [String: JSONValue]
    ) throws(APIError) -> UpstreamClient.Submit {
        let values = inputs.merging(path) { input, _ in input }
        let target: String
        do {
            target = try call.request.checkedTarget(parameters: values)
        } catch {
            throw .badParameters(error)
        }
        var body: [UInt8]?
        if let expression = call.body {
            let evaluation = expression.evaluate(["inputs": .object(inputs), "path": .object(path)])
            // An optional input left out leaves its key out of the body.
            body = JSONWriter.bytes(evaluation.value ?? .object([:]))
        }
        return UpstreamClient.Submit(
            upstream: call.request.upstream, method: call.method, target: target, body: body,
            timeout: call.request.timeout, maxBytes: call.request.maxBytes
        )
    }

    /// The client's `Idempotency-Key`, when it sent one: 1 to 255 visible ASCII characters.
    static func idempotencyKey(_ headers: HTTPHeaders) throws(APIError) -> String? {
        guard let key = headers.first(name: "Idempotency-Key") else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError(
                .invalidIdempotencyKey,
                message: "Idempotency-Key must be 1 to 255 visible ASCII characters, like a UUID"
            )
        }
        return key
    }

    private static func unsupportedMediaType(_ found: String) -> APIError {
        APIError(
            .unsupportedMediaType,
            message:
                "an action reads \(actionMediaTypes) (UTF-8), found \(found); send {\"inputs\": {...}} as JSON or the inputs as a form",
            headers: [("Accept-Post", actionMediaTypes)]
        )
    }

    private static func invalidBody(_ detail: String) -> APIError {
        APIError(.invalidBody, message: detail)
    }
}

extension HTTPResponse {
    /// A kept action answer, as a response.
    init(kept answer: SubmitAnswer) {
        self.init(status: answer.status, json: ByteBuffer(bytes: answer.body), headers: answer.headers)
        metricsLabel = .action
        variant = answer.headers.first { $0.0 == "X-Taksi-Variant" }?.1
    }

    /// This action answer, to keep: its status, headers (but the ones the connection computes) and body.
    var kept: SubmitAnswer {
        SubmitAnswer(
            status: status, headers: headers.filter { $0.name != "Content-Type" && $0.name != "Content-Length" },
            body: Array(body.readableBytesView)
        )
    }
}
