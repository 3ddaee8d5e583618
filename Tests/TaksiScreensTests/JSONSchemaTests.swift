import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiScreens

/// The editor schema, checked by an independent validator: Python's `jsonschema` (installed by
/// `.ci/run`; `python3 -m pip install jsonschema` elsewhere). Every screen of the tests' own set
/// (`Tests/Fixtures/Screens`, which uses every feature) must pass it and known-bad screens must not.
@Suite("Editor JSON Schema")
struct JSONSchemaTests {
    static let fixtures = ScreenSetLoader.load(directory: repositoryRoot.appendingPathComponent("Tests/Fixtures/Screens").path)

    /// Runs the validator on `instances` (name → JSON); returns the names it rejected.
    func rejected(
        _ instances: [String: JSONValue], schema: JSONValue = ScreenJSONSchema.make(catalog: fixtures.catalog)
    ) async throws -> Set<String> {
        let directory = Scratch.path("schema")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(JSONWriter.bytes(schema)).write(to: directory.appendingPathComponent("schema.json"))
        for (name, instance) in instances {
            try Data(JSONWriter.bytes(instance)).write(to: directory.appendingPathComponent("\(name).instance.json"))
        }
        let script = """
            import glob, json, os, sys
            try:
                import jsonschema
            except ImportError:
                print("MISSING: python3 -m pip install jsonschema"); sys.exit(3)
            directory = sys.argv[1]
            schema = json.load(open(os.path.join(directory, "schema.json")))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            for path in sorted(glob.glob(os.path.join(directory, "*.instance.json"))):
                if not validator.is_valid(json.load(open(path))):
                    print("REJECTED " + os.path.basename(path)[:-len(".instance.json")])
            """
        let outcome = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, directory.path])
        let text = outcome.output
        try #require(outcome.status == 0, "the validator failed (\(outcome.status)): \(text)\(outcome.error)")
        return Set(text.split(separator: "\n").compactMap { $0.hasPrefix("REJECTED ") ? String($0.dropFirst(9)) : nil })
    }

    @Test(
        "the component-file schema passes every component of the tests' set and the examples, and fails known-bad ones",
        .enabled(if: pythonHas("jsonschema"), "needs python3 -m pip install jsonschema (.ci/run installs it)")
    )
    func componentFiles() async throws {
        var instances: [String: JSONValue] = [:]
        for folder in ["Tests/Fixtures/Screens/components", "Screens/components"] {
            let root = repositoryRoot.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: root.path) where name.hasSuffix(".json") {
                instances["good-\(folder.count)-\(name)"] = try JSONParser.parse(Array(Data(contentsOf: root.appendingPathComponent(name))))
                    .value
            }
        }
        let versioned = """
            {"name": "card", "since": "2.0", "until": "3.1-beta.2", "fields": [
              {"name": "kind", "type": "enum", "values": ["a", {"value": "b", "since": "2.3", "summary": "New."}], "required_since": "2.1"},
              {"name": "price", "type": "number", "until": "2.2"}, {"name": "price", "type": "string", "since": "2.3"},
              {"name": "tags", "type": "array", "items": {"type": "enum", "values": ["x"]}}
            ]}
            """
        instances["good-versioned"] = try JSONParser.parse(Array(versioned.utf8)).value
        let bad = [
            "unknown-key": #"{"name": "card", "fields": [], "extra": 1}"#,
            "unknown-type": #"{"name": "card", "fields": [{"name": "a", "type": "text"}]}"#,
            "value-without-value": #"{"name": "card", "fields": [{"name": "a", "type": "enum", "values": [{"since": "2.0"}]}]}"#,
            "bad-version": #"{"name": "card", "since": "two", "fields": []}"#,
            "bad-name": #"{"name": "my card", "fields": []}"#,
            "field-key": #"{"name": "card", "fields": [{"name": "a", "type": "string", "requird": true}]}"#,
        ]
        for (name, text) in bad { instances["bad-\(name)"] = try JSONParser.parse(Array(text.utf8)).value }
        let rejected = try await rejected(instances, schema: CatalogJSONSchema.make())
        #expect(rejected == Set(bad.keys.map { "bad-\($0)" }), "\(rejected.sorted())")
    }

    @Test(
        "every screen of a full set, JSON and YAML, passes the schema; known-bad screens fail it",
        .enabled(if: pythonHas("jsonschema"), "needs python3 -m pip install jsonschema (.ci/run installs it)")
    )
    func goodAndBadScreens() async throws {
        var instances: [String: JSONValue] = [:]
        let root = repositoryRoot.appendingPathComponent("Tests/Fixtures/Screens")
        // Every screen file, so a new one is covered without editing this list.
        let names = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter {
            ["json", "yaml"].contains(($0 as NSString).pathExtension) && !$0.hasPrefix("components/") && !$0.hasPrefix("fixtures/")
                && !$0.hasPrefix("actions.")
        }
        #expect(names.count == 8)
        instances["good-when"] = try JSONParser.parse(
            Array(
                #"{"name": "a", "components": [{"name": "label_component", "content": {"value": {"$when": [{"if": {"value": "q.n", "equals": 0}, "then": "none"}, {"if": {"value": "q.n", "one_of": [1, 2]}, "then": {"$template": "{q.n} left"}}], "else": "many"}}}]}"#
                    .utf8)
        ).value
        for name in names {
            let file = SourceFile(path: name, bytes: Array(try Data(contentsOf: root.appendingPathComponent(name))))
            let node = try name.hasSuffix(".yaml") ? YAMLReader.parse(file) : JSONParser.parse(file.bytes)
            instances["good-\(name.replacingOccurrences(of: "/", with: "-"))"] = node.value
        }
        let bad: [String: String] = [
            "unknown-type": #"{"name": "a", "components": [{"name": "lable_component", "content": {"value": "x"}}]}"#,
            "unknown-enum": #"{"name": "a", "components": [{"name": "label_component", "content": {"value": "x", "kind": "headline"}}]}"#,
            "null-value": #"{"name": "a", "components": [{"name": "label_component", "content": {"value": null}}]}"#,
            "missing-action": #"{"name": "a", "components": [{"name": "button_component", "content": {"title": "x"}}]}"#,
            "unknown-key": #"{"name": "a", "components": [], "extra": 1}"#,
            "unknown-field": #"{"name": "a", "components": [{"name": "label_component", "content": {"value": "x", "knid": "title"}}]}"#,
            "bad-binding": #"{"name": "a", "components": [{"name": "label_component", "content": {"value": {"$bnd": "a.b"}}}]}"#,
            "custom-type":
                #"{"name": "a", "components": [{"name": "restaurant_component", "content": {"title": "x", "icon_url": "no url", "kind": "cheap"}}]}"#,
            "bad-name": #"{"name": "a b", "components": []}"#,
            "no-components": #"{"name": "a"}"#,
            "when-two-tests":
                #"{"name": "a", "components": [{"name": "label_component", "content": {"value": {"$when": [{"if": {"value": "q.n", "above": 1, "below": 3}, "then": "x"}]}}}]}"#,
            "http-without-path": #"{"name": "a", "sources": {"s": {"type": "http", "upstream": "api"}}, "components": []}"#,
            "http-bad-timeout":
                #"{"name": "a", "sources": {"s": {"type": "http", "upstream": "api", "path": "/x", "timeout": "2s"}}, "components": []}"#,
        ]
        for (name, text) in bad { instances["bad-\(name)"] = try JSONParser.parse(Array(text.utf8)).value }
        let rejected = try await rejected(instances)
        #expect(rejected == Set(bad.keys.map { "bad-\($0)" }), "rejected: \(rejected.sorted())")
    }

    @Test(
        "a wrong enum value, an unknown field and an unknown type read as what they are, with validate's words for editors that show errorMessage",
        .enabled(if: pythonHas("jsonschema"), "needs python3 -m pip install jsonschema (.ci/run installs it)")
    )
    func messages() async throws {
        let schema = ScreenJSONSchema.make(catalog: Self.fixtures.catalog)
        let directory = Scratch.path("schema")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(JSONWriter.bytes(schema)).write(to: directory.appendingPathComponent("schema.json"))
        let script = """
            import json, sys, jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
            for text in sys.argv[2:]:
                error = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(text)))
                print(json.dumps([error.message, error.schema.get("errorMessage") if isinstance(error.schema, dict) else None]))
            """
        let instances = [
            #"{"name": "a", "components": [{"name": "label_component", "content": {"value": "x", "kind": "headline"}}]}"#,
            #"{"name": "a", "components": [{"name": "label_component", "content": {"value": "x", "knid": "title"}}]}"#,
            #"{"name": "a", "components": [{"name": "lable_component", "content": {"value": "x"}}]}"#,
        ]
        let result = try await runTool(["python3", "-c", script, directory.appendingPathComponent("schema.json").path] + instances)
        try #require(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map { try? JSONDecoder().decode([String?].self, from: Data($0.utf8)) }
        try #require(lines.count == 3, "\(result.output)")
        #expect(lines[0]?[0] == "'headline' is not one of ['title', 'subtitle', 'body']", "not 'valid under any of the given schemas'")
        #expect(lines[0]?[1] == "not a known value; use one of title, subtitle, body")
        #expect(lines[1]?[0]?.contains("'knid' was unexpected") == true)
        #expect(lines[1]?[1] == "the fields of label_component are value (required), kind; no others")
        #expect(lines[2]?[0]?.hasPrefix("'lable_component' is not one of") == true)
        #expect(lines[2]?[1]?.hasPrefix("not a component type of the catalog; use one of") == true)
        for line in lines { #expect(line?[0]?.contains("is not valid under any of the given schemas") == false) }
    }
}
