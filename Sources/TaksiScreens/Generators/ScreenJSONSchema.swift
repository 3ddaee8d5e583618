public import TaksiSchema

/// A JSON Schema (2020-12) of the screen format for editors: with it, VS Code and other editors
/// complete and underline screen files (JSON and YAML) as they are typed. It is generated from
/// the same component schemas the validator uses, custom components included.
///
/// It is a little looser than the validator, which stays the authority: it cannot see across files
/// (navigation targets, sources, versions) and it accepts a binding on any field.
public enum ScreenJSONSchema {
    /// The schema of a screen file for the component types of `catalog`.
    // One literal of the schema it writes, read top to bottom like the document; its parts
    // (component, binding, action, source, ...) are definitions of their own.
    public static func make(catalog: ComponentCatalog) -> JSONValue {
        let types = catalog.schemas.keys.sorted()
        var definitions: [String: JSONValue] = [
            "binding": binding,
            "fragmentUse": fragmentUse,
            "action": action,
            "source": source,
            "screenAction": screenAction,
            "component": component(types: types),
        ]
        for type in types {
            guard let schema = catalog.schema(named: type) else { continue }
            definitions["content.\(type)"] = content(schema)
        }
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://github.com/taksi-br/taksi-server/screen.schema.json",
            "title": "Taksi screen",
            "description": "A screen served by taksi-server: its name, variants, data sources and components.",
            "type": "object",
            "required": ["name", "components"],
            "additionalProperties": false,
            "properties": [
                "name": [
                    "type": "string", "maxLength": .number(Double(ScreenName.maximumLength)),
                    "pattern": "^([A-Za-z0-9_-]+|\\{[A-Za-z0-9_]+\\})(/([A-Za-z0-9_-]+|\\{[A-Za-z0-9_]+\\}))*$",
                    "description":
                        "The name clients ask for; the last segment may not be data. A segment in braces is a parameter: bikes/stations/{network}.",
                ],
                "parameters": [
                    "type": "object", "description": "The types of the name's parameters (a string when not declared).",
                    "additionalProperties": [
                        "type": "object", "additionalProperties": false,
                        "properties": [
                            "type": ["enum": ["string", "integer", "number", "bool"]], "one_of": ["type": "array", "minItems": 1],
                            "pattern": ["type": "string"], "min_length": ["type": "integer", "minimum": 0],
                            "max_length": ["type": "integer", "minimum": 0], "summary": ["type": "string"],
                        ],
                    ],
                ],
                "description": ["type": "string"],
                "entry": ["type": "boolean", "description": "The app opens this screen directly."],
                "version": ["type": "string", "description": "App versions served, RubyGems style: ~> 1.2, >= 1.0, < 2.0"],
                "alternative": ["type": "string", "pattern": "^[A-Za-z0-9_-]+$", "description": "An A/B alternative's name."],
                "experiment": experiment,
                "sources": ["type": "object", "additionalProperties": ["$ref": "#/$defs/source"]],
                "components": ["type": "array", "items": ["anyOf": [["$ref": "#/$defs/component"], ["$ref": "#/$defs/fragmentUse"]]]],
                "actions": [
                    "type": "object", "description": "Named intents: POST /screens/<path>/actions/<name>.",
                    "propertyNames": ["pattern": "^[A-Za-z0-9_]{1,64}$"],
                    "additionalProperties": ["$ref": "#/$defs/screenAction"],
                ],
            ],
            "$defs": .object(definitions),
        ]
    }

    /// A screen's `experiment`: its weights, who is in (audience, holdout, rollout, layer) and its decision.
    private static let experiment: JSONValue = [
        "type": "object", "required": ["name", "weights"], "additionalProperties": false,
        "properties": [
            "name": ["type": "string", "minLength": 1], "summary": ["type": "string"],
            "weights": ["type": "object", "additionalProperties": ["type": "integer", "minimum": 0]],
            "audience": [
                "type": "object", "additionalProperties": false, "description": "Who may be in; everyone when absent.",
                "properties": [
                    "versions": ["type": "string", "description": "App versions, RubyGems style: >= 2.0"],
                    "platforms": [
                        "type": "array", "minItems": 1, "items": ["type": "string", "pattern": "^[a-z0-9-]+$"],
                        "description": "As apps send X-Taksi-Platform: ios, android, web.",
                    ],
                    "locales": [
                        "type": "array", "minItems": 1, "items": ["type": "string"],
                        "description": "Languages the app prefers first: de, en-GB.",
                    ],
                ],
            ],
            "holdout": [
                "type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.01,
                "description": "Percent of the audience that never sees an alternative.",
            ],
            "rollout": [
                "type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.01,
                "description": "Percent of the audience in the experiment, after the holdout; all of the rest when absent.",
            ],
            "layer": [
                "type": "object", "required": ["name", "from", "to"], "additionalProperties": false,
                "description": "A layer shared with other experiments: this one's range of its users, in percent.",
                "properties": [
                    "name": ["type": "string", "pattern": "^[A-Za-z0-9_-]+$"],
                    "from": ["type": "number", "minimum": 0, "maximum": 100],
                    "to": ["type": "number", "minimum": 0, "maximum": 100],
                ],
            ],
            "winner": ["type": "string", "description": "Everyone gets this alternative; exposures stop."],
            "stopped": ["type": "boolean", "description": "Everyone gets default; exposures stop."],
        ],
    ]

    private static func content(_ schema: ComponentSchema) -> JSONValue {
        if schema.acceptsAnyContent { return ["type": "object", "description": .string(schema.summary ?? "")] }
        return object(schema.fields, summary: schema.summary, owner: schema.name)
    }

    /// One component of a screen: its type (one of `types`), an optional identifier, and the
    /// content of its type, chosen by the name.
    private static func component(types: [String]) -> JSONValue {
        [
            "type": "object",
            "description": "One component: its type, an optional identifier and its content.",
            "required": ["name", "content"],
            "additionalProperties": false,
            "properties": [
                "name": [
                    "enum": .array(types.map(JSONValue.string)), "description": "The component type.",
                    // What editors using the VS Code JSON and YAML language servers show instead of "not accepted".
                    "errorMessage": .string(
                        "not a component type of the catalog; use one of \(types.joined(separator: ", ")), or declare it in components/"
                    ),
                ],
                "identifier": [
                    "type": "string", "minLength": 1,
                    "description": "Unique within the screen; component$N (its position) when absent.",
                ],
                "content": ["description": "The type's fields."],
            ],
            "allOf": .array(
                types.map { type in
                    [
                        "if": ["properties": ["name": ["const": .string(type)]], "required": ["name"]],
                        "then": ["properties": ["content": ["$ref": .string("#/$defs/content.\(type)")]]],
                    ]
                }
            ),
        ]
    }

    private static func object(_ fields: [FieldSchema], summary: String?, owner: String?) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for field in fields {
            var value = valueOrBinding(field.type)
            if case .object(var members) = value, let description = field.summary {
                members["description"] = .string(description + (field.isDynamic ? " (dynamic)" : ""))
                value = .object(members)
            }
            properties[field.name] = value
        }
        var result: [String: JSONValue] = [
            "type": "object", "additionalProperties": false, "properties": .object(properties),
            "required": .array(fields.filter(\.isRequired).map { .string($0.name) }),
        ]
        if let summary { result["description"] = .string(summary) }
        // What the VS Code servers show for an unknown field, a missing required one or a value
        // that is no object (one message serves all three there): which fields there are.
        let names = fields.map { $0.isRequired ? "\($0.name) (required)" : $0.name }.joined(separator: ", ")
        result["errorMessage"] = .string(
            fields.isEmpty ? "no fields here: {}" : "the fields \(owner.map { "of \($0) " } ?? "")are \(names); no others")
        return .object(result)
    }

    /// A value of the field's type, or a binding that gives one at run time. Told apart by shape
    /// (an object with a binding's keyword, or with only `$` keys, like a misspelt one) rather than
    /// by `anyOf`, so that a wrong value is reported for what it is ("not one of title, body"),
    /// not as "not valid under any of the given schemas".
    private static func valueOrBinding(_ type: FieldType) -> JSONValue {
        let keywords: [JSONValue] = ["$bind", "$template", "$each", "$text", "$when", "$param", "$fragment"].map { ["required": [$0]] }
        let misspelt: JSONValue = ["minProperties": 1, "propertyNames": ["pattern": "^\\$"]]
        return [
            "if": ["type": "object", "anyOf": .array(keywords + [misspelt])],
            "then": ["$ref": "#/$defs/binding"],
            "else": typeSchema(type),
        ]
    }

    private static func typeSchema(_ type: FieldType) -> JSONValue {
        switch type {
        case .string: ["type": "string"]
        case .number: ["type": "number"]
        case .integer: ["type": "integer"]
        case .bool: ["type": "boolean"]
        case .url: ["type": "string", "pattern": "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$"]
        case .enumeration(let values):
            [
                "enum": .array(values.map(JSONValue.string)),
                "errorMessage": .string("not a known value; use one of \(values.joined(separator: ", "))"),
            ]
        case .action: ["$ref": "#/$defs/action"]
        case .object(let fields?): object(fields, summary: nil, owner: nil)
        case .object(nil): ["type": "object"]
        case .array(let items?): ["type": "array", "items": valueOrBinding(items)]
        case .array(nil): ["type": "array"]
        case .componentContents: ["type": "array", "items": ["type": "object"]]
        }
    }

    /// `{$fragment: name, with: {...}}`: a fragment of `fragments/` used here.
    private static let fragmentUse: JSONValue = [
        "type": "object", "required": ["$fragment"], "additionalProperties": false,
        "description": "A fragment (a file under fragments/) used here, with its parameters' values.",
        "properties": [
            "$fragment": ["type": "string", "description": "Its path under fragments/ without the extension."], "with": ["type": "object"],
        ],
    ]

    private static let binding: JSONValue = [
        "description":
            "A dynamic value: $bind a path, a $template of text, $each item of an array, $text a localized message, $when a value chosen by comparing data, a $fragment, or (in a fragment) a $param.",
        "oneOf": [
            [
                "type": "object", "required": ["$text"], "additionalProperties": false,
                "properties": [
                    "$text": ["type": "string", "description": "A message id of strings/<locale>.yaml."],
                    "with": ["type": "object", "additionalProperties": ["type": ["string", "number", "boolean"]]],
                ],
            ],
            ["$ref": "#/$defs/fragmentUse"],
            ["type": "object", "required": ["$param"], "additionalProperties": false, "properties": ["$param": ["type": "string"]]],
            [
                "type": "object", "required": ["$bind"], "additionalProperties": false,
                "properties": ["$bind": ["type": "string", "description": "source.key[0].key"], "default": [:], "placeholder": [:]],
            ],
            [
                "type": "object", "required": ["$template"], "additionalProperties": false,
                "properties": [
                    "$template": ["type": "string", "description": "Hello, {source.name}!"], "default": [:], "placeholder": [:],
                ],
            ],
            [
                "type": "object", "required": ["$when"], "additionalProperties": false,
                "properties": [
                    "$when": [
                        "type": "array", "minItems": 1,
                        "items": [
                            "type": "object", "required": ["if", "then"], "additionalProperties": false,
                            "properties": [
                                "if": [
                                    "type": "object", "required": ["value"], "additionalProperties": false, "minProperties": 2,
                                    "maxProperties": 2,
                                    "properties": [
                                        "value": ["type": "string"], "equals": [:], "one_of": ["type": "array", "minItems": 1],
                                        "above": ["type": "number"], "below": ["type": "number"], "present": ["type": "boolean"],
                                    ],
                                ],
                                "then": [:],
                            ],
                        ],
                    ],
                    "else": [:],
                ],
            ],
            [
                "type": "object", "required": ["$each", "template"], "additionalProperties": false,
                "properties": [
                    "$each": ["type": "string"], "as": ["type": "string"], "template": [:], "limit": ["type": "integer", "minimum": 1],
                ],
            ],
        ],
    ]

    private static let action: JSONValue = [
        "type": "object", "required": ["identifier", "content"],
        "properties": ["identifier": ["type": "string"], "content": ["type": "object"]],
        "allOf": [
            [
                "if": ["properties": ["identifier": ["const": "navigation"]]],
                "then": [
                    "properties": [
                        "content": [
                            "required": ["interface_identifier"],
                            "properties": [
                                "interface_identifier": [
                                    "description":
                                        "A screen path (bikes/stations/velib), or inside data a $template whose values each fill one segment.",
                                    "oneOf": [
                                        ["type": "string"],
                                        [
                                            "type": "object", "required": ["$template"], "additionalProperties": false,
                                            "properties": ["$template": ["type": "string"]],
                                        ],
                                    ],
                                ]
                            ],
                        ]
                    ]
                ],
            ],
            [
                "if": ["properties": ["identifier": ["const": "executable"]]],
                "then": ["properties": ["content": ["required": ["name"], "properties": ["name": ["type": "string"]]]]],
            ],
        ],
    ]

    private static let source: JSONValue = [
        "type": "object", "required": ["type"],
        "oneOf": [
            [
                "properties": [
                    "type": ["const": "fixture"], "value": [:], "file": ["type": "string"], "summary": ["type": "string"],
                ],
                "additionalProperties": false,
                "oneOf": [["required": ["value"]], ["required": ["file"]]],
            ],
            [
                "properties": [
                    "type": ["const": "request"], "summary": ["type": "string"], "parameters": parameters,
                ],
                "required": ["parameters"], "additionalProperties": false,
            ],
            [
                "properties": [
                    "type": ["const": "http"], "summary": ["type": "string"],
                    "upstream": ["type": "string", "description": "A key of \"upstreams\" in config.json."],
                    "path": ["type": "string", "pattern": "^/", "description": "Path on the upstream; {name} inserts a parameter."],
                    "query": ["type": "object", "additionalProperties": ["type": ["string", "number", "boolean"]]],
                    "parameters": parameters,
                    "headers": ["type": "array", "items": ["type": "string"], "description": "Request headers forwarded to the upstream."],
                    "timeout": ["type": "number", "exclusiveMinimum": 0, "maximum": 60],
                    "ttl": ["type": "number", "minimum": 0, "maximum": 86_400],
                    "stale_while_revalidate": ["type": "number", "minimum": 0, "maximum": 86_400],
                    "stale_if_error": ["type": "number", "minimum": 0, "maximum": 604_800],
                    "max_bytes": ["type": "integer", "minimum": 1, "maximum": 67_108_864],
                    "fallback": [:],
                    "example": [
                        "type": "string",
                        "description":
                            "A JSON file (under the screens directory) of what the upstream answers: bindings are checked against it.",
                    ],
                    "schema": [
                        "type": "string",
                        "description":
                            "A JSON Schema file (under the screens directory) of what the upstream answers: bindings are checked against it.",
                    ],
                    "pages": [
                        "type": "object", "additionalProperties": false, "required": ["kind", "items"],
                        "description":
                            "How the upstream pages the list its answer holds: a list whose $each walks items continues, page after page.",
                        "properties": [
                            "kind": [
                                "enum": ["cursor", "link", "page", "offset"],
                                "description":
                                    "cursor: the answer holds the next page's cursor; link: a Link header with rel=\"next\"; page: numbered pages; offset: items counted from 0.",
                            ],
                            "items": [
                                "type": "string", "description": "Where the answer holds the page's items, like items or data.results.",
                            ],
                            "cursor": ["type": "string", "description": "Where the answer holds the next page's cursor (kind cursor)."],
                            "parameter": [
                                "type": "string", "description": "The upstream's query parameter the next page's position goes in.",
                            ],
                            "first": [
                                "type": "integer", "minimum": 0, "description": "The number of the first page (kind page; default 1).",
                            ],
                            "size": [
                                "type": "integer", "minimum": 1, "maximum": 1000,
                                "description": "The items a full page holds (kinds page and offset): a page with fewer is the last.",
                            ],
                            "summary": ["type": "string"],
                        ],
                    ],
                    "answers": [
                        "type": "object",
                        "description": "Statuses that are answers, not failures (a 404 for a deleted item): a patch, kept for ttl.",
                        "propertyNames": ["pattern": "^(4xx|5xx|[45][0-9][0-9])$"],
                        "additionalProperties": [
                            "type": "object", "additionalProperties": false,
                            "properties": [
                                "ttl": ["type": "number", "minimum": 0, "maximum": 86_400], "summary": ["type": "string"],
                                "data": patchEntries,
                            ],
                        ],
                    ],
                ],
                "required": ["upstream", "path"], "additionalProperties": false,
            ],
        ],
    ]

    /// An action: typed inputs, an optional upstream call, answers by outcome.
    private static let screenAction: JSONValue = [
        "type": "object", "required": ["answers"], "additionalProperties": false,
        "properties": [
            "summary": ["type": "string"],
            "inputs": [
                "type": "object", "description": "Typed like parameters, with a message for people when a value is refused.",
                "additionalProperties": [
                    "type": "object", "additionalProperties": false,
                    "properties": [
                        "type": ["enum": ["string", "integer", "number", "bool"]], "default": [:],
                        "required": ["type": "boolean"], "one_of": ["type": "array", "minItems": 1], "pattern": ["type": "string"],
                        "min_length": ["type": "integer", "minimum": 0], "max_length": ["type": "integer", "minimum": 0],
                        "message": ["type": "string"], "summary": ["type": "string"],
                    ],
                ],
            ],
            "call": [
                "type": "object", "required": ["upstream", "path"], "additionalProperties": false,
                "properties": [
                    "upstream": ["type": "string", "description": "A key of \"upstreams\" in config.json."],
                    "method": ["enum": .array(ScreenAction.Call.Method.allCases.map { .string($0.rawValue) })],
                    "path": [
                        "type": "string", "pattern": "^/",
                        "description": "Path on the upstream; {name} inserts an input or a path parameter.",
                    ],
                    "query": ["type": "object", "additionalProperties": ["type": ["string", "number", "boolean"]]],
                    "body": ["description": "The JSON body; bind inputs.<name> and path.<name>."],
                    "headers": ["type": "array", "items": ["type": "string"], "description": "Request headers forwarded to the upstream."],
                    "timeout": ["type": "number", "exclusiveMinimum": 0, "maximum": 60],
                    "max_bytes": ["type": "integer", "minimum": 1, "maximum": 67_108_864],
                    "summary": ["type": "string"],
                ],
            ],
            "answers": [
                "type": "object",
                "description": "By outcome: success, invalid, 4xx, 5xx, a status like \"409\", timeout, failure.",
                "propertyNames": ["pattern": "^(success|invalid|timeout|failure|4xx|5xx|[45][0-9][0-9])$"],
                "additionalProperties": [
                    "type": "object", "additionalProperties": false,
                    "properties": [
                        "status": ["type": "integer"],
                        "summary": ["type": "string"],
                        "then": ["$ref": "#/$defs/action"],
                        "data": patchEntries,
                    ],
                ],
            ],
        ],
    ]

    /// A patch: entries for the screen's dynamic components.
    private static let patchEntries: JSONValue = [
        "type": "array",
        "items": [
            "type": "object", "required": ["identifier", "content"], "additionalProperties": false,
            "properties": ["identifier": ["type": "string"], "content": ["type": "object"]],
        ],
    ]

    private static let parameters: JSONValue = [
        "type": "object",
        "additionalProperties": [
            "type": "object", "additionalProperties": false,
            "properties": [
                "type": ["enum": ["string", "integer", "number", "bool"]], "default": [:],
                "required": ["type": "boolean"], "one_of": ["type": "array", "minItems": 1], "pattern": ["type": "string"],
                "min_length": ["type": "integer", "minimum": 0], "max_length": ["type": "integer", "minimum": 0],
                "summary": ["type": "string"],
            ],
        ],
    ]
}
