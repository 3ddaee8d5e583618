import Foundation
import Logging
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// A screen changes while apps hold its skeleton: data and actions are answered for the skeleton
/// the app names (`X-Taksi-Skeleton`), from the set that made it, or `412 skeleton_outdated`;
/// never data the client would drop. Screens of their own, over real sockets where it is HTTP.
@Suite("Skeleton revisions")
struct RevisionTests {
    static let items =
        #"{"name": "collection_component", "identifier": "items", "content": {"component_name": "label_component", "values": {"$each": "feed.items", "as": "item", "template": {"value": {"$bind": "item.t"}}}}}"#

    static let original = """
        {"name": "home", "entry": true,
         "sources": {"q": {"type": "request", "parameters": {"name": {"default": "Ada"}}},
                     "feed": {"type": "fixture", "value": {"items": [{"t": "one"}, {"t": "two"}], "promo": "50% off"}}},
         "components": [
           {"name": "label_component", "identifier": "greeting", "content": {"value": {"$template": "Hello, {q.name}!"}}},
           {"name": "label_component", "identifier": "headline", "content": {"value": "Today"}},
           \(items)
         ],
         "actions": {"ping": {"answers": {"success": {"data": [{"identifier": "greeting", "content": {"value": "pong"}}]}}}}}
        """

    /// The edits a team makes, and whether each changes what the data must match.
    static let edits: [(name: String, from: String, to: String, changesShape: Bool)] = [
        (
            "added", #"{"name": "label_component", "identifier": "headline""#,
            #"{"name": "label_component", "identifier": "promo", "content": {"value": {"$bind": "feed.promo"}}}, {"name": "label_component", "identifier": "headline""#,
            true
        ),
        ("removed", items, #"{"name": "spacer_component", "identifier": "gap", "content": {}}"#, true),
        ("renamed", #""identifier": "greeting""#, #""identifier": "hello""#, true),  // the component and the action's patch
        ("retyped", items, #"{"name": "label_component", "identifier": "items", "content": {"value": {"$bind": "feed.promo"}}}"#, true),
        ("copy only", #""value": "Today""#, #""value": "Tomorrow""#, false),
    ]

    /// An application over a fresh directory holding `home` (or `files`).
    static func makeApplication(
        _ home: String = original, files: [String: String]? = nil, upstreams: [String: String] = [:]
    ) throws -> (Application, URL) {
        let directory = Scratch.path("revisions")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files ?? ["home.json": home] { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        var configuration = ServerConfiguration.forTests()
        configuration.screensDirectory = directory.path
        configuration.watch = false
        configuration.upstreams = upstreams
        return (try buildApplication(configuration: configuration, logger: testLogger("revisions")), directory)
    }

    /// Checks a data payload as the client decodes it against `skeleton`: every entry names one of
    /// its dynamic components, with content that decodes as that component's.
    static func expectDecodes(
        _ data: JSONValue?, against skeleton: JSONValue?, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let decoded = try JSONDecoder().decode(Skeleton.self, from: Data(JSONWriter.bytes(try #require(skeleton))))
        let catalog = ComponentCatalog()
        let entries = try #require(data?["interface_data"]?.arrayValue, sourceLocation: sourceLocation)
        #expect(!entries.isEmpty, sourceLocation: sourceLocation)
        for entry in entries {
            let identifier = entry["identifier"]?.stringValue ?? ""
            let component = try #require(
                decoded.components.first { $0.identifier == identifier }, "\(identifier) is not in the skeleton",
                sourceLocation: sourceLocation)
            #expect(catalog.schema(named: component.name)?.isDynamic == true, sourceLocation: sourceLocation)
            let check = catalog.check(
                dataContent: entry["content"] ?? .null, of: component.name, staticContent: component.content.objectValue ?? [:],
                mode: .definition
            )
            #expect(check.violations.isEmpty, "\(identifier): \(check.violations)", sourceLocation: sourceLocation)
        }
    }

    @Test("after a reload, data and actions for a skeleton cached before it decode against that skeleton", arguments: edits.map(\.name))
    func reloadBetweenSkeletonAndData(edit name: String) async throws {
        let edit = try #require(Self.edits.first { $0.name == name })
        let (application, directory) = try Self.makeApplication()
        try await application.test(.live) { client in
            let skeleton = try await client.execute(uri: "/screens/home")
            let held = try #require(skeleton.header("X-Taksi-Skeleton"))
            #expect(held.count == 16)

            let edited = Self.original.replacingOccurrences(of: edit.from, with: edit.to)
            #expect(edited != Self.original)
            try Data(edited.utf8).write(to: directory.appendingPathComponent("home.json"), options: .atomic)
            #expect(application.watcher?.reload() == true)
            let current = try #require(try await client.execute(uri: "/screens/home").header("X-Taksi-Skeleton"))
            #expect((current != held) == edit.changesShape, "\(name): the revision \(edit.changesShape ? "changes" : "stays")")

            // The app's data request names its skeleton: answered for it, whatever changed.
            let data = try await client.execute(uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", held)])
            #expect(data.status == .ok)
            #expect(data.header("X-Taksi-Skeleton") == held)
            try Self.expectDecodes(data.json, against: skeleton.json)
            let answer = try await client.execute(
                .POST, uri: "/screens/home/actions/ping", headers: [("X-Taksi-Skeleton", held)], body: "")
            #expect(answer.status == .ok)
            try Self.expectDecodes(answer.json, against: skeleton.json)

            // Without the header (an app from before it), the current set answers, as it always did.
            let fresh = try await client.execute(uri: "/screens/home/data")
            #expect(fresh.header("X-Taksi-Skeleton") == current)
            if name == "added" { #expect(fresh.json?["interface_data"]?.arrayValue?.contains { $0["identifier"] == "promo" } == true) }
        }
    }

    @Test(
        "a submit for a skeleton cached before a reload runs the current definition: a removed action is gone, a tightened input is checked"
    )
    func actionsFollowTheCurrentSet() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/notes", .json(#"{"id": 1}"#))
        let note = """
            name: note
            entry: true
            components:
              - {name: label_component, identifier: status, content: {value: " "}}
              - {name: label_component, identifier: headline, content: {value: Notes}}
            actions:
              send:
                inputs: {text: {type: string, required: true, max_length: 10, message: Too long.}}
                call: {upstream: api, path: /notes, body: {text: {$bind: inputs.text}}}
                answers:
                  success: {data: [{identifier: status, content: {value: Sent}}]}
                  invalid: {data: [{identifier: status, content: {value: {$bind: errors.text, default: Check it}}}]}
            """
        let (application, directory) = try Self.makeApplication(files: ["note.yaml": note], upstreams: ["api": upstream.baseURL])
        let file = directory.appendingPathComponent("note.yaml")
        try await withRunningServer(application) { port in
            let skeleton = try await LiveClient(port: port).execute(uri: "/screens/note")
            let held = try #require(skeleton.header("X-Taksi-Skeleton"))
            // Off the cooperative pool: the answer waits on the upstream call, which needs it.
            func send(_ text: String) async throws -> RawResponse {
                let connection = try RawConnection(port: port)
                let body = "text=\(text)"
                connection.send(
                    "POST /screens/note/actions/send HTTP/1.1\r\nHost: a\r\nX-Taksi-Skeleton: \(held)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                )
                return try #require(await connection.receive(1).first)
            }
            #expect(try await send("0123456789").status == 200)
            #expect(upstream.count("/notes") == 1)

            // A reload that changes the screen's shape (the held skeleton is now an earlier set's)
            // and tightens the input.
            let reshaped = note.replacingOccurrences(of: "max_length: 10", with: "max_length: 3").replacingOccurrences(
                of: "  - {name: label_component, identifier: headline",
                with:
                    "  - {name: label_component, identifier: hint, content: {value: {$template: \"{q.x}\"}}}\n  - {name: label_component, identifier: headline"
            ).replacingOccurrences(of: "components:", with: "sources: {q: {type: request, parameters: {x: {default: Write}}}}\ncomponents:")
            try Data(reshaped.utf8).write(to: file, options: .atomic)
            #expect(application.watcher?.reload() == true)
            #expect(
                try await LiveClient(port: port).execute(uri: "/screens/note").header("X-Taksi-Skeleton") != held,
                "the held skeleton is an earlier set's")
            let tightened = try await send("0123456789")
            #expect(tightened.status == 422, "the current check: \(tightened.body)")
            #expect(tightened.json?["interface_data"]?.arrayValue?.first?["content"]?["value"] == "Too long.")
            try Self.expectDecodes(tightened.json, against: skeleton.json)
            #expect(try await send("abc").status == 200)
            #expect(upstream.count("/notes") == 2)

            // The action removed: gone for the held skeleton too, and its upstream not called.
            try Data(reshaped.components(separatedBy: "actions:")[0].utf8).write(to: file, options: .atomic)
            #expect(application.watcher?.reload() == true)
            let removed = try await send("abc")
            #expect(removed.status == 404)
            #expect(removed.json?["error"]?["code"] == "action_not_found")
            #expect(removed.json?["error"]?["message"]?.stringValue?.contains("a reload removed it") == true, "\(removed.body)")
            #expect(upstream.count("/notes") == 2)
        }
        try await upstream.stop()
    }

    @Test("a kept set is counted as what it costs: the count follows the server's resident memory within 20% over six reloads")
    func keptSetsCountWhatTheyCost() async throws {
        let server = try await KeptSetsServer(name: "kept")
        defer { server.stop() }
        // The first reload also sets up what every later one reuses (the watcher's and the
        // allocator's own): counted from there.
        try await server.reload(1)
        let (keptBefore, residentBefore) = (try await server.keptBytes(), try server.memory())
        #expect(keptBefore > 0)
        for labels in 2...7 { try await server.reload(labels) }
        let kept = try await server.keptBytes() - keptBefore
        let resident = try server.memory() - residentBefore
        #expect(kept > 0 && resident > 0)
        #expect(abs(Double(kept - resident)) <= 0.2 * Double(resident), "counted \(kept) bytes, resident memory grew \(resident)")
    }

    @Test(
        "the sets a replica stops keeping give their memory back: once they expire, its resident set falls by most of what the reloads added"
    )
    func droppedSetsGiveMemoryBack() async throws {
        // Skeletons cached for 10 s: each set is kept that long after its reload, so on a busy
        // machine too several are kept at once before they all expire.
        let server = try await KeptSetsServer(
            name: "dropped", environment: ["TAKSI_SKELETON_MAX_AGE": "10", "TAKSI_SKELETON_STALE_WHILE_REVALIDATE": "0"])
        defer { server.stop() }
        try await server.reload(1)
        let before = try server.memory()
        for labels in 2...5 { try await server.reload(labels) }
        let peak = try server.memory("VmHWM:")
        #expect(peak > before)
        // Each look at /readyz drops what expired; the sets are freed on a background task. Without
        // giving pages back (glibc keeps what is freed inside its arenas) the resident set stayed
        // at the peak, 99% of what the reloads added; now about a third of it stays.
        let bound = before + (peak - before) * 2 / 3
        var (kept, resident) = (Int.max, Int.max)
        while kept > 0 || resident > bound, server.process.isRunning {  // the server's hang guard ends it
            kept = Int(try #require(await server.get("/readyz").json?["earlier_sets"]?.numberValue))
            resident = try server.memory()
            await Task.yield()
        }
        #expect(kept == 0)
        #expect(
            resident <= bound,
            "resident memory \(before >> 20) MiB after the first reload, \(peak >> 20) MiB at the peak, \(resident >> 20) MiB once nothing is kept"
        )
    }

    @Test("a rolling deploy: a skeleton from the old replica, data from the new one is 412, and after a refetch it matches")
    func rollingDeploy() async throws {
        let (old, _) = try Self.makeApplication()
        let added = try #require(Self.edits.first)
        let (new, _) = try Self.makeApplication(Self.original.replacingOccurrences(of: added.from, with: added.to))
        try await withRunningServer(old) { oldPort in
            try await withRunningServer(new) { newPort in
                let skeleton = try await LiveClient(port: oldPort).execute(uri: "/screens/home")
                let held = try #require(skeleton.header("X-Taksi-Skeleton"))
                let refused = try await LiveClient(port: newPort).execute(
                    uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", held)])
                #expect(refused.status == .preconditionFailed)
                #expect(refused.json?["error"]?["code"] == "skeleton_outdated")
                #expect(refused.header("Cache-Control") == "no-store")
                #expect(refused.header("Vary")?.contains("X-Taksi-Skeleton") == true)
                #expect(
                    try await LiveClient(port: newPort).execute(
                        .POST, uri: "/screens/home/actions/ping", headers: [("X-Taksi-Skeleton", held)], body: ""
                    ).status == .preconditionFailed)

                // What docs/client.md does on 412: the skeleton again, past every cache, then its data.
                let refetched = try await LiveClient(port: newPort).execute(
                    uri: "/screens/home", headers: [("Cache-Control", "no-cache")])
                let current = try #require(refetched.header("X-Taksi-Skeleton"))
                let data = try await LiveClient(port: newPort).execute(
                    uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", current)])
                #expect(data.status == .ok)
                try Self.expectDecodes(data.json, against: refetched.json)
            }
        }
    }

    @Test("variant inputs on one request only never split variants: the data follows the skeleton it names")
    func variantInputsOnOneRequest() async throws {
        let classic =
            #"{"name": "home", "entry": true, "components": [{"name": "label_component", "identifier": "greeting", "content": {"value": {"$template": "Hi {q.name}"}}}], "sources": {"q": {"type": "request", "parameters": {"name": {"default": "Ada"}}}}}"#
        let modern =
            #"{"name": "home", "version": ">= 2.0", "components": [{"name": "label_component", "identifier": "greeting", "content": {"value": "Hello"}}, {"name": "label_component", "identifier": "categories", "content": {"value": {"$template": "{q.name}"}}}], "sources": {"q": {"type": "request", "parameters": {"name": {"default": "Ada"}}}}}"#
        let (application, _) = try Self.makeApplication(files: ["home.json": classic, "home-2.json": modern])
        try await application.test(.live) { client in
            // The docs' old client: no version on the skeleton, ?version=2.1 on the data.
            let skeleton = try await client.execute(uri: "/screens/home")
            let held = try #require(skeleton.header("X-Taksi-Skeleton"))
            let data = try await client.execute(
                uri: "/screens/home/data?name=Ada&version=2.1", headers: [("X-Taksi-Skeleton", held)])
            #expect(data.status == .ok)
            #expect(data.header("X-Taksi-Variant") == skeleton.header("X-Taksi-Variant"))
            try Self.expectDecodes(data.json, against: skeleton.json)
        }
    }

    @Test("earlier sets are kept for max-age plus stale-while-revalidate, at most so many and so many bytes; then 412")
    func retention() async throws {
        let clock = ManualClock()
        let texts = [Self.original] + Self.edits.filter(\.changesShape).map { Self.original.replacingOccurrences(of: $0.from, with: $0.to) }
        var sets: [ScreenSet] = []
        for text in texts { sets.append(try #require(ScreenSetLoader.load(files: ["home.json": Array(text.utf8)]).screenSet)) }
        let options = ServedScreenSet.Options(skeletonMaxAge: 60, skeletonStaleWhileRevalidate: 300)
        func store(_ retention: ScreenStore.Retention? = nil) -> (ScreenStore, Responder) {
            let store = ScreenStore(sets[0], options: options, retention: retention, now: { clock.now })
            return (store, Responder(store: store, logger: testLogger("retention")))
        }
        // Bare responders over a store of their own (no application: nothing in the background).
        func data(_ responder: Responder, _ revision: String) async -> TestResponse {
            await RouterClient(responder).respond(
                .GET, uri: "/screens/home/data", headers: HTTPHeaders([("X-Taksi-Skeleton", revision)]))
        }
        func revision(_ responder: Responder) async -> String {
            await RouterClient(responder).respond(.GET, uri: "/screens/home").headers.first(name: "X-Taksi-Skeleton") ?? ""
        }

        let (timed, timedResponder) = store()
        #expect(timed.retention.duration == .seconds(360), "derived from the skeletons' caching, not a constant")
        let first = await revision(timedResponder)
        timed.replace(with: sets[1])
        clock.advance(by: .seconds(359))
        #expect(await data(timedResponder, first).status == .ok)
        clock.advance(by: .seconds(2))
        #expect(timed.earlierSets.isEmpty)
        let late = await data(timedResponder, first)
        #expect(late.status == .preconditionFailed)
        #expect(late.headers["Cache-Control"] == ["no-store"])

        let (counted, countedResponder) = store(ScreenStore.Retention(for: .seconds(360), maxSets: 2))
        let oldest = await revision(countedResponder)
        for set in sets.dropFirst() { counted.replace(with: set) }
        #expect(counted.earlierSets.count == 2)
        #expect(await data(countedResponder, oldest).status == .preconditionFailed, "the oldest is dropped past the count")

        let (small, smallResponder) = store(ScreenStore.Retention(for: .seconds(360), maxBytes: 1))
        let dropped = await revision(smallResponder)
        small.replace(with: sets[1])
        #expect(small.earlierSets.isEmpty, "over the byte bound")
        #expect(await data(smallResponder, dropped).status == .preconditionFailed)

        // A set whose every revision a newer one has is never answered from: it is not kept.
        let copyEdit = try #require(Self.edits.first { !$0.changesShape })
        let copied = try #require(
            ScreenSetLoader.load(files: ["home.json": Array(Self.original.replacingOccurrences(of: copyEdit.from, with: copyEdit.to).utf8)])
                .screenSet)
        let (edited, editedResponder) = store()
        let held = await revision(editedResponder)
        edited.replace(with: copied)
        #expect(edited.earlierSets.isEmpty, "a copy edit changes no revision")
        #expect(await data(editedResponder, held).status == .ok)
        edited.replace(with: sets[1])
        #expect(edited.earlierSets.count == 1)
        edited.replace(with: sets[0])
        #expect(edited.earlierSets.count == 1, "reverted: the set before the edit is covered by the current one")
        #expect(await data(editedResponder, held).status == .ok)
    }

    @Test("a reload that changes a variant's shape says what appeared, disappeared or changed type")
    func shapeChanges() throws {
        func served(_ text: String) throws -> ServedScreenSet {
            ServedScreenSet(try #require(ScreenSetLoader.load(files: ["home.json": Array(text.utf8)]).screenSet))
        }
        let old = try served(Self.original)
        var found: [String: [String]] = [:]
        for edit in Self.edits {
            let changes = ServedScreenSet.shapeChanges(
                from: old, to: try served(Self.original.replacingOccurrences(of: edit.from, with: edit.to)))
            #expect(changes.map(\.variant) == (edit.changesShape ? ["home|*|default"] : []), "\(edit.name)")
            found[edit.name] = changes.first?.changes ?? []
        }
        #expect(found["added"] == ["promo appeared (label_component)"])
        #expect(found["removed"] == ["items disappeared (was collection_component of label_component)"])
        #expect(found["renamed"] == ["hello appeared (label_component)", "greeting disappeared (was label_component)"])
        #expect(found["retyped"] == ["items changed type from collection_component of label_component to label_component"])
        #expect(found["copy only"] == [])
    }

    @Test("a data request in flight across a reload that changes the shape is answered for the skeleton it named")
    func inFlightAcrossReload() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/feed", .held(#"{"title": "Fresh"}"#))
        let screen =
            #"{"name": "feed", "entry": true, "sources": {"api": {"type": "http", "upstream": "api", "path": "/feed", "timeout": 60}}, "components": [{"name": "label_component", "identifier": "title", "content": {"value": {"$bind": "api.title"}}}]}"#
        // The source's timeout is a hang guard: the upstream is held while the set reloads, which on
        // a busy machine can take longer than the default timeout of a source.
        let (application, directory) = try Self.makeApplication(files: ["feed.json": screen], upstreams: ["api": upstream.baseURL])
        try await withRunningServer(application) { port in
            let skeleton = try await LiveClient(port: port).execute(uri: "/screens/feed")
            let held = try #require(skeleton.header("X-Taksi-Skeleton"))
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/feed/data HTTP/1.1\r\nHost: a\r\nX-Taksi-Skeleton: \(held)\r\n\r\n")
            await upstream.waitForRequests(1)

            // The screen's only component is renamed while the request waits on its upstream.
            try Data(screen.replacingOccurrences(of: #""identifier": "title""#, with: #""identifier": "heading""#).utf8)
                .write(to: directory.appendingPathComponent("feed.json"), options: .atomic)
            #expect(application.watcher?.reload() == true)
            #expect(try await LiveClient(port: port).execute(uri: "/screens/feed").header("X-Taksi-Skeleton") != held)
            upstream.release()

            let data = try #require(await connection.receive(1).first)
            #expect(data.status == 200)
            #expect(data.header("X-Taksi-Skeleton") == held)
            try Self.expectDecodes(data.json, against: skeleton.json)
        }
        try await upstream.stop()
    }
}

/// A `taksi-server` process serving 300 screens that place one fragment, so one atomic write
/// reshapes them all (each reload a new skeleton for every screen, so the set it replaces is
/// kept), with live reload every 0.1 s.
private final class KeptSetsServer {
    let directory: URL
    let process: Process
    let logs: LineReader
    let port: Int
    private let guardTask: DispatchWorkItem

    init(name: String, environment: [String: String] = [:]) async throws {
        directory = Scratch.path(name)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("fragments"), withIntermediateDirectories: true)
        for number in 0..<300 {
            let screen = """
                {"name": "screen-\(number)", "entry": true,
                 "sources": {"feed": {"type": "fixture", "value": {"headline": "Headline \(number)", "items": ["a", "b", "c", "d", "e"]}}},
                 "components": [
                   {"name": "label_component", "identifier": "title", "content": {"value": "Screen \(number)", "kind": "title"}},
                   {"name": "collection_component", "identifier": "items", "content": {"component_name": "label_component",
                    "values": {"$each": "feed.items", "template": {"value": {"$bind": "item"}}}}},
                   {"$fragment": "extra", "with": {"feed": "feed"}}]}
                """
            try Data(screen.utf8).write(to: directory.appendingPathComponent("screen-\(number).json"))
        }
        try Self.reshape(directory, 0)
        (process, logs, port) = try await startServerProcess(
            ["serve", "--screens", directory.path, "--port", "0", "--log-format", "json", "--no-preview", "--watch-interval", "0.1"],
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }.merging(environment) { $1 })
        // A hang guard, far past what the reloads take: the process is killed, its log ends, and
        // the waits return.
        let process = self.process
        guardTask = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300, execute: guardTask)
    }

    func stop() {
        guardTask.cancel()
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The fragment every screen places, with `labels` + 1 labels: a new shape for each count.
    private static func reshape(_ directory: URL, _ labels: Int) throws {
        let components = (0...labels).map {
            "  - {name: label_component, identifier: extra\($0), content: {value: {$bind: feed.headline}}}"
        }
        try Data(("parameters: {feed: {type: data}}\ncomponents:\n" + components.joined(separator: "\n") + "\n").utf8)
            .write(to: directory.appendingPathComponent("fragments/extra.yaml"), options: .atomic)
    }

    /// `field` of the process's `/proc` status (`VmRSS:` its resident set, `VmHWM:` its peak), in bytes.
    func memory(_ field: String = "VmRSS:") throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field) })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) * 1024
    }

    func get(_ path: String) async throws -> RawResponse {
        let connection = try RawConnection(port: port)
        connection.send("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
        return try #require(await connection.receive(1).first)
    }

    /// `taksi_screen_sets_kept_bytes`.
    func keptBytes() async throws -> Int {
        let metrics = try await get("/metrics").body
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("taksi_screen_sets_kept_bytes ") })
        let value: Double = try #require(Double(line.split(separator: " ").last ?? ""))
        return Int(value)
    }

    /// Reshapes the screens and waits, off the cooperative pool, for the server to say it reloaded.
    func reload(_ labels: Int) async throws {
        try Self.reshape(directory, labels)
        let reloaded = await withCheckedContinuation { continuation in
            let reader = UncheckedBox(logs)
            Thread {
                while let line = reader.value.next() {
                    if line.contains("\"screens reloaded\"") { return continuation.resume(returning: true) }
                }
                continuation.resume(returning: false)
            }.start()
        }
        try #require(reloaded, "the server ended before it reloaded")
    }
}
