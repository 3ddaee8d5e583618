import Foundation
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

/// Screens directories laid out the ways deployments lay them out: reached through symbolic links,
/// holding links, looping. The kubelet's ConfigMap layout is tested with the server (ConfigMapVolumeTests).
@Suite("Screens directory")
struct ScreenDirectoryTests {
    static let screen = #"{"name": "start", "entry": true, "components": [{"name": "spacer_component", "content": {}}]}"#
    static let other = #"{"name": "other", "entry": true, "components": [{"name": "spacer_component", "content": {}}]}"#

    func makeFolder() throws -> URL {
        let folder = Scratch.path("dir")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func write(_ text: String, _ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func link(_ url: URL, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination)
    }

    @Test("a screens directory reached through a symbolic link loads like the directory itself")
    func linkedDirectory() throws {
        let folder = try makeFolder()
        try write(Self.screen, folder.appendingPathComponent("real/start.json"))
        try link(folder.appendingPathComponent("Screens"), to: folder.appendingPathComponent("real").path)
        let load = ScreenSetLoader.load(directory: folder.appendingPathComponent("Screens").path)
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        #expect(load.screenSet?.names == ["start"])
    }

    @Test("linked files and linked subfolders count; broken links and hidden names are skipped; loops end")
    func linksInside() throws {
        let folder = try makeFolder()
        let screens = folder.appendingPathComponent("Screens")
        try write(Self.screen, folder.appendingPathComponent("elsewhere/start.json"))
        try write(Self.other, folder.appendingPathComponent("shared/other.json"))
        try FileManager.default.createDirectory(at: screens, withIntermediateDirectories: true)
        try link(screens.appendingPathComponent("start.json"), to: "../elsewhere/start.json")
        try link(screens.appendingPathComponent("more"), to: folder.appendingPathComponent("shared").path)
        try link(screens.appendingPathComponent("broken.json"), to: "../nowhere.json")
        try link(screens.appendingPathComponent("loop"), to: ".")
        try write("not json", screens.appendingPathComponent(".swap.json"))

        let files = try #require(ScreenDirectory.files(in: screens.path))
        #expect(files.map(\.relativePath) == ["more/other.json", "start.json"])
        let load = ScreenSetLoader.load(directory: screens.path)
        #expect(!load.diagnostics.containsErrors, "\(load.diagnostics.report)")
        #expect(load.screenSet?.names == ["other", "start"])
    }

    @Test("a path that is not a directory is reported, and so is a link to nothing")
    func notADirectory() throws {
        let folder = try makeFolder()
        try link(folder.appendingPathComponent("Screens"), to: folder.appendingPathComponent("missing").path)
        let load = ScreenSetLoader.load(directory: folder.appendingPathComponent("Screens").path)
        #expect(load.diagnostics.map(\.code) == [.unreadableFile])
        #expect(ScreenDirectory.files(in: folder.appendingPathComponent("Screens").path) == nil)
    }
}
