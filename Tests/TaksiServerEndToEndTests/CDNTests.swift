import Foundation
import MetricsTestKit
import NIOConcurrencyHelpers
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// taksi-server behind a real Varnish with vmod_xkey (Debian's `varnish` and `varnish-modules`),
/// configured with the VCL the docs ship (`deploy/varnish/taksi.vcl`): skeletons kept for an hour
/// (`s-maxage`), tagged, and purged by tag when a change is served.
@Suite("A CDN in front")
struct CDNTests {
    /// The shipped VCL, its backend's port to be filled in.
    static func vcl() throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent("deploy/varnish/taksi.vcl"), encoding: .utf8)
            .replacingOccurrences(of: ".port = \"8080\";", with: ".port = \"BACKEND_PORT\";")
    }

    /// Ten screens; the first four place the fragment `banner`, whose text is `banner`.
    static func screens(banner: String) -> [String: [UInt8]] {
        var files = [
            "fragments/banner.yaml": Array(
                "description: A banner.\ncomponents:\n  - {name: label_component, identifier: banner, content: {value: \(banner)}}\n".utf8)
        ]
        for index in 1...10 {
            let fragment = index <= 4 ? "  - $fragment: banner\n" : ""
            files["s\(index).yaml"] = Array(
                "name: s\(index)\nentry: true\ncomponents:\n\(fragment)  - {name: label_component, identifier: title, content: {value: Screen \(index)}}\n"
                    .utf8)
        }
        return files
    }

    /// A GET through Varnish: the body and whether Varnish answered it from its cache.
    static func get(_ path: String, port: Int) async throws -> (body: String, cache: String?, status: Int) {
        let (body, response) = try await httpGet(try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
        return (String(decoding: body, as: UTF8.self), response.value(forHTTPHeaderField: "X-Cache"), response.statusCode)
    }

    @Test("behind Varnish with skeletons kept for an hour, a fragment's edit purges exactly the screens that place it")
    func varnishPurgesByTag() async throws {
        guard VarnishServer.isAvailable else {
            print("skipped: Varnish is not installed (apt-get install varnish varnish-modules)")
            return
        }
        let vcl = try Self.vcl()
        let varnish = try VarnishServer(vcl: vcl)
        defer { varnish.stop() }
        var configuration = ServerConfiguration.forTests()
        configuration.cdn = CDNSettings(skeletonSharedMaxAge: 3600, targets: [.varnish([varnish.url])])
        let first = try #require(ScreenSetLoader.load(files: Self.screens(banner: "Sale")).screenSet)
        let application = buildApplication(configuration: configuration, screenSet: first, logger: testLogger("test"))
        try await withRunningServer(application) { port in
            try varnish.use(vcl, backendPort: port)
            let names = (1...10).map { "s\($0)" }
            for name in names { #expect(try await Self.get("/screens/\(name)", port: varnish.port).cache == "miss") }
            var hitsBefore = 0
            for name in names where try await Self.get("/screens/\(name)", port: varnish.port).cache == "hit" { hitsBefore += 1 }
            #expect(hitsBefore == 10)

            // A release: the banner's text changes. Once it is served, the purge has been sent.
            let second = try #require(ScreenSetLoader.load(files: Self.screens(banner: "Summer sale")).screenSet)
            application.store.replace(with: second)
            await application.purger?.idle()
            for name in names {
                let answer = try await Self.get("/screens/\(name)", port: varnish.port)
                #expect(answer.status == 200)
                if ["s1", "s2", "s3", "s4"].contains(name) {
                    #expect(answer.cache == "miss", "\(name) places the banner: purged")
                    #expect(answer.body.contains("Summer sale"), "\(name): \(answer.body)")
                } else {
                    #expect(answer.cache == "hit", "\(name) does not place it: still cached")
                }
            }
            #expect(application.purger?.failing.isEmpty == true)
        }
    }

    /// An application over ``screens(banner:)`` ("Sale") purging the Varnish node `node` with no
    /// pauses between attempts (and `resend` between the tags' later tries), and its purger.
    static func purging(_ node: TestUpstream, resend: Duration? = nil) throws -> (Application, CDNPurger) {
        var configuration = ServerConfiguration.forTests()
        configuration.cdn = CDNSettings(targets: [.varnish([URL(string: node.baseURL)!])])
        configuration.cdn?.backoff = [.zero, .zero]
        if let resend { configuration.cdn?.resend = resend }
        let first = try #require(ScreenSetLoader.load(files: Self.screens(banner: "Sale")).screenSet)
        let application = buildApplication(configuration: configuration, screenSet: first, logger: testLogger("test"))
        return (application, try #require(application.purger))
    }

    @Test("a Varnish node that refuses the purge is retried, then named in /readyz until a purge succeeds")
    func refusedPurgeIsVisible() async throws {
        let node = try await TestUpstream()
        node.on("/", .status(403))
        let (application, purger) = try Self.purging(node)
        application.store.replace(with: try #require(ScreenSetLoader.load(files: Self.screens(banner: "Summer sale")).screenSet))
        await purger.purges.runUntilIdle()
        #expect(node.requests.count == 3, "tried, then retried after each of the two pauses")
        let request = try #require(node.requests.first)
        #expect(request.method == "PURGE")
        let tags = request.headers.first { $0.0.lowercased() == "xkey-purge" }?.1
        #expect(tags == "taksi:screen:s1 taksi:screen:s2 taksi:screen:s3 taksi:screen:s4")
        let ready = try await application.execute(uri: "/readyz")
        let failing = ready.json?["cdn"]?["failing"]?.arrayValue ?? []
        #expect(failing.count == 1)
        #expect(failing.first?["error"]?.stringValue?.hasPrefix("403") == true, "\(ready.text)")
        try await node.stop()
    }

    /// Ten screens with `s5`'s title as given (`Screen 5` in ``screens(banner:)``).
    static func screens(banner: String, fifth: String) -> [String: [UInt8]] {
        var files = screens(banner: banner)
        files["s5.yaml"] = Array(String(decoding: files["s5.yaml"]!, as: UTF8.self).replacingOccurrences(of: "Screen 5", with: fifth).utf8)
        return files
    }

    @Test(
        "tags whose purge failed go with the next purge, and /readyz names the target until they are purged, not until any purge succeeds")
    func failedTagsGoWithTheNextPurge() async throws {
        let node = try await TestUpstream()
        node.on("/", .first(3, .status(503), then: .status(200)))
        let (application, purger) = try Self.purging(node)
        func failing() async throws -> [JSONValue] {
            try await application.execute(uri: "/readyz").json?["cdn"]?["failing"]?.arrayValue ?? []
        }
        // The banner's edit: s1 to s4, refused three times.
        application.store.replace(with: try #require(ScreenSetLoader.load(files: Self.screens(banner: "Summer sale")).screenSet))
        await purger.purges.runUntilIdle()
        #expect(node.requests.count == 3)
        #expect(try await failing().count == 1)
        // An unrelated edit (s5 only): its purge carries s1 to s4 too, and only then is the target well.
        application.store.replace(
            with: try #require(ScreenSetLoader.load(files: Self.screens(banner: "Summer sale", fifth: "Fifth")).screenSet))
        await purger.purges.runUntilIdle()
        let tags = node.requests.last.flatMap { Self.header($0, "xkey-purge") }
        #expect(tags == "taksi:screen:s1 taksi:screen:s2 taksi:screen:s3 taksi:screen:s4 taksi:screen:s5")
        #expect(try await failing().isEmpty)
        try await node.stop()
    }

    @Test("tags whose purge failed are sent again on a timer, with no edit after them, until the CDN takes them")
    func failedTagsResent() async throws {
        let node = try await TestUpstream()
        node.on("/", .first(3, .status(503), then: .status(200)))
        let (application, purger) = try Self.purging(node, resend: .milliseconds(20))
        application.store.replace(with: try #require(ScreenSetLoader.load(files: Self.screens(banner: "Summer sale")).screenSet))
        await purger.purges.runUntilIdle()
        #expect(node.requests.count == 3)
        let resending = Task { try await purger.run() }
        defer { resending.cancel() }
        await node.waitForRequests(4)
        await purger.idle()
        #expect(
            node.requests.last.flatMap { Self.header($0, "xkey-purge") }
                == "taksi:screen:s1 taksi:screen:s2 taksi:screen:s3 taksi:screen:s4")
        #expect(purger.failing.isEmpty)
        try await node.stop()
    }

    @Test("a purge pending at SIGTERM (waiting to try again) is sent before the process exits")
    func purgeDrainedAtShutdown() async throws {
        let node = try await TestUpstream()
        // Refused once: the purge then waits a second (the backoff) before it tries again.
        node.on("/", .first(1, .status(503), then: .status(200)))
        let directory = Scratch.path("cdn-drain")
        let screens = directory.appendingPathComponent("Screens")
        try FileManager.default.createDirectory(at: screens, withIntermediateDirectories: true)
        for (path, bytes) in Self.screens(banner: "Sale") {
            let url = screens.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        try Data(#"{"screens": "Screens", "cdn": {"purge": [{"varnish": ["\#(node.baseURL)"]}]}}"#.utf8)
            .write(to: directory.appendingPathComponent("config.json"))
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }
        let (process, reader, _) = try await startServerProcess(
            ["--port", "0", "--log-format", "json", "--no-access-log", "--watch-interval", "0.05"], environment: environment,
            directory: directory)
        defer { if process.isRunning { process.terminate() } }
        Thread { while reader.next() != nil {} }.start()
        try Data(Self.screens(banner: "Summer sale")["fragments/banner.yaml"]!).write(
            to: screens.appendingPathComponent("fragments/banner.yaml"), options: .atomic)
        await node.waitForRequests(1)
        process.terminate()  // SIGTERM, while the purge waits to try again
        await exited(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(node.requests.count == 2, "the second try was sent before the exit")
        try await node.stop()
    }

    /// A purger of `target` with no pauses between attempts, and the header of a recorded request.
    static func purger(_ target: CDNSettings.PurgeTarget, environment: [String: String]) -> CDNPurger {
        var settings = CDNSettings(targets: [target])
        settings.backoff = [.zero, .zero]
        return CDNPurger(settings: settings, logger: testLogger("test"), environment: environment)
    }

    static func header(_ request: TestUpstream.Request, _ name: String) -> String? {
        request.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    // Fastly and Cloudflare cannot be reached from CI: their requests are checked here against
    // each provider's documented API, by a local server standing for it.

    @Test("Fastly: POST /service/<id>/purge with Fastly-Key and the keys in Surrogate-Key, 256 at most a request, soft by default")
    func fastlyRequests() async throws {
        let api = try await TestUpstream()
        api.on("/service/SU1Z0isxPaozGVKXdv0eY/purge", .json(#"{"taksi:screen:s0": "108-1391560174-974124"}"#))
        let purger = Self.purger(
            .fastly(
                serviceID: "SU1Z0isxPaozGVKXdv0eY", token: Secret(.environment("FASTLY_API_TOKEN")), soft: true,
                api: URL(string: api.baseURL)!),
            environment: ["FASTLY_API_TOKEN": "f4stly-t0ken"])
        purger.purge(screens: (0..<300).map { "s\($0)" })
        await purger.purges.runUntilIdle()
        let requests = api.requests
        #expect(requests.count == 2, "256 keys, then 44")
        #expect(requests.map(\.method) == ["POST", "POST"])
        #expect(requests.map { Self.header($0, "Surrogate-Key")?.split(separator: " ").count } == [256, 44])
        #expect(Self.header(requests[0], "Surrogate-Key")?.hasPrefix("taksi:screen:s0 taksi:screen:s1 ") == true)
        for request in requests {
            #expect(Self.header(request, "Fastly-Key") == "f4stly-t0ken")
            #expect(Self.header(request, "Fastly-Soft-Purge") == "1")
            #expect(Self.header(request, "Accept") == "application/json")
        }
        #expect(purger.failing.isEmpty)
        try await api.stop()
    }

    @Test(
        "Cloudflare: POST /client/v4/zones/<id>/purge_cache with a Bearer token and {\"tags\": [...]}, 100 a request; a 429 waits its Retry-After"
    )
    func cloudflareRequests() async throws {
        let api = try await TestUpstream()
        let answer = #"{"success": true, "errors": [], "messages": [], "result": {"id": "023e105f4ecef8ad9ca31a8372d0c353"}}"#
        api.on("/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353/purge_cache", .first(1, .rateLimited(retryAfter: 0), then: .json(answer)))
        let purger = Self.purger(
            .cloudflare(
                zoneID: "023e105f4ecef8ad9ca31a8372d0c353", token: Secret(.environment("CLOUDFLARE_API_TOKEN")),
                api: URL(string: api.baseURL)!),
            environment: ["CLOUDFLARE_API_TOKEN": "cl0udfl4re"])
        purger.purge(screens: (0..<250).map { "s\($0)" })
        await purger.purges.runUntilIdle()
        let requests = api.requests
        #expect(requests.count == 4, "the first refused (429), sent again; then 100, 100, 50")
        var sizes: [Int] = []
        for request in requests {
            #expect(request.method == "POST")
            #expect(Self.header(request, "Authorization") == "Bearer cl0udfl4re")
            #expect(Self.header(request, "Content-Type") == "application/json")
            let body = try JSONDecoder().decode([String: [String]].self, from: Data(request.body.utf8))
            #expect(Array(body.keys) == ["tags"])
            sizes.append(body["tags"]?.count ?? 0)
        }
        #expect(sizes == [100, 100, 100, 50])
        #expect(purger.failing.isEmpty)
        try await api.stop()
    }

    @Test("Cloudflare's 200 with success false is a failure; a token that is not set fails the purge without a request, and the start")
    func providerFailures() async throws {
        let api = try await TestUpstream()
        api.on(
            "/client/v4/zones/z1/purge_cache",
            .json(
                #"{"success": false, "errors": [{"code": 1134, "message": "Purge by tag is not allowed"}], "messages": [], "result": null}"#
            ))
        let zone = CDNSettings.PurgeTarget.cloudflare(
            zoneID: "z1", token: Secret(.environment("CLOUDFLARE_API_TOKEN")), api: URL(string: api.baseURL)!)
        let refused = Self.purger(zone, environment: ["CLOUDFLARE_API_TOKEN": "t"])
        refused.purge(screens: ["home"])
        await refused.purges.runUntilIdle()
        #expect(api.requests.count == 3, "sent, and again after each pause")
        #expect(refused.failing.first?.error.contains("Purge by tag is not allowed") == true, "\(refused.failing)")

        let unset = Self.purger(zone, environment: [:])
        unset.purge(screens: ["home"])
        await unset.purges.runUntilIdle()
        #expect(api.requests.count == 3, "no request without a token")
        #expect(unset.failing.first?.error.contains("CLOUDFLARE_API_TOKEN") == true)

        var configuration = ServerConfiguration.forTests()
        configuration.screensDirectory = Scratch.path("none").path
        configuration.cdn = CDNSettings(targets: [zone])
        #expect {
            try buildApplication(configuration: configuration, logger: testLogger("test"), environment: [:])
        } throws: { error in
            guard case .credentials(let problems) = error as? ApplicationError else { return false }
            return problems.map(\.description) == [
                "the cdn's cloudflare token in the environment variable CLOUDFLARE_API_TOKEN: it is not set (or cannot be read); give the secret there"
            ]
        }
        try await api.stop()
    }

    /// A replica of the fleet named `name`, on the store's bundle `bundle`, purging `node` (a
    /// Varnish node standing in), and the service that makes it follow the store.
    static func replica(
        _ name: String, of store: PostgresFleetStore, bundle: String, node: TestUpstream, alive: Duration = .seconds(3600),
        orphanAge: Duration = .seconds(5)
    ) async throws -> (Application, PublishedScreens, CDNPurger) {
        var configuration = ServerConfiguration.forTests()
        configuration.cdn = CDNSettings(targets: [.varnish([URL(string: node.baseURL)!])])
        let (named, files) = try #require(try await store.bundle(named: bundle))
        guard case .success(let (screenSet, bytes)) = PublishedScreens.load(files, named: named, upstreams: []) else {
            throw FixtureError.invalidScreens("the published bundle did not load")
        }
        // Two replicas in one process: each its own name in the store.
        let state = PublishedScreens.State(replica: name, serving: named)
        var parts = Application.Parts()
        parts.fleetStore = store
        parts.published = state
        let application = buildApplication(
            configuration: configuration, screenSet: screenSet, logger: testLogger(name), screenSetBytes: bytes, parts: parts)
        let purger = try #require(application.purger)
        // Reports made once by hand here (no follower runs between them): live for the whole test.
        purger.follow(store, state: state, wait: .seconds(60), poll: .milliseconds(20), alive: alive, orphanAge: orphanAge)
        let follower = PublishedScreens(
            store: store, screens: application.store, upstreams: [], interval: .seconds(1), state: state, logger: testLogger(name),
            metrics: TestMetrics())
        return (application, follower, purger)
    }

    /// A fleet's store on a throwaway PostgreSQL, a purge target that answers 200, and the
    /// first release (the screens with the banner "Sale"); skipped without PostgreSQL.
    static func withFleet(_ body: (PostgresServer, PostgresFleetStore, TestUpstream, Release) async throws -> Void) async throws {
        guard PostgresServer.isAvailable else {
            print("skipped: PostgreSQL is not installed")
            return
        }
        let database = try PostgresServer()
        defer { database.remove() }
        let node = try await TestUpstream()
        node.on("/", .status(200))
        try await PublishedScreensTests.withStore(database) { store in
            let first = try await store.publish(ScreenBundle(files: Self.screens(banner: "Sale")), screens: 10, revisions: [], by: "test")
            try await body(database, store, node, first.release)
        }
        try await node.stop()
    }

    @Test(
        "a fleet's purge whose sender is killed before it sends is sent by the next replica: it is recorded in the store, not held in one process"
    )
    func fleetPurgeOutlivesItsSender() async throws {
        try await Self.withFleet { database, store, node, first in
            // replica-b in this process, sure of no replica longer than 2 s after its last report.
            let (_, followerB, purgerB) = try await Self.replica(
                "replica-b", of: store, bundle: first.bundle, node: node, alive: .seconds(2), orphanAge: .milliseconds(100))
            await followerB.follow()
            // replica-a, a process (first by name): it will switch, record the purge, and wait for replica-b.
            let directory = Scratch.path("cdn-replica-a")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(#"{"cdn": {"purge": [{"varnish": ["\#(node.baseURL)"]}]}}"#.utf8).write(
                to: directory.appendingPathComponent("config.json"))
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }.merging(
                ["TAKSI_STORE": database.url, "TAKSI_SCREENS_SOURCE": "store", "HOSTNAME": "replica-a"]) { $1 }
            let (process, reader, _) = try await startServerProcess(
                ["--port", "0", "--log-format", "json", "--no-access-log"], environment: environment, directory: directory)
            defer { if process.isRunning { process.terminate() } }
            // replica-a's log, shown by a failure below.
            let log = NIOLockedValueBox<[String]>([])
            Thread { while let line = reader.next() { log.withLockedValue { $0.append(line) } } }.start()

            // replica-b says it is alive (serving the first bundle) every second until replica-a is
            // killed, from a process of its own: replica-a counts a replica live for 10 s after its
            // last report, and on a busy machine starting a process, or this test's next step, can
            // take longer than that (replica-a then purged at once).
            let heartbeat = try database.repeatEverySecond("UPDATE taksi_replicas SET seen = now() WHERE replica = 'replica-b'")
            defer { if heartbeat.isRunning { kill(heartbeat.processIdentifier, SIGKILL) } }
            let second = try await store.publish(
                ScreenBundle(files: Self.screens(banner: "Summer sale")), screens: 10, revisions: [], by: "test")
            let guardTime = ContinuousClock.now + .seconds(60)  // a hang guard
            while try await store.unsentPurges(recordedWithin: .seconds(3600), before: .zero).isEmpty, ContinuousClock.now < guardTime {
                await Task.yield()
            }
            let unsent = try await store.unsentPurges(recordedWithin: .seconds(3600), before: .zero).map(\.bundle)
            kill(process.processIdentifier, SIGKILL)  // an autoscaler's scale-down, a node lost
            await exited(process)
            kill(heartbeat.processIdentifier, SIGKILL)
            await exited(heartbeat)
            #expect(unsent == [second.release.bundle], "\(log.withLockedValue { $0 }.joined(separator: "\n"))")
            #expect(node.requests.isEmpty, "replica-a was waiting for replica-b: \(log.withLockedValue { $0 }.joined(separator: "\n"))")

            // replica-b switches; replica-a, first by name, looks live for two more seconds, so
            // replica-b leaves the purge to it; then finds it unsent, and sends it.
            await followerB.follow()
            let resending = Task { try await purgerB.run() }
            defer { resending.cancel() }
            #expect(await eventually { node.requests.count == 1 })
            await purgerB.idle()
            let tags = node.requests.first.flatMap { Self.header($0, "xkey-purge") }
            #expect(tags == "taksi:screen:s1 taksi:screen:s2 taksi:screen:s3 taksi:screen:s4")
            #expect(try await store.unsentPurges(recordedWithin: .seconds(3600), before: .zero).isEmpty, "marked sent")
            #expect(node.requests.count == 1)
        }
    }

    @Test("a fleet on the store purges once every live replica serves the new bundle, and only once: from the first-named replica")
    func fleetPurgesOnce() async throws {
        try await Self.withFleet { _, store, node, first in
            let (a, followerA, purgerA) = try await Self.replica("replica-a", of: store, bundle: first.bundle, node: node)
            let (b, followerB, purgerB) = try await Self.replica("replica-b", of: store, bundle: first.bundle, node: node)
            try await a.test(.router) { clientA in
                try await b.withBackgroundServices {
                    await followerA.follow()
                    await followerB.follow()

                    _ = try await store.publish(
                        ScreenBundle(files: Self.screens(banner: "Summer sale")), screens: 10, revisions: [], by: "test")
                    await followerA.follow()
                    // replica-a serves the new bundle; its purge waits for replica-b.
                    #expect(await eventually { purgerA.waitingOn == ["replica-b"] })
                    #expect(node.requests.isEmpty, "nothing purged while a replica would answer a refetch with the earlier skeleton")
                    let ready = try await clientA.execute(uri: "/readyz")
                    #expect(ready.json?["cdn"]?["waiting_on"] == ["replica-b"], "\(ready.text)")

                    await followerB.follow()
                    await purgerA.idle()
                    await purgerB.idle()
                }
            }
            #expect(node.requests.count == 1, "one purge for the fleet")
            let tags = node.requests.first.flatMap { Self.header($0, "xkey-purge") }
            #expect(tags == "taksi:screen:s1 taksi:screen:s2 taksi:screen:s3 taksi:screen:s4")
            #expect(purgerA.waitingOn.isEmpty && purgerB.waitingOn.isEmpty)
        }
    }
}
