import NIOCore
import TaksiSchema
import TaksiScreens

/// `GET /openapi.yaml`: the OpenAPI 3.1 description of the HTTP API, precomputed per screen set.
///
/// `docs/openapi.yaml` is compiled in (SwiftPM's `embedInCode`, through the link
/// `OpenAPI/openapi.yaml`) and served as written, its comments and order kept for the people who
/// read it. Each action of the set adds an operation, built as data (``operation(_:screen:)``) and
/// written as one flow-style YAML entry (JSON is YAML) at the start of the top-level `paths`
/// mapping. The served document is checked as OpenAPI 3.1 by the test suite.
enum OpenAPIDescription {
    /// The document as `docs/openapi.yaml` has it.
    static let base = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    /// The document, with one operation per action of each screen (its inputs as the request
    /// body's schema), so client generators and API tools see every intent a screen takes.
    static func response(for screenSet: ScreenSet) -> HTTPResponse {
        var operations = ""
        for name in screenSet.names {
            guard let variants = screenSet.screens[name] else { continue }
            var seen: Set<String> = []
            for variant in variants.all {
                for action in variant.actions where seen.insert(action.name).inserted {
                    let path = "/screens/\(name)/actions/\(action.name)"
                    operations +=
                        "  " + JSONWriter.string(.string(path)) + ": " + JSONWriter.string(operation(action, screen: variants)) + "\n"
                }
            }
        }
        var text = base
        if !operations.isEmpty, let paths = text.range(of: "\npaths:\n") {
            text.insert(contentsOf: operations, at: paths.upperBound)
        }
        let body = ByteBuffer(string: text)
        var response = HTTPResponse(body: body, type: "application/yaml; charset=utf-8", headers: [("Cache-Control", "public, max-age=60")])
        response.metricsLabel = .openAPI
        return response.precomputed()
    }

    private static func operation(_ action: ScreenAction, screen: ScreenVariants) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for input in action.inputs {
            var schema = schema(input.parameter)
            if let value = input.parameter.defaultValue { schema["default"] = value }
            if let message = input.message { schema["description"] = .string(message) }
            properties[input.name] = .object(schema)
        }
        let required = action.inputs.filter { $0.parameter.isRequired }.map { JSONValue.string($0.name) }
        // Open: an input the action does not declare is ignored (named in X-Taksi-Ignored-Inputs), not refused.
        var inputs: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { inputs["required"] = .array(required) }
        let pathParameters: [JSONValue] = screen.pattern.parameterNames.map { name in
            [
                "name": .string(name), "in": "path", "required": true,
                "schema": .object(schema(screen.pattern.parameters[name] ?? RequestParameter())),
            ]
        }
        let headers: [JSONValue] = [
            "X-Taksi-Version", "X-Taksi-Alternative", "X-Taksi-User", "X-Taksi-Platform", "X-Taksi-Skeleton", "Idempotency-Key",
            "X-Request-Id",
        ].map {
            ["$ref": .string("#/components/parameters/\($0)")]
        }
        let answer: JSONValue = ["$ref": "#/components/responses/ActionAnswer"]
        var responses: [String: JSONValue] = [
            "400": ["$ref": "#/components/responses/BadRequest"], "404": ["$ref": "#/components/responses/NotFound"],
            "412": ["$ref": "#/components/responses/SkeletonOutdated"], "415": ["$ref": "#/components/responses/UnsupportedMediaType"],
            "422": answer,
        ]
        for status in Set([200] + action.answers.values.compactMap(\.status)) { responses[String(status)] = answer }
        if action.call != nil {
            responses["502"] = answer
            responses["504"] = answer
        }
        var operation: [String: JSONValue] = [
            "tags": ["actions"],
            "operationId": .string("action:\(screen.name):\(action.name)"),
            "summary": .string(action.summary ?? "Action \(action.name) of screen \(screen.name)."),
            "parameters": .array(pathParameters + headers),
            "requestBody": [
                "required": .bool(!required.isEmpty),
                "content": [
                    "application/json": [
                        "schema": ["type": "object", "additionalProperties": false, "properties": ["inputs": .object(inputs)]]
                    ],
                    "application/x-www-form-urlencoded": ["schema": .object(inputs)],
                ],
            ],
            "responses": .object(responses),
        ]
        if screen.pattern.parameterNames.isEmpty { operation["parameters"] = .array(headers) }
        return ["post": .object(operation)]
    }

    /// A parameter as a JSON Schema (OpenAPI's dialect): its type, values, whole-text pattern and lengths.
    private static func schema(_ parameter: RequestParameter) -> [String: JSONValue] {
        var schema: [String: JSONValue] = ["type": .string(parameter.kind == .bool ? "boolean" : parameter.kind.rawValue)]
        if let values = parameter.allowedValues { schema["enum"] = .array(values) }
        if let pattern = parameter.pattern { schema["pattern"] = .string("^(?:\(pattern.source))$") }
        if let length = parameter.minLength { schema["minLength"] = .number(Double(length)) }
        if let length = parameter.maxLength { schema["maxLength"] = .number(Double(length)) }
        return schema
    }
}
