import Foundation
import TaksiSchema
import TaksiTestSupport
import Testing

/// docs/client.md shows app teams code: every Swift block is either a file of
/// docs/client-snippets (which `swift build` compiles against the client stand-in, target
/// ClientSnippets) shown exactly as it is, a file of docs/client-snippets/Generated (what
/// `taksi-server codegen swift` writes for the examples, also compiled), or says why it cannot be
/// compiled here. (StandIns/, the app's own functions that the code calls, is compiled but not shown.)
@Suite("Client documentation")
struct ClientDocTests {
    static let document = repositoryRoot.appendingPathComponent("docs/client.md")
    static let snippets = repositoryRoot.appendingPathComponent("docs/client-snippets")

    /// Each Swift block with the comment line above it.
    static func blocks(of text: String) -> [(marker: String, code: String)] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [(String, String)] = []
        var index = 0
        while index < lines.count {
            guard lines[index] == "```swift" else {
                index += 1
                continue
            }
            let marker = index > 0 ? lines[index - 1] : ""
            var end = index + 1
            while end < lines.count, lines[end] != "```" { end += 1 }
            blocks.append((marker, lines[(index + 1)..<end].map { $0 + "\n" }.joined()))
            index = end + 1
        }
        return blocks
    }

    @Test("every compiled block is its file, byte for byte; every file is shown; every other block says why it is not compiled")
    func blocksAreTheCompiledFiles() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.snippets.path).filter { $0.hasSuffix(".swift") }.sorted()
        var shown: [String] = []
        let compiled = "<!-- compiled: docs/client-snippets/"
        let generated = "<!-- generated: docs/client-snippets/"
        for (marker, code) in Self.blocks(of: text) {
            if marker.hasPrefix(generated), marker.hasSuffix(" -->") {
                // A file taksi-server codegen wrote (ExampleScreensTests checks it is what it writes).
                let name = String(marker.dropFirst(generated.count).dropLast(" -->".count))
                let file = try String(contentsOf: Self.snippets.appendingPathComponent(name), encoding: .utf8)
                #expect(code == file, "docs/client.md's block for \(name) differs from the generated file")
            } else if marker.hasPrefix(compiled), marker.hasSuffix(" -->") {
                let name = String(marker.dropFirst(compiled.count).dropLast(" -->".count))
                let file = try String(contentsOf: Self.snippets.appendingPathComponent(name), encoding: .utf8)
                #expect(code == file, "docs/client.md's block for \(name) differs from the file the build compiles")
                shown.append(name)
            } else {
                #expect(
                    marker.hasPrefix("<!-- not compiled: ") && marker.hasSuffix(" -->"),
                    "a Swift block with neither a compiled file nor a reason: \(code.prefix(80))")
            }
        }
        #expect(shown.sorted() == files, "each file of docs/client-snippets is shown once")
    }

    @Test("the sample app's manifest names this package by its folder, whatever the clone or download is called")
    func sampleAppFolderName() async throws {
        // As a ZIP from GitHub unpacks: taksi-server-main.
        let root = Scratch.path("download").appendingPathComponent("taksi-server-main")
        let app = root.appendingPathComponent("Examples/ShopApp.swiftpm")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("Examples/ShopApp.swiftpm/Package.swift"),
            to: app.appendingPathComponent("Package.swift"))
        let dumped = try await runTool(["swift", "package", "--package-path", app.path, "dump-package"])
        try #require(dumped.status == 0, "\(dumped.output)")
        let manifest = try JSONDecoder().decode(JSONValue.self, from: Data(dumped.output.utf8.drop { $0 != UInt8(ascii: "{") }))
        let local = manifest["dependencies"]?.arrayValue?.compactMap { $0["fileSystem"]?.arrayValue?.first?["identity"]?.stringValue }
        #expect(local == [root.lastPathComponent], "\(dumped.output)")
        let products = manifest["targets"]?.arrayValue?.first?["dependencies"]?.arrayValue?.compactMap {
            $0["product"]?.arrayValue?.dropFirst().first?.stringValue
        }
        #expect(products == ["taksi-swift", root.lastPathComponent], "\(dumped.output)")
    }

    @Test("the blocks are found as written")
    func parsing() {
        let text = "a\n<!-- compiled: docs/client-snippets/A.swift -->\n```swift\nlet a = 1\n```\n```swift\nb\n```\n"
        let blocks = Self.blocks(of: text)
        #expect(blocks.map(\.marker) == ["<!-- compiled: docs/client-snippets/A.swift -->", "```"])
        #expect(blocks.map(\.code) == ["let a = 1\n", "b\n"])
    }
}
