import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// The example screens in `Screens/`: they load without a diagnostic, their payloads follow
/// PROTOCOL.md, and their bytes match the golden files (sorted keys, so any change is a visible diff).
/// Run with `TAKSI_UPDATE_GOLDEN=1` to rewrite the golden files after an intended change.
@Suite("Example screens")
struct ExampleScreensTests {
    static let screens = ScreenSetLoader.load(directory: repositoryRoot.appendingPathComponent("Screens").path)
    static let goldenDirectory = repositoryRoot.appendingPathComponent("Tests/TaksiScreensTests/Golden")

    @Test("the example set loads without errors or warnings")
    func loads() throws {
        #expect(Self.screens.diagnostics.isEmpty, "\(Self.screens.diagnostics.report)")
        let set = try #require(Self.screens.screenSet)
        #expect(set.names == ["bikes/networks", "bikes/stations", "home", "landing", "login", "repositories"])
    }

    /// Every variant's file name without `.json`: `home`, `home-classic`, `landing-compact`, ...
    static let variantFiles = ["home", "home-classic", "landing", "landing-compact", "login", "networks", "repositories", "stations"]

    /// Query strings for the data of screens that need parameters.
    static let sampleQueries = ["bikes/stations": ["network": "velib"], "repositories": ["q": "swift"]]

    /// The values of a screen's `http` sources, read from the offline fixtures under upstreams/
    /// the way the server's `file:` upstreams answer (config.json points there).
    static func upstreamValues(_ screen: CompiledScreen) throws -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for call in try screen.dataPlan.upstreamCalls(query: sampleQueries[screen.name] ?? [:]) {
            let path = call.target.split(separator: "?").first.map(String.init) ?? ""
            let file = repositoryRoot.appendingPathComponent("upstreams/\(call.definition.upstream)\(path).json")
            values[call.source] = try JSONParser.parse(Array(try Data(contentsOf: file))).value
        }
        return values
    }

    @Test("every variant's skeleton and data match their golden files", arguments: variantFiles)
    func golden(_ fileName: String) throws {
        let set = try #require(Self.screens.screenSet)
        let screen = try #require(set.screens.values.flatMap(\.all).first { (($0.file as NSString).lastPathComponent as NSString).deletingPathExtension == fileName })
        let query = Self.sampleQueries[screen.name] ?? [:]
        let values = screen.dataPlan.staticValues.merging(try screen.dataPlan.requestValues(query: query)) { $1 }
            .merging(try Self.upstreamValues(screen)) { $1 }
        let (data, problems) = screen.dataPlan.build(values: values, catalog: set.catalog)
        #expect(problems.filter(\.isLoss).isEmpty, "\(problems)")
        try compare(JSONWriter.string(screen.skeleton.jsonValue, pretty: true), golden: "\(fileName).skeleton.json")
        try compare(JSONWriter.string(data.jsonValue, pretty: true), golden: "\(fileName).data.json")
    }

    @Test("the golden list covers every variant")
    func everyVariantHasGoldens() throws {
        let set = try #require(Self.screens.screenSet)
        let files = set.screens.values.flatMap(\.all).map { (($0.file as NSString).lastPathComponent as NSString).deletingPathExtension }
        #expect(files.sorted() == Self.variantFiles)
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
                    #expect(try JSONDecoder().decode(LabelContent.self, from: Data(JSONWriter.bytes(component.content))).value.isEmpty == false)
                }
            }
            let dynamic = Set(skeleton.components.filter(\.requiresData).map(\.identifier))
            let values = screen.dataPlan.staticValues.merging(try screen.dataPlan.requestValues(query: ["name": "Ada"])) { $1 }
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
        if ProcessInfo.processInfo.environment["TAKSI_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Self.goldenDirectory, withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try #require(
            FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) },
            "missing golden file \(file); run the tests with TAKSI_UPDATE_GOLDEN=1 to create it", sourceLocation: sourceLocation
        )
        #expect(actual == expected, "\(file) differs; if the change is intended, run with TAKSI_UPDATE_GOLDEN=1", sourceLocation: sourceLocation)
    }
}
