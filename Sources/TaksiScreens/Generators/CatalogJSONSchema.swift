public import TaksiSchema

/// A JSON Schema (2020-12) of component files (`components/<type>.json`) for editors: names,
/// types, `required`, `dynamic`, enum values (a string, or `{"value", "since", "until"}`), and
/// the app versions (`since`, `until`, `required_since`). `taksi-server schema --catalog` prints it.
public enum CatalogJSONSchema {
    public static func make() -> JSONValue {
        let version: JSONValue = [
            "type": "string", "pattern": "^v?[0-9]+(\\.[0-9]+)*(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$",
        ]
        let field: JSONValue = [
            "type": "object",
            "description": "One field of the component's content.",
            "required": ["name", "type"],
            "additionalProperties": false,
            "properties": [
                "name": ["type": "string", "description": "The JSON key in content."],
                "type": ["$ref": "#/$defs/typeName"],
                "required": ["type": "boolean", "description": "Whether the client fails when it is missing (false by default)."],
                "dynamic": ["type": "boolean", "description": "Whether a data entry sets it (false by default)."],
                "summary": ["type": "string"],
                "values": ["$ref": "#/$defs/values"],
                "items": ["$ref": "#/$defs/itemType"],
                "fields": ["type": "array", "items": ["$ref": "#/$defs/field"]],
                "since": ["$ref": "#/$defs/version", "description": "The first app version that decodes it."],
                "until": ["$ref": "#/$defs/version", "description": "The last app version that decodes it."],
                "required_since": ["$ref": "#/$defs/version", "description": "The first app version that requires it."],
            ],
        ]
        let values: JSONValue = [
            "type": "array", "minItems": 1,
            "items": [
                "oneOf": [
                    ["type": "string"],
                    [
                        "type": "object", "required": ["value"], "additionalProperties": false,
                        "properties": [
                            "value": ["type": "string"], "since": ["$ref": "#/$defs/version"], "until": ["$ref": "#/$defs/version"],
                            "summary": ["type": "string"],
                        ],
                    ],
                ]
            ],
        ]
        let itemType: JSONValue = [
            "type": "object", "required": ["type"], "additionalProperties": false,
            "properties": [
                "type": ["$ref": "#/$defs/typeName"], "values": ["$ref": "#/$defs/values"], "items": ["$ref": "#/$defs/itemType"],
                "fields": ["type": "array", "items": ["$ref": "#/$defs/field"]],
            ],
        ]
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "taksi-server component schema",
            "description": "A custom component type the app registers: Screens/components/<name>.json.",
            "type": "object",
            "required": ["name", "fields"],
            "additionalProperties": false,
            "properties": [
                "name": [
                    "type": "string", "pattern": "^[A-Za-z0-9_]+$",
                    "description": "The type's name on the wire, like restaurant_component.",
                ],
                "summary": ["type": "string"],
                "since": ["$ref": "#/$defs/version", "description": "The first app version that decodes the component."],
                "until": ["$ref": "#/$defs/version", "description": "The last app version that decodes the component."],
                "fields": ["type": "array", "items": ["$ref": "#/$defs/field"]],
            ],
            "$defs": [
                "version": version, "field": field, "values": values, "itemType": itemType,
                "typeName": ["enum": .array(FieldType.names.map(JSONValue.string))],
            ],
        ]
    }
}
