import Foundation
import Logging
import NIOPosix
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The server as Kubernetes runs it: its configuration and screens in a ConfigMap volume, which
/// the kubelet lays out as links into a timestamped folder and updates by swapping `..data`.
@Suite("ConfigMap volume")
struct ConfigMapVolumeTests {
    static func screen(_ title: String) -> String {
        #"{"name": "start", "entry": true, "components": [{"name": "label_component", "identifier": "t", "content": {"value": "\#(title)"}}]}"#
    }

    static let config = #"{"screens": "Screens", "port": 0, "access_log": false}"#

    func makeMount() -> URL {
        Scratch.path("configmap")
    }

    @Test("the kubelet's layout loads, and its atomic swap of ..data changes the watcher's fingerprint")
    func layout() throws {
        let mount = makeMount()
        let volume = KubeletVolume(mount: mount)
        try volume.publish(["config.json": Self.config, "Screens/start.json": Self.screen("One"), "Screens/nested/more.json": "{}"])
        // What the kubelet leaves: the files only in the timestamped folder, reached through links.
        let top = try FileManager.default.contentsOfDirectory(atPath: mount.path).sorted()
        #expect(top.count == 4, "\(top)")
        #expect(top.contains("..data") && top.contains("Screens") && top.contains("config.json"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: mount.appendingPathComponent("Screens").path) == "..data/Screens")

        let screens = mount.appendingPathComponent("Screens").path
        let first = try #require(ScreenDirectory.files(in: screens))
        #expect(first.map(\.relativePath) == ["nested/more.json", "start.json"], "the timestamped folders are not listed")

        // Same names and sizes, new files: the swap must still be seen.
        try volume.publish(["config.json": Self.config, "Screens/start.json": Self.screen("Two"), "Screens/nested/more.json": "{}"])
        let second = try #require(ScreenDirectory.files(in: screens))
        #expect(second.map(\.relativePath) == first.map(\.relativePath))
        #expect(second.map(\.fingerprint) != first.map(\.fingerprint))
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).count == 4, "the old folder is gone")
    }

    @Test("a server started as the manifest starts it (--config in the volume) serves, and reloads after a swap")
    func servesAndReloads() async throws {
        let mount = makeMount()
        let volume = KubeletVolume(mount: mount)
        try volume.publish(["config.json": Self.config, "Screens/start.json": Self.screen("One")])
        let configuration = try ServerConfiguration.resolve(file: mount.appendingPathComponent("config.json").path, environment: [:])
        let application = try buildApplication(configuration: configuration, logger: testLogger("configmap"))
        try await withRunningServer(application) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await connection.receive(1).first?.json?["components"]?.arrayValue?.first?["content"]?["value"] == "One")

            let watcher = try #require(application.watcher)
            let before = ScreenWatcher.fingerprint(of: watcher.directory)
            try volume.publish(["config.json": Self.config, "Screens/start.json": Self.screen("Two")])
            #expect(ScreenWatcher.fingerprint(of: watcher.directory) != before, "the watcher sees the swap")
            #expect(watcher.reload())
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await connection.receive(1).first?.json?["components"]?.arrayValue?.first?["content"]?["value"] == "Two")
        }
    }
}

/// Writes files into `mount` as the kubelet's atomic writer lays out a ConfigMap volume with
/// `items`: the files in a timestamped folder `..2026_11_21_20_25_30.<n>`, a link `..data` to it
/// (replaced by rename, so readers see the old set or the new one), and for every top-level name a
/// link `<name> -> ..data/<name>`. Publishing again swaps `..data` and removes the old folder.
struct KubeletVolume {
    let mount: URL

    func publish(_ files: [String: String]) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: mount, withIntermediateDirectories: true)
        let dataLink = mount.appendingPathComponent("..data")
        let previous = try? manager.destinationOfSymbolicLink(atPath: dataLink.path)
        let stamp = "..2026_11_21_20_25_30.\(UInt32.random(in: 0...UInt32.max))"
        for (path, text) in files {
            let url = mount.appendingPathComponent(stamp).appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let temporary = mount.appendingPathComponent("..data_tmp")
        try manager.createSymbolicLink(atPath: temporary.path, withDestinationPath: stamp)
        guard rename(temporary.path, dataLink.path) == 0 else { throw POSIXError(.EIO) }
        for name in Set(files.keys.compactMap { $0.split(separator: "/").first.map(String.init) }) {
            let link = mount.appendingPathComponent(name)
            if (try? manager.destinationOfSymbolicLink(atPath: link.path)) == nil {
                try manager.createSymbolicLink(atPath: link.path, withDestinationPath: "..data/\(name)")
            }
        }
        if let previous { try manager.removeItem(at: mount.appendingPathComponent(previous)) }
    }
}
