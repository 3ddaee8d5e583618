import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiScreens

/// `taksi-server codegen swift`: the Swift it writes type-checks against the client stand-in for a
/// catalog with every kind of field, and the command rewrites only what changed.
@Suite("Codegen")
struct CodegenTests {
    /// A catalog with every field type, odd names, keywords, nested objects, an enum array, a
    /// component without dynamic fields and one without fields.
    static let components = [
        "components/kitchen_sink.json": """
        {"name": "kitchen_sink", "summary": "Every kind of field.\\nOn two lines.", "fields": [
          {"name": "title", "type": "string", "required": true, "dynamic": true, "summary": "The title."},
          {"name": "count", "type": "integer", "dynamic": true},
          {"name": "ratio", "type": "number", "required": true, "dynamic": true},
          {"name": "is_new", "type": "bool"},
          {"name": "image_url", "type": "url", "dynamic": true},
          {"name": "default", "type": "string"},
          {"name": "class", "type": "enum", "required": true, "values": ["4k", "on-sale", "on_sale", "default", "x"]},
          {"name": "tags", "type": "array", "items": {"type": "enum", "values": ["a", "b"]}},
          {"name": "address", "type": "object", "fields": [{"name": "street_name", "type": "string", "required": true}, {"name": "tap", "type": "action"}]},
          {"name": "extra", "type": "object"},
          {"name": "list", "type": "array"},
          {"name": "primary_action", "type": "action", "required": true},
          {"name": "secondary", "type": "action"}
        ]}
        """,
        "components/badge.json":
            #"{"name": "badge", "fields": [{"name": "kind", "type": "enum", "values": ["hot", "new"], "required": true}]}"#,
        "components/divider.json": #"{"name": "divider", "fields": []}"#,
        "actions.json": #"{"custom_actions": [{"identifier": "share", "summary": "Shares the screen."}, {"identifier": "open-cart"}]}"#,
        "home.json": #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "x"}}]}"#,
    ]

    @Test("the code for every kind of field type-checks against the client stand-in (and the SwiftUI one on Linux)")
    func typeChecks() async throws {
        // Uses of what a feature and a view reach.
        let uses = """
            func uses(_ sink: KitchenSinkComponent, _ decoder: any Decoder) {
                let _: String = sink.content.dynamicData.title
                let _: Int? = sink.content.dynamicData.count
                let _: URL? = sink.content.dynamicData.imageURL
                let _: Bool? = sink.content.isNew
                let _: String? = sink.content.`default`
                let _: KitchenSinkComponent.Content.Class = sink.content.`class`
                let _: [KitchenSinkComponent.Content.TagsItem]? = sink.content.tags
                let _: String? = sink.content.address?.streetName
                let _: (any Action)? = sink.content.address?.tap
                let _: any Action = sink.content.primaryAction
                let _ = KitchenSinkComponent.Content.Class._4k
                let _ = KitchenSinkComponent.Content.Class.onSale2
                let _ = ComponentIdentifier.allCases.map(\\.metatype)
                let _ = ActionIdentifier.openCart.metatype
                let _: (any Component)? = TaksiCatalog.component(from: decoder, withName: "badge")
                let _: (any Action)? = TaksiCatalog.action(from: decoder, withIdentifier: "share")
            }
            """
        let result = try await typeCheck(Self.components, uses: uses)
        #expect(result.status == 0, "\(result.output)")
    }

    /// Writes the code `codegen swift` makes of `files`, the app's views of its components and
    /// `uses`, and type-checks them against the client stand-in.
    func typeCheck(_ files: [String: String], uses: String) async throws -> (status: Int32, output: String) {
        let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) })
        try #require(load.screenSet != nil, "\(load.diagnostics.report)")
        let folder = Scratch.path("codegen")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        var types: [String] = []
        for file in SwiftCodegen.files(catalog: load.catalog, summaries: load.actionSummaries, appVersion: nil) {
            let url = folder.appendingPathComponent(file.name)
            try Data(file.contents.utf8).write(to: url)
            paths.append(url.path)
            if file.name.hasSuffix("Component.swift") { types.append(String(file.name.dropLast(".swift".count))) }
        }
        // The app's views, as it writes them.
        let views = types.map { type in
            """
            struct \(type)View: View, ViewRepresentable {
                let content: \(type).Content
                let onAction: (any Action) -> Void
                var body: some View { EmptyView() }
            }
            """
        }
        let viewsFile = folder.appendingPathComponent("Views.swift")
        try Data(("import SwiftUI\nimport Taksi\n\n" + views.joined(separator: "\n\n") + "\n").utf8).write(to: viewsFile)
        let usesFile = folder.appendingPathComponent("Uses.swift")
        try Data(("import Foundation\nimport Taksi\n\n" + uses).utf8).write(to: usesFile)
        let modules = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("Modules")
        let candidates = [
            modules,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Modules"),
        ]
        let include = try #require(
            candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Taksi.swiftmodule").path) },
            "the Taksi stand-in module was not built next to the tests")
        return try await runTool(
            ["swiftc", "-typecheck", "-swift-version", "5", "-I", include.path] + paths + [viewsFile.path, usesFile.path])
    }

    @Test("field names Swift reserves, of other scripts, of no letters, and types named like the code's own compile")
    func oddNamesCompile() async throws {
        let files = [
            "components/odd.json": """
            {"name": "odd", "fields": [
              {"name": "type", "type": "enum", "values": ["a", "self", "_", "Type"], "required": true},
              {"name": "protocol", "type": "string"},
              {"name": "self", "type": "string", "dynamic": true},
              {"name": "init", "type": "string"},
              {"name": "_", "type": "string"},
              {"name": "größe", "type": "integer"},
              {"name": "名前", "type": "string", "dynamic": true, "required": true},
              {"name": "café au lait", "type": "bool"},
              {"name": "content", "type": "object", "fields": [{"name": "self", "type": "string"}, {"name": "Type", "type": "enum", "values": ["x"]}]},
              {"name": "coding_keys", "type": "enum", "values": ["k"]},
              {"name": "tags", "type": "array", "items": {"type": "enum", "values": ["a"]}},
              {"name": "tags_item", "type": "enum", "values": ["b"]},
              {"name": "kind", "type": "enum", "values": ["big"], "dynamic": true}
            ]}
            """,
            "components/plain.json": """
            {"name": "plain", "fields": [{"name": "dynamic_data", "type": "object", "fields": [{"name": "a", "type": "action"}]}]}
            """,
            "actions.json": #"{"custom_actions": [{"identifier": "self"}, {"identifier": "über-share"}]}"#,
            "home.json": #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "x"}}]}"#,
        ]
        let uses = """
            func uses(_ odd: OddComponent, _ plain: PlainComponent) {
                let _: OddComponent.Content.TypeValue = odd.content.type
                let _: String? = odd.content.`protocol`
                let _: String? = odd.content.dynamicData.`self`
                let _: String = odd.content.dynamicData.名前
                let _: OddComponent.Content.DynamicData.Kind? = odd.content.dynamicData.kind
                let _: String? = odd.content.`init`
                let _: String? = odd.content.`_`
                let _: Int? = odd.content.größe
                let _: Bool? = odd.content.caféAuLait
                let _: String? = odd.content.content?.`self`
                let _: OddComponent.Content.ContentValue.TypeValue? = odd.content.content?.type
                let _: OddComponent.Content.CodingKeysValue? = odd.content.codingKeys
                let _: [OddComponent.Content.TagsItem]? = odd.content.tags
                let _: OddComponent.Content.TagsItemValue? = odd.content.tagsItem
                let _: (any Action)? = plain.content.dynamicData?.a
                let _ = [OddComponent.Content.TypeValue.a, .`self`, .value, .type]
                let _ = ActionIdentifier.`self`.metatype
                let _ = ÜberShareAction.self
            }
            """
        let result = try await typeCheck(files, uses: uses)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(
        "a catalog whose names would clash in Swift is refused by validate, at the name, with the fix",
        arguments: [
            (
                [
                    "components/promo.json": #"{"name": "promo", "fields": []}"#,
                    "components/promo_component.json": #"{"name": "promo_component", "fields": []}"#,
                ],
                #"components "promo" (Screens/components/promo.json) and "promo_component" would both be the Swift class PromoComponent"#
            ),
            (
                [
                    "components/foo_bar.json": #"{"name": "foo_bar", "fields": []}"#,
                    "components/fooBar.json": #"{"name": "fooBar", "fields": []}"#,
                ],
                "would both be the Swift class FooBarComponent"
            ),
            (
                [
                    "components/url_card.json": #"{"name": "url_card", "fields": []}"#,
                    "components/URL_card.json": #"{"name": "URL_card", "fields": []}"#,
                ],
                "would both be the Swift class URLCardComponent"
            ),
            (
                ["components/card.json": #"{"name": "card", "fields": []}"#, "components/CARD.json": #"{"name": "CARD", "fields": []}"#],
                "files whose names differ only by case"
            ),
            (
                ["components/x.json": #"{"name": "x", "fields": [{"name": "a b", "type": "string"}, {"name": "a-b", "type": "string"}]}"#],
                #"fields "a b" and "a-b" of component x would both be the Swift property aB; rename one"#
            ),
            (
                [
                    "components/x.json":
                        #"{"name": "x", "fields": [{"name": "t", "type": "string", "dynamic": true}, {"name": "dynamic_data", "type": "string"}]}"#
                ],
                "would be the Swift property dynamicData, which the code codegen swift writes uses for the dynamic fields"
            ),
            (
                [
                    "components/x.json":
                        #"{"name": "x", "fields": [{"name": "o", "type": "object", "fields": [{"name": "x_y", "type": "string"}, {"name": "x-y", "type": "string"}]}]}"#
                ],
                #"fields "x_y" and "x-y" of component x would both be the Swift property xY"#
            ),
            (
                ["actions.json": #"{"custom_actions": [{"identifier": "open-cart"}, {"identifier": "open_cart"}]}"#],
                #"custom actions "open-cart" and "open_cart" would both be the Swift class OpenCartAction"#
            ),
        ])
    func clashesRefused(files: [String: String], message: String) throws {
        var files = files
        files["home.json"] = #"{"name": "home", "entry": true, "components": [{"name": "label_component", "content": {"value": "x"}}]}"#
        let errors = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) }).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(errors)")
        let error = try #require(errors.first)
        #expect(error.code == .invalidName)
        #expect(error.message.contains(message), "\(error)")
        let path = error.path?.description ?? ""
        #expect(path.hasSuffix("name") || path.hasSuffix("identifier"), "\(error)")
    }

    @Test("names: types, properties with initialisms and keywords, enum cases made unique")
    func names() {
        #expect(SwiftCodegen.typeName(of: "restaurant_component") == "RestaurantComponent")
        #expect(SwiftCodegen.typeName(of: "card") == "CardComponent")
        #expect(SwiftCodegen.actionTypeName(of: "login_success") == "LoginSuccessAction")
        #expect(SwiftCodegen.propertyName("icon_url") == "iconURL")
        #expect(SwiftCodegen.propertyName("id") == "id")
        #expect(SwiftCodegen.propertyName("user_id") == "userID")
        #expect(SwiftCodegen.propertyName("default") == "`default`")
        #expect(SwiftCodegen.propertyName("4k") == "_4k")
    }

    @Test("the command writes once, rewrites nothing when nothing changed, and removes a file for a component that is gone")
    func command() async throws {
        let project = Scratch.path("codegen-cli")
        let screens = project.appendingPathComponent("Screens")
        for (path, text) in Self.components {
            let url = screens.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let command = CommandLineTests()
        let first = try await command.run(["codegen", "swift", "--out", "Generated", "Screens"], in: project)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output == "4 files in Generated: 4 written or removed\n")
        let again = try await command.run(["codegen", "swift", "--out", "Generated", "Screens"], in: project)
        #expect(again.output == "4 files in Generated: unchanged\n")
        // A file of the app's own in the folder is left alone; the one for a removed component goes.
        try Data("// mine\n".utf8).write(to: project.appendingPathComponent("Generated/Mine.swift"))
        try FileManager.default.removeItem(at: screens.appendingPathComponent("components/divider.json"))
        let removed = try await command.run(["codegen", "swift", "--out", "Generated", "Screens"], in: project)
        #expect(removed.output == "3 files in Generated: 2 written or removed\n", "TaksiCatalog.swift changes too: \(removed.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: project.appendingPathComponent("Generated").path).sorted()
        #expect(left == ["BadgeComponent.swift", "KitchenSinkComponent.swift", "Mine.swift", "TaksiCatalog.swift"])
    }
}
