import Foundation
import TaksiTestSupport
import Testing

@testable import TaksiServerClient

/// The app library keeps what it showed (``ScreenKeeping``): against the real server over real
/// sockets, a load that cannot reach it shows the kept pair, byte for byte and marked stale; a kept
/// skeleton is revalidated with a 304; a changed screen replaces the pair whole; one user's screens
/// are never another's; and the store keeps to its bound.
@Suite("Client library: kept screens")
struct KeptScreensTests {
    static func keeping(_ label: String, maxBytes: Int = 4 << 20) -> ScreenKeeping {
        ScreenKeeping(directory: Scratch.path(label), maxBytes: maxBytes)
    }

    /// Returns once nothing answers at `url` any more (a stopped server has exited).
    static func waitUntilGone(_ url: URL) async {
        let guardTime = ContinuousClock.now + .seconds(60)  // a hang guard, not an assertion
        while (try? await httpGet(url.appendingPathComponent("healthz"))) != nil, ContinuousClock.now < guardTime { await Task.yield() }
    }

    @Test(
        "a load that cannot reach the server shows the kept screen, marked stale, byte for byte; another user's store has none; sign-out forgets"
    )
    func keptWhenUnreachable() async throws {
        let replica = try await Replica()
        let keeping = Self.keeping("kept")
        let ada = client(replica.url, userID: "ada", keeping: keeping)
        let bob = client(replica.url, userID: "bob", keeping: keeping)
        let fresh = try await ada.load("repositories?q=swift").get()
        #expect(!fresh.isStale && fresh.keptAt == nil)
        _ = try await bob.load("landing").get()
        replica.stop()
        await Self.waitUntilGone(replica.url)

        let kept = try await ada.load("repositories?q=swift").get()
        #expect(kept.isStale)
        #expect((kept.age ?? -1) >= 0)
        let (keptData, freshData) = (try kept.data.get(), try fresh.data.get())
        #expect(kept.skeleton == fresh.skeleton)
        #expect(keptData == freshData)
        #expect(kept.revision == fresh.revision && kept.variant == fresh.variant)
        // Another query is another screen: nothing kept for it.
        guard case .failure(.transport) = await ada.load("repositories?q=nio") else {
            Issue.record("a screen never loaded has no kept copy")
            return
        }
        // Bob's screens are not Ada's, nor the other way round.
        guard case .failure(.transport) = await bob.load("repositories?q=swift") else {
            Issue.record("another user's kept screen was shown")
            return
        }
        #expect(try await bob.load("landing").get().isStale)
        // Sign-out: Ada's are gone, Bob's stay.
        ada.forgetKeptScreens()
        guard case .failure(.transport) = await ada.load("repositories?q=swift") else {
            Issue.record("a forgotten screen was shown")
            return
        }
        #expect(try await bob.load("landing").get().isStale)
    }

    @Test("a kept skeleton is revalidated (304, no body), and a changed screen replaces the kept pair whole, never mixed")
    func revalidatedAndReplaced() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url, keeping: Self.keeping("revalidated"))
        let first = try await server.load("newsletter").get()
        let second = try await server.load("newsletter").get()
        #expect(second.skeleton == first.skeleton && !second.isStale)
        let (metrics, _) = try await httpGet(replica.url.appendingPathComponent("metrics"))
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains(#"route="skeleton",status="304""#), "the second skeleton was revalidated: \(text.prefix(400))")

        try await replica.edit("newsletter.yaml", ClientFleetTests.retitled)
        let changed = try await server.load("newsletter").get()
        #expect(changed.revision != first.revision)
        #expect(String(decoding: changed.skeleton, as: UTF8.self).contains("Our letter"))
        // What is kept now is the new pair: its skeleton with the data made for it.
        let kept = try #require(server.kept?.pair(for: server.keptKey(ScreenPath("newsletter")), user: nil))
        let changedData = try changed.data.get()
        #expect(kept.revision == changed.revision && kept.skeleton == changed.skeleton && kept.data == changedData)
    }

    @Test(
        "a 5xx, data that does not come or the app's time limit passed shows the kept screen; a 404 is the server's word and is not hidden")
    func serverErrors() async throws {
        let upstream = try await TestUpstream()
        let skeleton =
            #"{"components": [{"name": "label_component", "identifier": "t", "requires_data": true, "content": {"value": " "}}]}"#
        let data = #"{"interface_data": [{"identifier": "t", "content": {"value": "Hello"}}]}"#
        upstream.on("/screens/hello", .json(skeleton))
        upstream.on("/screens/hello/data", .json(data))
        let keeping = Self.keeping("errors")
        let server = client(URL(string: upstream.baseURL)!, keeping: keeping)
        let fresh = try await server.load("hello").get()
        #expect(!fresh.isStale)
        for status in [500, 503] {
            upstream.on("/screens/hello", .status(status))
            let kept = try await server.load("hello").get()
            #expect(kept.isStale && kept.skeleton == fresh.skeleton, "\(status)")
        }
        // The skeleton answers, its data does not: the kept pair, not a skeleton with no data.
        upstream.on("/screens/hello", .json(skeleton))
        upstream.on("/screens/hello/data", .status(502))
        #expect(try await server.load("hello").get().isStale)
        // Past the time limit the app sets: the kept screen, not a wait (the same folder, another
        // ScreenServer with a limit).
        var limited = keeping
        limited.timeout = 0.3
        let impatient = client(URL(string: upstream.baseURL)!, keeping: limited)
        upstream.on("/screens/hello", .json(skeleton, delay: .seconds(30)))
        #expect(try await impatient.load("hello").get().isStale)
        upstream.on("/screens/hello", .status(404))
        guard case .failure(.status(404, _, _)) = await server.load("hello") else {
            Issue.record("a 404 was hidden by the kept screen")
            return
        }
        try await upstream.stop()
    }

    @Test(
        "a first launch with no network shows the skeleton shipped with the app (taksi-server bundle), placeholders where data goes, in the person's language"
    )
    func firstLaunch() async throws {
        let file = Scratch.path("bundle").appendingPathExtension("json")
        let made = try await runProcess(
            try #require(builtExecutable("taksi-server")),
            ["bundle", "--app-version", "2.1", "--locale", "en", "--locale", "pt", "--output", file.path], mergingError: true)
        #expect(made.status == 0, "\(made.output)")
        // A server that is gone: the phone in a tunnel on its first launch.
        let gone = try await TestUpstream()
        let address = URL(string: gone.baseURL)!
        try await gone.stop()
        var keeping = Self.keeping("first-launch")
        keeping.bundle = file
        let server = client(address, version: "2.1.0", languages: ["pt-BR", "en"], keeping: keeping)
        let home = try await server.load("home?name=Ada").get()
        #expect(home.isStale && home.language == "pt")
        guard case .failure(.transport) = home.data else {
            Issue.record("a shipped skeleton has no data: \(home.data)")
            return
        }
        let shipped = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let entry = try #require(
            (shipped["screens"] as? [[String: Any]])?.first { $0["path"] as? String == "home" && $0["language"] as? String == "pt" })
        let components = try #require(
            (try JSONSerialization.jsonObject(with: home.skeleton) as? [String: Any])?["components"] as? [[String: Any]])
        #expect(components.count == ((entry["skeleton"] as? [String: Any])?["components"] as? [Any])?.count)
        #expect(components.contains { $0["requires_data"] as? Bool == true }, "placeholders where data goes")
        #expect(home.revision == entry["revision"] as? String)
        // Another language the bundle has; a screen it lacks (a pattern's) is the error it was.
        let english = client(address, version: "2.1.0", languages: ["en"], keeping: keeping)
        #expect(try await english.load("home").get().language == "en")
        guard case .failure(.transport) = await server.load("restaurants/la-table") else {
            Issue.record("a screen the bundle lacks was shown")
            return
        }
    }

    @Test("the store keeps to its bound under 10,000 loads, the least recently used out first")
    func bounded() throws {
        let keeping = Self.keeping("bounded", maxBytes: 64 << 10)
        let store = KeptScreens(keeping)
        let skeleton = Data(String(repeating: "s", count: 900).utf8)
        for index in 0..<10_000 {
            let number = index % 2_000
            store.keep(
                KeptScreens.Pair(
                    key: "screen-\(number)", skeleton: skeleton, revision: "r", variant: nil, language: nil, etag: nil,
                    data: Data("{\"interface_data\": [], \"n\": \(index)}".utf8), keptAt: Date()),
                user: number % 2 == 0 ? "ada" : nil)
            // One screen is shown again and again: used most recently, it stays.
            if index % 10 == 0 { _ = store.pair(for: "screen-0", user: "ada") }
            if index % 1_000 == 999 { #expect(store.bytes <= keeping.maxBytes) }
        }
        #expect(store.bytes <= keeping.maxBytes)
        let files = (FileManager.default.enumerator(at: keeping.directory, includingPropertiesForKeys: [.fileSizeKey])?.allObjects ?? [])
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }
            .compactMap { try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize }
        #expect(files.reduce(0, +) <= keeping.maxBytes, "on disk too")
        #expect(files.count > 10)
        // The latest pairs and the one shown again are there; the least recently used went.
        #expect(store.pair(for: "screen-1999", user: nil) != nil)
        #expect(store.pair(for: "screen-0", user: "ada") != nil)
        #expect(store.pair(for: "screen-1", user: nil) == nil && store.pair(for: "screen-2", user: "ada") == nil)
        // Kept under one user's folder, a pair is not another's.
        #expect(store.pair(for: "screen-1999", user: "ada") == nil)
        // A new store on the same folder (the next launch) reads what is there.
        #expect(KeptScreens(keeping).bytes == store.bytes)
    }
}
