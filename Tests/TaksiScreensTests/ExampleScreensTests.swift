import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

/// The example screens in `Screens/`, and only here: no other test reads them (but one, which runs
/// the binary: DeploymentTests checks deploy/kubernetes.yaml ships them), so a team can replace or
/// change them and this suite is all that speaks up. They load without a diagnostic, their
/// payloads follow PROTOCOL.md, and their bytes match the golden files (sorted keys, so any change
/// is a visible diff).
///
/// After an intended change, refresh the goldens with
/// `TAKSI_UPDATE_GOLDEN=1 swift test --filter ExampleScreensTests` and review the diff.
@Suite("Example screens")
struct ExampleScreensTests {
    static let screens = ScreenSetLoader.load(directory: repositoryRoot.appendingPathComponent("Screens").path)
    static let goldenDirectory = repositoryRoot.appendingPathComponent("Tests/TaksiScreensTests/Golden")
    static let refresh = "run TAKSI_UPDATE_GOLDEN=1 swift test --filter ExampleScreensTests and review the diff"

    @Test("the example set loads without errors or warnings")
    func loads() throws {
        #expect(Self.screens.diagnostics.isEmpty, "\(Self.screens.diagnostics.report)")
        #expect(Self.screens.screenSet?.names.isEmpty == false)
    }

    /// Every variant's file name without its extension: `home`, `home-classic`, `landing-compact`, ...,
    /// and for a variant with localized text, the same in each other locale: `home.pt`, `landing.en-XA`.
    static let variantFiles: [String] = allVariants.keys.sorted()

    /// The variants (each translation as one) by golden file name.
    static let allVariants: [String: ScreenVariant] = {
        guard let set = screens.screenSet else { return [:] }
        var variants: [String: ScreenVariant] = [:]
        for screen in set.screens.values.flatMap(\.all) {
            let name = ((screen.file as NSString).lastPathComponent as NSString).deletingPathExtension
            variants[name] = screen
            for (locale, translation) in screen.translations { variants["\(name).\(locale)"] = translation }
        }
        return variants
    }()

    /// Query strings for the data of example screens that need parameters (a new parameterised
    /// example needs one here, or its data golden is built without them and the test says so).
    static let sampleQueries = ["repositories": ["q": "swift"]]
    /// A path for each example screen with path parameters (the same rule as for queries).
    static let samplePaths = [
        "bikes/stations/{network}": "bikes/stations/velib", "repositories/{owner}/{repo}": "repositories/apple/swift-nio",
        "restaurants/{id}": "restaurants/la-table", "restaurants/{id}/reviews": "restaurants/la-table/reviews",
    ]

    /// The typed path parameters of the screen's sample path.
    static func pathValues(_ screen: ScreenVariant) throws -> [String: JSONValue] {
        guard screen.pattern.hasParameters else { return [:] }
        let path = try #require(
            samplePaths[screen.name], "\(screen.name) has path parameters; add a sample path to ExampleScreensTests.samplePaths")
        let match = try #require(screens.screenSet?.routes.match(path[...]))
        #expect(match.pattern.name == screen.name)
        return try match.pattern.values(match.segments)
    }

    /// The values of a screen's `http` sources, read from the offline fixtures under upstreams/
    /// the way the server's `file:` upstreams answer (config.json points there).
    static func upstreamValues(_ screen: ScreenVariant) throws -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for call in try screen.dataPlan.upstreamCalls(query: sampleQueries[screen.name] ?? [:], path: pathValues(screen)) {
            let path = call.target.split(separator: "?").first.map(String.init) ?? ""
            let file = repositoryRoot.appendingPathComponent("upstreams/\(call.definition.upstream)\(path).json")
            values[call.source] = try JSONParser.parse(Array(try Data(contentsOf: file))).value
        }
        return values
    }

    @Test("every variant's skeleton and data match their golden files", arguments: variantFiles)
    func golden(_ fileName: String) throws {
        let set = try #require(Self.screens.screenSet)
        let screen = try #require(Self.allVariants[fileName])
        let query = Self.sampleQueries[screen.name] ?? [:]
        let values: [String: JSONValue]
        do {
            values = screen.dataPlan.staticValues.merging(try screen.dataPlan.requestValues(query: query, path: Self.pathValues(screen))) {
                $1
            }
            .merging(try Self.upstreamValues(screen)) { $1 }
        } catch {
            Issue.record("\(screen.name) needs parameters for its data (\(error)); add them to ExampleScreensTests.sampleQueries")
            return
        }
        let (data, problems) = screen.dataPlan.build(values: values, catalog: set.catalog)
        #expect(problems.filter(\.isLoss).isEmpty, "\(problems)")
        // The sample URL's own skeleton: static fields built from its path hold its values.
        let skeleton = try screen.skeleton(path: Self.pathValues(screen), catalog: set.catalog).get()
        try compare(JSONWriter.string(skeleton.jsonValue, pretty: true), golden: "\(fileName).skeleton.json")
        try compare(JSONWriter.string(data.jsonValue, pretty: true), golden: "\(fileName).data.json")
    }

    @Test("the manifest of an app before and after restaurant_component (1.4, 2.1) matches its golden files", arguments: ["1.4", "2.1"])
    func manifests(version: String) throws {
        let set = try #require(Self.screens.screenSet)
        let manifest = AppManifest(set, appVersion: try #require(Version(version)))
        // Files as the command shows them, relative to where it runs (the repository), not this machine's path.
        let relative = { (text: String) in text.replacingOccurrences(of: repositoryRoot.path + "/", with: "") }
        try compare(relative(manifest.text), golden: "manifests/app-\(version).txt")
        try compare(relative(JSONWriter.string(manifest.json, pretty: true)), golden: "manifests/app-\(version).json")
    }

    @Test("taksi-server codegen swift writes for the examples exactly docs/client-snippets/Generated (which the build compiles)")
    func generatedSwift() throws {
        let load = Self.screens
        let folder = repositoryRoot.appendingPathComponent("docs/client-snippets/Generated")
        let files = SwiftCodegen.files(
            catalog: load.catalogVersions.catalog(load.catalog, forAppVersion: nil),
            versions: load.catalogVersions,
            summaries: load.actionSummaries, appVersion: nil)
        for file in files {
            let url = folder.appendingPathComponent(file.name)
            if isUpdatingGoldens {
                try Data(file.contents.utf8).write(to: url)
                continue
            }
            let written = FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) }
            #expect(written == file.contents, "\(file.name) differs; run taksi-server codegen swift --out docs/client-snippets/Generated")
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(present == files.map(\.name), "each generated file, and no other")
    }

    @Test("every golden file belongs to a variant that still exists")
    func noStaleGoldens() throws {
        let goldens = try FileManager.default.contentsOfDirectory(atPath: Self.goldenDirectory.path).filter { $0.hasSuffix(".json") }
        let expected = Set(Self.variantFiles.flatMap { ["\($0).skeleton.json", "\($0).data.json"] })
        let stale = Set(goldens).subtracting(expected).sorted()
        #expect(stale.isEmpty, "golden files of variants that no longer exist: \(stale.joined(separator: ", ")); delete them")
    }

    @Test("the container image's configuration names every upstream the examples use")
    func containerUpstreams() throws {
        let config = try JSONParser.parse(Array(Data(contentsOf: repositoryRoot.appendingPathComponent("deploy/container-config.json"))))
        let upstreams = Set(config["upstreams"]?.members?.map(\.key) ?? [])
        let load = ScreenSetLoader.load(directory: repositoryRoot.appendingPathComponent("Screens").path, upstreams: upstreams)
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
    }

    @Test("payloads follow the protocol: typed placeholders, requires_data exactly where data comes, entries only for dynamic components")
    func protocolRules() throws {
        let set = try #require(Self.screens.screenSet)
        for screen in set.screens.values.flatMap(\.all) {
            let skeleton = screen.skeleton
            // The client's own decoding of the envelope.
            let decoded = try JSONDecoder().decode(Skeleton.self, from: Data(JSONWriter.bytes(skeleton.jsonValue)))
            #expect(decoded == skeleton)
            #expect(Set(skeleton.components.map(\.identifier)).count == skeleton.components.count)
            for component in skeleton.components {
                let check = set.catalog.check(content: component.content, of: component.name)
                #expect(check.isValid, "\(screen.name)/\(component.identifier): \(check.violations)")
                if component.name == "label_component" {
                    #expect(
                        try JSONDecoder().decode(LabelContent.self, from: Data(JSONWriter.bytes(component.content))).value.isEmpty == false)
                }
            }
            let dynamic = Set(skeleton.components.filter(\.requiresData).map(\.identifier))
            let values = screen.dataPlan.staticValues.merging(
                try screen.dataPlan.requestValues(query: ["name": "Ada"], path: Self.pathValues(screen))
            ) { $1 }
            .merging(try Self.upstreamValues(screen)) { $1 }
            let data = screen.dataPlan.build(values: values, catalog: set.catalog).data
            #expect(Set(data.entries.map(\.identifier)).isSubset(of: dynamic))
            for entry in data.entries {
                let component = try #require(skeleton.components.first { $0.identifier == entry.identifier })
                let check = set.catalog.check(
                    dataContent: entry.content, of: component.name, staticContent: component.content.objectValue ?? [:]
                )
                #expect(check.isValid && check.violations.isEmpty, "\(check.violations)")
            }
            if screen.requiresData { #expect(screen.staticData == nil || screen.dataPlan.isStatic) }
        }
    }

    @Test("the greeting template reads the request, with its default")
    func requestTemplate() throws {
        let set = try #require(Self.screens.screenSet)
        let home = try #require(try set.screens["home"]?.select(.init(version: Version("2.1"))).get())
        func greeting(_ query: [String: String]) throws -> JSONValue? {
            let values = home.dataPlan.staticValues.merging(try home.dataPlan.requestValues(query: query)) { $1 }
            return home.dataPlan.build(values: values, catalog: set.catalog).data.entries.first { $0.identifier == "greeting" }?.content
        }
        #expect(try greeting([:]) == ["value": "Hello, friend!"])
        #expect(try greeting(["name": "Ada"]) == ["value": "Hello, Ada!"])
    }

    func compare(_ actual: String, golden file: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let url = Self.goldenDirectory.appendingPathComponent(file)
        if isUpdatingGoldens {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try #require(
            FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) },
            "missing golden file \(file) for a new example; \(Self.refresh)", sourceLocation: sourceLocation
        )
        #expect(actual == expected, "\(file) differs; if the change is intended, \(Self.refresh)", sourceLocation: sourceLocation)
    }
}
