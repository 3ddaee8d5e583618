import CompressNIO
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// The live preview: `GET /preview` lists the screens, `GET /preview/<screen path>` shows one as
/// an app would, filled with data, and redraws it when the screen set reloads.
///
/// The page is one HTML file with its script and style (`Preview/Assets/`, embedded in the
/// binary, nothing fetched from elsewhere). Its script asks the server for:
/// - `catalog.json`: the screens, their variants, parameters and the component schemas;
/// - `exchange.json`: one skeleton or data request, answered by the same ``Responder`` an app's
///   request reaches, with exactly the headers an app sends (version, alternative, user,
///   `Accept-Language`, `Accept-Encoding`, which a browser's own requests cannot choose), and the
///   answer's status, headers and body as the app receives them;
/// - `events.stream`: server-sent events, one per screen set version (``PreviewEvents``).
///
/// Every preview response is `no-store`, and the page's Content-Security-Policy allows scripts,
/// styles and requests to this server only.
struct Preview: Sendable {
    let events: PreviewEvents

    /// The page's policy: its own script and style only, requests to this server only, images
    /// from https URLs (custom components' image fields, as the app loads them); nothing inline,
    /// no frames, no forms, no plugins.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The response to a preview route.
    func respond(
        to route: PreviewRoute, target: RequestTarget, responder: Responder, store: ScreenStore
    ) throws(APIError) -> Reply {
        switch route {
        case .list:
            return .ready(Self.page)
        case .screen:
            // The page finds the screen itself (and says so when there is none): a path that names
            // none now may name one after the next reload.
            return .ready(Self.page)
        case .asset(let name):
            guard let asset = Self.assets[name] else { throw .notFound(path: String(target.path)) }
            return .ready(asset)
        case .catalog:
            return .ready(Self.catalog(store.snapshot, status: store.status))
        case .exchange:
            return try exchange(target.query, responder: responder)
        case .events:
            guard events.hasRoom else {
                throw APIError(
                    .previewStreamsExhausted,
                    message: "\(events.maxSubscribers) previews are open already; close one and reload this page",
                    headers: [("Retry-After", "5")]
                )
            }
            var response = HTTPResponse(
                status: .ok,
                headers: [
                    ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                    // nginx would otherwise hold the events back in its buffer.
                    ("X-Accel-Buffering", "no"),
                ],
                body: PreviewEvents.preamble
            )
            response.metricsLabel = .preview
            response.stream = events
            return .ready(response)
        }
    }

    // MARK: The page and its files

    private static let page = fileResponse(PackageResources.preview_html, type: "text/html; charset=utf-8")

    private static let assets: [String: HTTPResponse] = [
        "preview.js": fileResponse(PackageResources.preview_js, type: "text/javascript; charset=utf-8"),
        "preview.css": fileResponse(PackageResources.preview_css, type: "text/css; charset=utf-8"),
    ]

    private static func fileResponse(_ bytes: [UInt8], type: String) -> HTTPResponse {
        let body = ByteBuffer(bytes: bytes)
        var response = HTTPResponse(
            body: body, type: type,
            headers: [
                ("Cache-Control", "no-store"), ("Content-Security-Policy", contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),
            ]
        )
        response.metricsLabel = .preview
        return response.precomputed()
    }

    // MARK: catalog.json

    /// What the page needs to know of the served set: each screen's variants (with a version that
    /// selects each, its file and query parameters), path parameters and experiments, the schemas
    /// of every component type, and the pending errors of a failed reload.
    static func catalog(_ screens: ServedScreenSet, status: ScreenStore.Status) -> HTTPResponse {
        let screenSet = screens.screenSet
        var entries: [JSONValue] = []
        for name in screenSet.names {
            guard let variants = screenSet.screens[name] else { continue }
            let pattern = variants.pattern
            entries.append([
                "name": .string(name),
                "parameters": .object(pattern.parameters.mapValues(ScreenIndex.parameterEntry)),
                "parameter_order": .array(pattern.parameterNames.map(JSONValue.string)),
                "variants": .array(
                    variants.all.map { variantEntry($0, of: variants, tags: screens.cacheTags ?? CacheTags(), version: screenSet.version) }),
                "experiments": .array(ScreenIndex.experimentEntries(variants)),
            ])
        }
        var components: [String: JSONValue] = [:]
        for (name, schema) in screenSet.catalog.schemas {
            components[name] = [
                "built_in": .bool(ComponentSchema.builtIns.contains { $0.name == name }),
                "summary": schema.summary.map(JSONValue.string) ?? .null,
                "fields": .array(schema.fields.map(fieldEntry)),
            ]
        }
        let body: JSONValue = [
            "screens_version": .string(status.version),
            "pending_errors": .array(status.pendingErrors.map(diagnosticEntry)),
            "screens": .array(entries),
            "components": .object(components),
            "custom_actions": .array(screenSet.catalog.customActions.sorted().map(JSONValue.string)),
        ]
        var response = HTTPResponse(json: ByteBuffer(bytes: JSONWriter.bytes(body)), headers: [("Cache-Control", "no-store")])
        response.metricsLabel = .preview
        return response
    }

    private static func variantEntry(_ compiled: ScreenVariant, of variants: ScreenVariants, tags: CacheTags, version: String) -> JSONValue
    {
        var query: [String: JSONValue] = [:]
        for source in compiled.dataPlan.sources.values {
            guard case .request(let parameters) = source else { continue }
            for (name, parameter) in parameters {
                guard case .object(var entry) = ScreenIndex.parameterEntry(parameter) else { continue }
                entry["default"] = parameter.defaultValue ?? .null
                entry["required"] = .bool(parameter.isRequired)
                query[name] = .object(entry)
            }
        }
        return [
            "id": .string(compiled.variantID),
            "file": .string(compiled.file),
            "version": compiled.requirement.map { .string($0.description) } ?? .null,
            "alternative": .string(compiled.alternative),
            "sample_version": sampleVersion(for: compiled, of: variants).map { .string($0.description) } ?? .null,
            "requires_data": .bool(compiled.requiresData),
            "query": .object(query),
            "actions": .array(compiled.actions.map(ScreenIndex.actionEntry)),
            "uses": .array(AppManifest.componentTypes(of: compiled.skeleton).map(JSONValue.string)),
            // The tags its skeleton carries for a CDN (the configured ones, else the defaults).
            "cache_tags": .array(tags.tags(of: compiled, screensVersion: version).map(JSONValue.string)),
        ]
    }

    /// An app version that selects `compiled` (with its alternative asked for), for the links of
    /// the screen list: the versions its requirements name, then 0 and a large one; nil when none
    /// does (then the page links without a version).
    static func sampleVersion(for compiled: ScreenVariant, of variants: ScreenVariants) -> Version? {
        guard compiled.requirement != nil else { return nil }
        let named = variants.versions.flatMap { $0.requirement?.constraints.map(\.version) ?? [] }
        let candidates = named + named.map { Version($0.segments + [1]) } + [Version([0]), Version([999])]
        return candidates.first { candidate in
            let request = ScreenVariants.Request(version: candidate, alternative: compiled.alternative)
            guard case .success(let selected) = variants.select(request) else { return false }
            return selected.file == compiled.file
        }
    }

    private static func fieldEntry(_ field: FieldSchema) -> JSONValue {
        var entry: [String: JSONValue] = [
            "name": .string(field.name), "type": .string(field.type.name), "required": .bool(field.isRequired),
            "dynamic": .bool(field.isDynamic),
        ]
        if case .enumeration(let values) = field.type { entry["values"] = .array(values.map(JSONValue.string)) }
        return .object(entry)
    }

    /// A diagnostic as the page shows it: where (file, line, column, JSON path) and what.
    static func diagnosticEntry(_ diagnostic: Diagnostic) -> JSONValue {
        [
            "file": .string(diagnostic.file),
            "line": diagnostic.location.map { .number(Double($0.line)) } ?? .null,
            "column": diagnostic.location.map { .number(Double($0.column)) } ?? .null,
            "path": diagnostic.path.map { .string($0.description) } ?? .null,
            "code": .string(diagnostic.code.rawValue),
            "message": .string(diagnostic.trace.map { "\($0): " }.joined() + diagnostic.message),
            "text": .string(diagnostic.description),
        ]
    }

    // MARK: exchange.json

    /// Bytes a decompressed body may have, for the page to show.
    private static let maxShownBody = 16 << 20

    /// `GET /preview/exchange.json?screen=home&phase=data&query=name%3DAda&version=2.1&gzip=1`:
    /// the skeleton or data request an app with these settings sends, answered by the responder,
    /// described as `{"request": {...}, "status", "headers", "body", "bytes"}` (the body decoded
    /// from gzip when it was sent so; `bytes` as sent).
    private func exchange(_ query: [String: String], responder: Responder) throws(APIError) -> Reply {
        guard let screen = query["screen"], !screen.isEmpty else {
            throw APIError(.missingParameter, message: "query parameter \"screen\" (a screen path, like home) is required")
        }
        let phase = query["phase"] ?? "skeleton"
        guard phase == "skeleton" || phase == "data" else {
            throw APIError(.invalidParameter, message: "phase is skeleton or data, found \"\(phase)\"")
        }
        // Both go into a request target: anything that is not already a valid character of it is
        // percent-encoded, so a value can add neither a query nor a fragment.
        var uri = "/screens/" + PercentEncoding.encode(screen, allowed: Self.pathBytes)
        if phase == "data" { uri += "/data" }
        if let text = query["query"], !text.isEmpty { uri += "?" + PercentEncoding.encode(text, allowed: Self.queryBytes) }
        var headers = HTTPHeaders()
        for (parameter, header) in Self.headerParameters {
            guard let value = query[parameter], !value.isEmpty else { continue }
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
                throw APIError(.invalidParameter, message: "\(parameter) may not hold control characters")
            }
            headers.add(name: header, value: value)
        }
        headers.add(name: "Accept-Encoding", value: query["gzip"] == "1" ? "gzip" : "identity")
        var request = HTTPRequest(method: .GET, uri: uri, headers: headers)
        // A person looking at a screen in the preview is no user exposed to an experiment.
        request.isPreview = true
        let described: JSONValue = [
            "method": "GET", "target": .string(uri), "headers": .array(headers.map { [.string($0.name), .string($0.value)] }),
        ]
        switch responder.answer(request) {
        case .ready(let response):
            return .ready(Self.envelope(response, request: described))
        case .pending(let work):
            return .pending { Self.envelope(await work(), request: described) }
        }
    }

    /// The exchange parameters sent as request headers, as an app sends them.
    private static let headerParameters = [
        ("version", "X-Taksi-Version"), ("alternative", "X-Taksi-Alternative"), ("user", "X-Taksi-User"),
        ("platform", "X-Taksi-Platform"), ("language", "Accept-Language"), ("skeleton", "X-Taksi-Skeleton"),
    ]

    private static let pathBytes = PercentEncoding.unreserved.union(PercentEncoding.ByteSet("/%!$&'()*+,;=:@"))
    private static let queryBytes = pathBytes.union(PercentEncoding.ByteSet("?"))

    private static func envelope(_ response: HTTPResponse, request: JSONValue) -> HTTPResponse {
        var body = response.body
        let sent = body.readableBytes
        if response.headers.first(name: "Content-Encoding") == "gzip" {
            body =
                (try? body.decompress(with: .gzip(), maxSize: maxShownBody)) ?? ByteBuffer(string: "(the gzip body could not be decoded)")
        }
        let value: JSONValue = [
            "request": request,
            "status": .number(Double(response.status.code)),
            "headers": .array(response.headers.map { [.string($0.name), .string($0.value)] }),
            "body": .string(String(buffer: body)),
            "bytes": .number(Double(sent)),
        ]
        var envelope = HTTPResponse(json: ByteBuffer(bytes: JSONWriter.bytes(value)), headers: [("Cache-Control", "no-store")])
        envelope.metricsLabel = .preview
        return envelope
    }
}
