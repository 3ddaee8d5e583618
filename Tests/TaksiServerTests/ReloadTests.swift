import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Live reload: a valid edit is served, an invalid one keeps the last good set and shows up in
/// `/readyz`, and requests during reloads always get a whole answer from one set.
@Suite("Reload")
struct ReloadTests {
    /// A copy of the fixture screens in a fresh temporary directory, and an application over it.
    func makeApplication() throws -> (Application, URL) {
        try fixtureCopyApplication(label: "reload")
    }

    func write(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    func json(_ response: TestResponse) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
    }

    @Test("a valid edit is served; an invalid one keeps the last good set and is reported until fixed")
    func reloadCycle() async throws {
        let (application, directory) = try makeApplication()
        let login = directory.appendingPathComponent("login.json")
        let original = try String(contentsOf: login, encoding: .utf8)
        let firstVersion = application.store.status.version

        try write(original.replacingOccurrences(of: #""value": "Log in""#, with: #""value": "Sign in""#), to: login)
        #expect(application.watcher?.reload() == true)
        let edited = try await application.execute(.GET, uri: "/screens/login", headers: [:])
        #expect(json(edited)?["components"]?.arrayValue?.first?["content"]?["value"] == "Sign in")
        let secondVersion = application.store.status.version
        #expect(secondVersion != firstVersion)
        #expect(edited.headers["X-Taksi-Screens-Version"] == [secondVersion])

        try write(original.replacingOccurrences(of: #""kind": "title""#, with: #""kind": "titel""#), to: login)
        #expect(application.watcher?.reload() == false)
        #expect(
            json(try await application.execute(.GET, uri: "/screens/login", headers: [:]))?["components"]?.arrayValue?.first?[
                "content"]?["value"] == "Sign in")
        let ready = json(try await application.execute(.GET, uri: "/readyz", headers: [:]))
        #expect(ready?["status"] == "ready")
        #expect(ready?["screens_version"] == .string(secondVersion))
        let pending = ready?["pending_errors"]?.arrayValue ?? []
        #expect(pending.count == 1)
        #expect(
            pending.first?.stringValue?.contains("login.json:8:46: error: components[0].content.kind: \"titel\" is not a known value")
                == true, "\(pending)")

        try write(original, to: login)
        #expect(application.watcher?.reload() == true)
        #expect(application.store.status.version == firstVersion)
        #expect(json(try await application.execute(.GET, uri: "/readyz", headers: [:]))?["pending_errors"] == [])
    }

    @Test("a string table that stops parsing by live reload keeps the last good set serving, with the error in /readyz")
    func brokenStringTable() async throws {
        let (application, directory) = try makeApplication()
        let strings = directory.appendingPathComponent("strings")
        try FileManager.default.createDirectory(at: strings, withIntermediateDirectories: true)
        try write("hello: Hello\n", to: strings.appendingPathComponent("en.yaml"))
        try write("hello: Olá\n", to: strings.appendingPathComponent("pt.yaml"))
        try write(
            #"{"name": "hello", "entry": true, "components": [{"name": "label_component", "identifier": "t", "content": {"value": {"$text": "hello"}}}]}"#,
            to: directory.appendingPathComponent("hello.json")
        )
        #expect(application.watcher?.reload() == true)
        let good = application.store.status.version
        let portuguese = HTTPHeaders([("Accept-Language", "pt")])
        #expect(
            json(try await application.execute(.GET, uri: "/screens/hello", headers: portuguese))?["components"]?.arrayValue?
                .first?[
                    "content"]?["value"] == "Olá")

        // The reported typo: a key written twice. Before the fix, this ended the process.
        try write("hello: Olá\nhello: Olá de novo\n", to: strings.appendingPathComponent("pt.yaml"))
        #expect(application.watcher?.reload() == false)
        #expect(application.store.status.version == good)
        #expect(
            json(try await application.execute(.GET, uri: "/screens/hello", headers: portuguese))?["components"]?.arrayValue?
                .first?[
                    "content"]?["value"] == "Olá")
        let ready = json(try await application.execute(.GET, uri: "/readyz", headers: [:]))
        let pending = ready?["pending_errors"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(pending.contains { $0.contains("strings/pt.yaml:") && $0.contains(#"duplicate key "hello""#) }, "\(pending)")
    }

    @Test("requests during reloads get well-formed answers, each wholly from one screen set")
    func noFailedRequestDuringReloads() async throws {
        let (application, directory) = try makeApplication()
        let login = directory.appendingPathComponent("login.json")
        let extra = directory.appendingPathComponent("extra.json")
        let original = try String(contentsOf: login, encoding: .utf8)
        let snapshots = NIOLockedValueBox([application.store.status.version: application.store.snapshot])
        let requests: [(String, HTTPHeaders)] = [
            ("/screens/login", [:]), ("/screens/login/data", [:]), ("/screens/home", HTTPHeaders([("X-Taksi-Version", "2.0")])),
            ("/screens/home/data?name=Ada", [:]), ("/screens/landing", HTTPHeaders([("X-Taksi-User", "alice")])), ("/screens", [:]),
        ]

        let responses = try await withThrowingTaskGroup(of: [(Int, TestResponse)].self) { group in
            group.addTask {
                // The writer: valid edits, invalid edits, a file added and removed, each followed by a reload.
                for round in 0..<30 {
                    switch round % 5 {
                    case 0: try write(original.replacingOccurrences(of: #""Log in""#, with: "\"Log in \(round)\""), to: login)
                    case 1: try write(original.replacingOccurrences(of: #""kind": "title""#, with: #""kind": "huge""#), to: login)
                    case 2:
                        try write(
                            #"{"name": "extra", "components": [{"name": "label_component", "content": {"value": "\#(round)"}}]}"#, to: extra
                        )
                    case 3: try FileManager.default.removeItem(at: extra)
                    default: try write("{ truncated", to: login)
                    }
                    application.watcher?.reload()
                    let status = application.store.status
                    let snapshot = application.store.snapshot
                    snapshots.withLockedValue { $0[status.version] = snapshot }
                    await Task.yield()
                }
                return []
            }
            for reader in 0..<4 {
                group.addTask {
                    var seen: [(Int, TestResponse)] = []
                    for iteration in 0..<300 {
                        let index = (iteration + reader) % requests.count
                        seen.append(
                            (index, try await application.execute(.GET, uri: requests[index].0, headers: requests[index].1)))
                        if iteration % 10 == 0 { await Task.yield() }
                    }
                    return seen
                }
            }
            var all: [(Int, TestResponse)] = []
            for try await part in group { all += part }
            return all
        }

        #expect(responses.count == 1_200)
        let known = snapshots.withLockedValue { $0 }
        var versions: Set<String> = []
        for (index, response) in responses {
            #expect(response.status == .ok, "\(requests[index].0): \(String(buffer: response.body))")
            #expect(json(response) != nil)
            guard let version = response.headers.first(name: "X-Taksi-Screens-Version") else {
                #expect(requests[index].0 == "/screens")
                continue
            }
            versions.insert(version)
            // The same request against the set of that version gives exactly these bytes.
            let snapshot = try #require(known[version], "a response names a version no reload produced")
            let replay = await RouterClient(Responder(store: ScreenStore(snapshot.screenSet), logger: testLogger("replay")))
                .respond(uri: requests[index].0, headers: requests[index].1)
            #expect(replay.body == response.body, "\(requests[index].0) mixes versions")
        }
        #expect(versions.count >= 1)
    }

    @Test("an edit made while the server loaded its screens is loaded when the watcher starts, not missed until the next edit")
    func editDuringStartup() async throws {
        let (application, directory) = try makeApplication()
        let watcher = try #require(application.watcher)
        #expect(watcher.loadedFingerprint != nil)
        let login = directory.appendingPathComponent("login.json")
        let original = try String(contentsOf: login, encoding: .utf8)
        let loaded = application.store.status.version
        // Written after the files were read and before the watcher looks (a ConfigMap swapped as
        // the pod came up): the watcher once took this state as what was served.
        try write(original.replacingOccurrences(of: #""value": "Log in""#, with: #""value": "Sign in""#), to: login)
        let watching = Task { try await watcher.run() }
        defer { watching.cancel() }
        #expect(await eventually { application.store.status.version != loaded }, "the edit was never loaded")
    }

    @Test("the watcher's fingerprint changes when a file is rewritten, added or removed, and ignores hidden files")
    func fingerprint() throws {
        let (_, directory) = try makeApplication()
        let login = directory.appendingPathComponent("login.json")
        let before = ScreenWatcher.fingerprint(of: directory.path)
        #expect(before["login.json"] != nil)
        #expect(before.keys.contains("bikes/stations.yaml"), "subdirectories count")
        #expect(ScreenWatcher.fingerprint(of: directory.path) == before, "nothing changed")

        try write(String(contentsOf: login, encoding: .utf8) + " ", to: login)
        let rewritten = ScreenWatcher.fingerprint(of: directory.path)
        #expect(rewritten["login.json"] != before["login.json"])

        try write("{}", to: directory.appendingPathComponent(".editor-swap.json"))
        #expect(ScreenWatcher.fingerprint(of: directory.path) == rewritten, "hidden files are ignored")

        try write("{}", to: directory.appendingPathComponent("new.json"))
        #expect(ScreenWatcher.fingerprint(of: directory.path).count == rewritten.count + 1)
        try FileManager.default.removeItem(at: login)
        #expect(ScreenWatcher.fingerprint(of: directory.path)["login.json"] == nil)
    }
}
