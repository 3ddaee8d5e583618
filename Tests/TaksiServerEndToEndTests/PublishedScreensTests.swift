import Foundation
import Logging
import MetricsTestKit
import NIOHTTP1
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Screens published to the fleet's store (a real PostgreSQL, a throwaway cluster per test):
/// bundles named by their content, releases, rollbacks, replicas following the current bundle and
/// refusing what they cannot load, and the commands as users run them.
@Suite("Published screens", .enabled(if: PostgresServer.isAvailable, "needs PostgreSQL (apt-get install postgresql)"))
struct PublishedScreensTests {
    static func screens(title: String) -> [String: [UInt8]] {
        [
            "home.yaml": Array(
                "name: home\nentry: true\ncomponents:\n  - {name: label_component, identifier: title, content: {value: \(title)}}\n".utf8),
            "about.yaml": Array("name: about\nentry: true\ncomponents: []\n".utf8),
        ]
    }

    /// A store on `database`, running until the test ends.
    static func withStore(_ database: PostgresServer, _ body: (PostgresFleetStore) async throws -> Void) async throws {
        try await withStore(url: database.url, body)
    }

    /// A store at `url` logging to `logger`, running until the test ends.
    static func withStore(
        url: String, logger: Logger = testLogger("test"), _ body: (PostgresFleetStore) async throws -> Void
    ) async throws {
        var configuration = ServerConfiguration()
        try configuration.apply(key: "store", value: url, source: "test")
        configuration.store.timeout = 60  // a hang guard: a busy machine is slow, not wrong
        let store = try PostgresFleetStore(settings: configuration.store, window: .seconds(3600), logger: logger)
        let running = Task { try await store.run() }
        defer { running.cancel() }
        try await body(store)
    }

    /// A replica started on the store's bundle `name` (as `serve` starts one: the bundle loaded,
    /// the application built on it), and the service that makes it follow the store.
    static func replica(
        of store: PostgresFleetStore, bundle name: String, configuration: ServerConfiguration = .forTests(),
        metrics: TestMetrics = TestMetrics(),
        log: LogRecorder = LogRecorder(), interval: Duration = .seconds(1)
    ) async throws -> (Application, PublishedScreens) {
        let (name, bundle) = try #require(try await store.bundle(named: name))
        guard case .success(let (screenSet, bytes)) = PublishedScreens.load(bundle, named: name, upstreams: []) else {
            throw FixtureError.invalidScreens("the published bundle did not load")
        }
        let application = try buildApplication(
            configuration: configuration, logger: log.logger, metrics: metrics, store: store, published: (name, screenSet, bytes))
        let follower = PublishedScreens(
            store: store, screens: application.store, upstreams: [], interval: interval, state: try #require(application.published),
            logger: log.logger, metrics: metrics)
        return (application, follower)
    }

    static func skeleton(_ application: Application, _ path: String) async throws -> String {
        try await application.execute(uri: path).text
    }

    @Test("publish stores a bundle once, named by its content; replicas follow each release and rollback; history lists them")
    func publishFollowRollback() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            #expect(try await store.currentRelease() == nil)
            let first = try await store.publish(ScreenBundle(files: Self.screens(title: "Welcome")), screens: 2, revisions: [], by: "test")
            #expect(first.isNew)
            #expect(first.release.number == 1)
            #expect(first.release.bundle.count == 64, "a SHA-256 of the bundle, in hex")
            let again = try await store.publish(ScreenBundle(files: Self.screens(title: "Welcome")), screens: 2, revisions: [], by: "test")
            #expect(!again.isNew, "the same files are the same bundle: nothing to release")

            // A replica starts from the current bundle and follows.
            let (named, _) = try #require(try await store.bundle(named: String(first.release.bundle.prefix(8))))
            #expect(named == first.release.bundle, "a prefix names the bundle")
            var configuration = ServerConfiguration.forTests()
            configuration.screensSource = .store
            let (application, follower) = try await Self.replica(of: store, bundle: named, configuration: configuration)
            #expect(try await Self.skeleton(application, "/screens/home").contains("Welcome"))

            let second = try await store.publish(ScreenBundle(files: Self.screens(title: "Hello")), screens: 2, revisions: [], by: "test")
            #expect(second.release.number == 2)
            await follower.follow()
            #expect(try await Self.skeleton(application, "/screens/home").contains("Hello"))
            let reported = try await store.replicas(seenWithin: .seconds(60))
            #expect(reported.map(\.bundle) == [second.release.bundle])
            #expect(reported.first?.replica == PublishedScreens.replicaName)

            let back = try await store.rollback(to: nil, by: "test")
            #expect(back.bundle == first.release.bundle)
            #expect(back.kind == "rollback")
            await follower.follow()
            #expect(try await Self.skeleton(application, "/screens/home").contains("Welcome"))
            #expect(try await store.history(limit: 10).map(\.kind) == ["rollback", "publish", "publish"])
            #expect(try await store.history(limit: 10).map(\.number) == [3, 2, 1])

            // Forward again by name; unknown names and nothing to move to are refused with why.
            #expect(try await store.rollback(to: String(second.release.bundle.prefix(10)), by: "test").bundle == second.release.bundle)
            await #expect(throws: StoreError.self) { try await store.rollback(to: "ffffffffffff", by: "test") }
            await #expect(throws: StoreError.self) { try await store.rollback(to: second.release.bundle, by: "test") }
        }
    }

    @Test("any replica answers any kept revision: data for a skeleton of a bundle it never served comes from that bundle, not 412")
    func keptRevisions() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        func home(_ identifier: String) -> [String: [UInt8]] {
            [
                "home.yaml": Array(
                    """
                    name: home
                    entry: true
                    sources: {query: {type: request, parameters: {name: {default: Ada}}}}
                    components:
                      - {name: label_component, identifier: \(identifier), content: {value: {$template: "Hi {query.name}"}}}
                    actions:
                      ping: {answers: {success: {data: [{identifier: \(identifier), content: {value: pong}}]}}}
                    """.utf8)
            ]
        }
        try await Self.withStore(database) { store in
            var revisions: [String: String] = [:]
            for identifier in ["greeting", "welcome"] {
                let files = home(identifier)
                let screenSet = try #require(ScreenSetLoader.load(files: files).screenSet)
                let digests = PublishedScreens.revisions(of: screenSet)
                let digest: String = try #require(digests.first)
                revisions[identifier] = digest
                _ = try await store.publish(ScreenBundle(files: files), screens: 1, revisions: digests, by: "test")
            }
            #expect(revisions["greeting"] != revisions["welcome"], "the data's shape changed")
            // A replica that started on the second bundle (restarted, or new in a rollout).
            let current = try #require(try await store.currentRelease())
            var configuration = ServerConfiguration.forTests()
            configuration.screensSource = .store
            let metrics = TestMetrics()
            let (application, _) = try await Self.replica(of: store, bundle: current.bundle, configuration: configuration, metrics: metrics)
            // Before anything loaded the earlier bundle: a submit for its skeleton is not refused
            // before its body (Expect: 100-continue), since only the store knows.
            let held: HTTPHeaders = ["X-Taksi-Skeleton": revisions["greeting"]!, "Content-Type": "application/json"]
            #expect(
                application.responder.refusal(beforeBodyOf: RequestHead(method: .POST, uri: "/screens/home/actions/ping", headers: held))
                    == nil)
            let earlier = try await application.execute(
                uri: "/screens/home/data?name=Bo", headers: [("X-Taksi-Skeleton", revisions["greeting"]!)])
            #expect(earlier.status == .ok)
            #expect(earlier.text.contains(#""identifier":"greeting""#), "\(earlier.text)")
            #expect(earlier.header("X-Taksi-Skeleton") == revisions["greeting"])
            let now = try await application.execute(uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", revisions["welcome"]!)])
            #expect(now.text.contains(#""identifier":"welcome""#))
            // Again: answered from the bundle now held, without asking the store.
            #expect(
                try await application.execute(uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", revisions["greeting"]!)]).status
                    == .ok)
            #expect(metrics.counterTotal(label: "taksi_kept_bundle_loads_total", dimensions: [("outcome", "loaded")]) == 1)
            // A submit for the earlier skeleton, answered in its shape.
            let submitted = try await application.execute(
                .POST, uri: "/screens/home/actions/ping", headers: held.map { ($0.name, $0.value) }, body: "{}")
            #expect(submitted.status == .ok)
            #expect(submitted.text.contains(#""identifier":"greeting""#), "\(submitted.text)")
            let unknown = try await application.execute(uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", "0123456789abcdef")])
            #expect(unknown.status == .preconditionFailed)
            #expect(unknown.json?["error"]?["code"] == "skeleton_outdated")
        }
    }

    @Test(
        "what apps send costs the store little: a revision that is no digest asks nothing, an unknown one is asked once, a dropped bundle is not loaded again at once"
    )
    func keptRevisionsBounded() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            // Six releases, each its own data shape: five earlier revisions, one more than a replica holds.
            var revisions: [String] = []
            for index in 0..<6 {
                let files = [
                    "home.yaml": Array(
                        """
                        name: home
                        entry: true
                        sources: {query: {type: request, parameters: {name: {default: Ada}}}}
                        components:
                          - {name: label_component, identifier: label\(index), content: {value: {$template: "Hi {query.name}"}}}
                        """.utf8)
                ]
                let screenSet = try #require(ScreenSetLoader.load(files: files).screenSet)
                let digests = PublishedScreens.revisions(of: screenSet)
                revisions.append(try #require(digests.first))
                _ = try await store.publish(ScreenBundle(files: files), screens: 1, revisions: digests, by: "test")
            }
            let current = try #require(try await store.currentRelease())
            var configuration = ServerConfiguration.forTests()
            configuration.screensSource = .store
            let metrics = TestMetrics()
            let (application, _) = try await Self.replica(of: store, bundle: current.bundle, configuration: configuration, metrics: metrics)
            func data(_ revision: String) async throws -> HTTPResponseStatus {
                try await application.execute(uri: "/screens/home/data", headers: [("X-Taksi-Skeleton", revision)]).status
            }
            func loads(_ outcome: String) -> Int {
                Int(metrics.counterTotal(label: "taksi_kept_bundle_loads_total", dimensions: [("outcome", outcome)]))
            }
            // The five earlier revisions in turn, three times: each bundle loaded once; past the
            // four held, the one dropped is 412 until its window passes, not a load per request.
            for round in 0..<3 {
                for revision in revisions.prefix(5) {
                    let status = try await data(revision)
                    #expect(status == .ok || (round > 0 && status == .preconditionFailed), "round \(round): \(status)")
                }
            }
            #expect(loads("loaded") == 5)
            #expect(loads("reload_deferred") > 0)
            // Garbage is not a revision: no store query.
            #expect(try await data("not-a-digest") == .preconditionFailed)
            #expect(try await data("0123456789ABCDEF") == .preconditionFailed)
            #expect(loads("malformed") == 2)
            // A digest no bundle has: the store is asked once, then the answer is remembered.
            for _ in 0..<3 { #expect(try await data("0123456789abcdef") == .preconditionFailed) }
            #expect(loads("unknown") == 1 && loads("unknown_recent") == 2)
        }
    }

    @Test("a release wakes the replicas at once: the store's notification, not the next look (here ten minutes away)")
    func notified() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            let first = try await store.publish(ScreenBundle(files: Self.screens(title: "First")), screens: 2, revisions: [], by: "test")
            let (application, follower) = try await Self.replica(of: store, bundle: first.release.bundle, interval: .seconds(600))
            let running = Task { try await follower.run() }
            defer { running.cancel() }
            // Its first look is done (it reported); the next is minutes away.
            var reported = false
            for _ in 0..<100_000 where !reported {  // a hang guard
                reported = try await !store.replicas(seenWithin: .seconds(60)).isEmpty
                await Task.yield()
            }
            let files = Self.screens(title: "Second")
            _ = try await store.publish(ScreenBundle(files: files), screens: 2, revisions: [], by: "test")
            let version = try #require(ScreenSetLoader.load(files: files).screenSet?.version)
            #expect(await eventually { application.store.status.version == version })
            #expect(try await Self.skeleton(application, "/screens/home").contains("Second"))
        }
    }

    @Test(
        "a replica started before anything is published, then while the current bundle does not load here, listens, not ready, saying why; then serves the first bundle that loads and follows each release"
    )
    func replicaProcess() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        let directory = Scratch.path("replica")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func write(_ title: String) throws {
            for (path, bytes) in Self.screens(title: title) { try Data(bytes).write(to: directory.appendingPathComponent(path)) }
        }
        let environment = ["TAKSI_STORE": database.url]
        let process = Process()
        let executable: URL = try #require(CommandLineTests.built("taksi-server"))
        process.executableURL = executable
        process.arguments = ["--port", "0", "--log-format", "json", "--no-access-log", "--no-watch"]
        process.currentDirectoryURL = directory  // no config.json, no Screens: it has nothing of its own to serve
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }.merging(
            environment.merging(["TAKSI_SCREENS_SOURCE": "store", "HOSTNAME": "replica-a"]) { $1 }
        ) { $1 }
        let logs = Pipe()
        process.standardError = logs
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = LineReader(logs.fileHandleForReading)
        /// The next log line whose message starts with `prefix` (others skipped); nil at the end.
        func message(startingWith prefix: String) async -> String? {
            while let line = await reader.nextLine() {
                let message = (try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)))?["message"]?.stringValue ?? ""
                if message.hasPrefix(prefix) { return message }
            }
            return nil
        }
        #expect(await message(startingWith: "nothing is published yet; waiting for taksi-server publish") != nil)
        // It listens all the same: alive, measured, and not ready, saying why.
        let listening = try #require(await message(startingWith: "listening on http://127.0.0.1:"))
        let port = try #require(Int(listening.split(separator: ":").last ?? ""))
        func get(_ path: String) async throws -> RawResponse {
            let connection = try RawConnection(port: port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            return try #require(await connection.receive(1).first)
        }
        #expect(try await get("/healthz").status == 200)
        #expect(try await get("/metrics").body.contains("taksi_store_reachable 1"))
        var ready = try await get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json?["status"] == "waiting")
        #expect(ready.json?["published"]?["waiting"] == "nothing is published yet; waiting for taksi-server publish")
        let waiting = try await get("/screens/home")
        #expect(waiting.status == 503)
        #expect(waiting.json?["error"]?["code"] == "not_serving_yet")
        #expect(waiting.header("Retry-After") == "1")
        #expect(waiting.header("Cache-Control") == "no-store", "an error no shared cache keeps")
        for path in ["/screens/home/data", "/links/resolve?url=https%3A%2F%2Fexample.com%2Fx"] {
            #expect(try await get(path).json?["error"]?["code"] == "not_serving_yet", "\(path)")
        }
        #expect(try await get("/nowhere").status == 404, "a path that is no endpoint is still not found")

        // A bundle this replica cannot load (its configuration names no upstream `shop`).
        let bad = try await Self.publishUnloadable(database)
        #expect(await message(startingWith: "the current published bundle does not load here; not serving until one does") != nil)
        ready = try await get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json?["published"]?["refused_bundle"] == .string(bad))
        #expect(ready.json?["published"]?["refusal"]?.stringValue?.contains("upstream \"shop\" is not configured") == true)
        #expect(try await get("/screens/home").status == 503)

        let cli = CommandLineTests()
        try write("One")
        #expect(try await cli.run(["publish", directory.path, "--wait", "--timeout", "60"], environment: environment).status == 0)
        #expect(try await get("/screens/home").body.contains("One"), "--wait returned once the replica served it")
        ready = try await get("/readyz")
        #expect(ready.status == 200)
        #expect(ready.json?["published"]?["waiting"] == .null)

        try write("Two")
        #expect(try await cli.run(["publish", directory.path, "--wait", "--timeout", "60"], environment: environment).status == 0)
        #expect(try await get("/screens/home").body.contains("Two"), "--wait returned once the replica served it")
        let status = try await cli.run(["rollout", "status"], environment: environment)
        #expect(status.status == 0)
        #expect(status.output.contains("1 live replica; 1 serves the current bundle"), "\(status.output)")
        #expect(status.output.contains("replica-a/\(process.processIdentifier)"))

        process.terminate()
        await exited(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }

    /// Publishes a bundle valid where it was published, with an upstream (`shop`) that a replica
    /// with no upstreams refuses; returns its name.
    static func publishUnloadable(_ database: PostgresServer) async throws -> String {
        var name = ""
        try await withStore(database) { store in
            var files = screens(title: "Bad")
            files["home.yaml"] = Array(
                "name: home\nentry: true\nsources: {api: {type: http, upstream: shop, path: /x}}\ncomponents:\n  - {name: label_component, identifier: t, content: {value: {$bind: api.name}}}\n"
                    .utf8)
            name = try await store.publish(ScreenBundle(files: files), screens: 2, revisions: [], by: "test").release.bundle
        }
        return name
    }

    @Test("a bundle this replica cannot load is refused, recorded once, and the last good set stays served")
    func refusedBundle() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            let good = try await store.publish(ScreenBundle(files: Self.screens(title: "Good")), screens: 2, revisions: [], by: "test")
            let log = LogRecorder()
            let (application, follower) = try await Self.replica(of: store, bundle: good.release.bundle, log: log)

            // Valid where it was published (with an upstream this replica does not have).
            var files = Self.screens(title: "Bad")
            files["home.yaml"] = Array(
                "name: home\nentry: true\nsources: {api: {type: http, upstream: shop, path: /x}}\ncomponents:\n  - {name: label_component, identifier: t, content: {value: {$bind: api.name}}}\n"
                    .utf8)
            let bad = try await store.publish(ScreenBundle(files: files), screens: 2, revisions: [], by: "test")
            await follower.follow()
            await follower.follow()
            #expect(try await Self.skeleton(application, "/screens/home").contains("Good"))
            let report = try #require(try await store.replicas(seenWithin: .seconds(60)).first)
            #expect(report.bundle == good.release.bundle)
            #expect(report.refusedBundle == bad.release.bundle)
            #expect(report.refusal?.contains("upstream \"shop\" is not configured") == true)
            #expect(log.recorded.filter { $0.message.hasPrefix("published screens refused") }.count == 1, "said once, not at every look")
            // The replica's /readyz says the same of itself.
            let ready = try await application.execute(uri: "/readyz")
            #expect(ready.status == .ok)
            #expect(ready.json?["published"]?["bundle"] == .string(good.release.bundle))
            #expect(ready.json?["published"]?["refused_bundle"] == .string(bad.release.bundle))
            #expect(ready.json?["published"]?["store"] == "reachable")

            // A later format (a newer server published it) is refused with why.
            #expect(throws: BundleError.self) { try ScreenBundle(decoding: Array(#"{"format": 2, "files": {}}"#.utf8)) }
        }
    }

    /// Stores the bundle row `content` (SQL for its bytes) behind the server's back, named `id`
    /// (SQL; by default the SHA-256 of the content, as publish names it), and releases it.
    static func release(content: String, id: String = "encode(sha256(content), 'hex')", in database: PostgresServer) async throws -> String
    {
        try await database.sql(
            """
            WITH c AS (SELECT \(content) AS content),
            b AS (
                INSERT INTO taksi_bundles (id, content, bytes, screens)
                SELECT \(id), content, octet_length(content), 1 FROM c RETURNING id)
            INSERT INTO taksi_releases (bundle, kind, released_by) SELECT id, 'publish', 'test' FROM b RETURNING bundle
            """)
    }

    @Test(
        "a bundle this replica cannot read (a later format, not JSON, changed after publish, over the bound) is refused once, not taken for a store outage"
    )
    func unreadableBundles() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            let good = try await store.publish(ScreenBundle(files: Self.screens(title: "Good")), screens: 2, revisions: [], by: "test")
            let log = LogRecorder()
            let metrics = TestMetrics()
            let (application, follower) = try await Self.replica(of: store, bundle: good.release.bundle, metrics: metrics, log: log)
            let cases: [(content: String, id: String?, says: String)] = [
                (#"convert_to('{"format": 2, "files": {}}', 'UTF8')"#, nil, "format 2, newer than this server reads"),
                ("convert_to('not a bundle', 'UTF8')", nil, "not in the format taksi-server stores"),
                (
                    #"convert_to('{"format": 1, "files": {}}', 'UTF8')"#, "encode(sha256('another'::bytea), 'hex')",
                    "does not match its name"
                ),
                ("convert_to(repeat('a', \(ScreenBundle.maximumBytes + 1)), 'UTF8')", nil, "more than the limit"),
            ]
            for (number, unreadable) in cases.enumerated() {
                let name = try await Self.release(
                    content: unreadable.content, id: unreadable.id ?? "encode(sha256(content), 'hex')", in: database)
                await follower.follow()
                await follower.follow()
                #expect(try await Self.skeleton(application, "/screens/home").contains("Good"), "the last good set stays served")
                // Reported all the same, with the refusal: not silent as a replica that lost its store.
                let report = try #require(try await store.replicas(seenWithin: .seconds(60)).first)
                #expect(report.bundle == good.release.bundle)
                #expect(report.refusedBundle == name)
                #expect(report.refusal?.contains(unreadable.says) == true, "\(String(describing: report.refusal))")
                let ready = try await application.execute(uri: "/readyz")
                #expect(ready.json?["published"]?["store"] == "reachable", "\(ready.text)")
                #expect(ready.json?["published"]?["refused_bundle"] == .string(name))
                #expect(
                    log.recorded.filter { $0.message.hasPrefix("published screens refused") }.count == number + 1,
                    "said once per bundle, not at every look")
                #expect(!log.recorded.contains { $0.message.hasPrefix("store: cannot look") }, "not taken for an outage")
            }
            #expect(try metrics.expectGauge("taksi_store_reachable").lastValue == 1)
            #expect(try metrics.expectCounter("taksi_published_bundles_refused_total").totalValue == cases.count)

            // With the only live replica refusing the current bundle, rollout status fails and says why.
            let status = try await CommandLineTests().run(["rollout", "status"], environment: ["TAKSI_STORE": database.url])
            #expect(status.status == 1)
            #expect(status.output.contains("more than the limit"), "\(status.output)")
        }
    }

    @Test("a store that refuses the connection says why at once, in the database's words: a wrong password, a database that does not exist")
    func refusedConnection() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        let cases = [
            (
                database.url.replacingOccurrences(of: PostgresServer.password, with: "wrong-password"), "password authentication failed",
                "28P01"
            ),
            (database.url.replacingOccurrences(of: "/postgres?", with: "/nosuchdb?"), "database \"nosuchdb\" does not exist", "3D000"),
        ]
        for (url, says, state) in cases {
            // A store timeout far past any answer: what fails the command is the database's refusal.
            let status = try await CommandLineTests().run(
                ["rollout", "status"], environment: ["TAKSI_STORE": url, "TAKSI_STORE_TIMEOUT": "60"])
            #expect(status.status == 1, "\(status)")
            #expect(status.error.contains(says) && status.error.contains("SQLSTATE \(state)"), "\(status.error)")
            #expect(!status.error.contains("no answer within"), "\(status.error)")
            #expect(!(status.output + status.error).contains(PostgresServer.password))

            // A replica's statements too, and its log says it once, however often the pool tries.
            let log = LogRecorder()
            try await Self.withStore(url: url, logger: log.logger) { store in
                for _ in 0..<3 {
                    await #expect {
                        _ = try await store.currentRelease()
                    } throws: { error in
                        "\(error)".contains(says)
                    }
                }
            }
            #expect(log.recorded.filter { $0.message.hasPrefix("store: cannot connect: ") }.count == 1, "\(log.recorded.map(\.message))")
        }

        // Mended behind the replica's back (the database created): it recovers without a restart.
        let missing = try #require(cases.last?.0)
        let log = LogRecorder()
        try await Self.withStore(url: missing, logger: log.logger) { store in
            await #expect(throws: StoreError.self) { _ = try await store.currentRelease() }
            _ = try await database.sql("CREATE DATABASE nosuchdb")
            let guardTime = ContinuousClock.now + .seconds(120)  // a hang guard
            var recovered = false
            while !recovered, ContinuousClock.now < guardTime {
                do {
                    _ = try await store.currentRelease()
                    recovered = true
                } catch {
                    await Task.yield()
                }
            }
            #expect(recovered, "a refusal once seen does not fail every later statement without asking the database")
        }
        #expect(log.recorded.contains { $0.message == "store: connected again" })
    }

    @Test("racing publishes are serialized (the later is current); a bundle over the size bound is refused and stores nothing")
    func racesAndBounds() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        try await Self.withStore(database) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        _ = try await store.publish(
                            ScreenBundle(files: Self.screens(title: "T\(index)")), screens: 2, revisions: [], by: "test")
                    }
                }
                try await group.waitForAll()
            }
            let history = try await store.history(limit: 20)
            #expect(history.map(\.number) == Array((1...8).reversed()))
            #expect(Set(history.map(\.bundle)).count == 8)
            #expect(try await store.currentRelease()?.number == 8)

            let huge = ScreenBundle(files: ["big.json": [UInt8](repeating: 0x61, count: ScreenBundle.maximumBytes)])
            await #expect(throws: StoreError.self) { _ = try await store.publish(huge, screens: 1, revisions: [], by: "test") }
            #expect(try await store.history(limit: 20).count == 8)
        }
    }

    @Test("the commands as users run them: publish refuses an invalid set, publishes a valid one; history, rollback, rollout status")
    func commands() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        let cli = CommandLineTests()
        let environment = ["TAKSI_STORE": database.url]
        let invalid = try cli.brokenScreens()
        let refused = try await cli.run(["publish", invalid], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.output.contains("error"))
        let empty = try await cli.run(["history"], environment: environment)
        #expect(empty.output == "Nothing was published yet (taksi-server publish)\n", "nothing was stored: \(empty)")

        let directory = Scratch.path("publish")
        for (path, bytes) in Self.screens(title: "One") {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: directory.appendingPathComponent(path))
        }
        // A link out of the directory (a valid screen, so only the link is wrong) is refused: a
        // bundle holds the directory's own files, never whatever file of this machine a link names.
        let outside = Scratch.path("outside.yaml")
        try Data("name: extra\nentry: true\ncomponents: []\n".utf8).write(to: outside)
        let link = directory.appendingPathComponent("extra.yaml")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: outside)
        let linked = try await cli.run(["publish", directory.path], environment: environment)
        #expect(linked.status == 1, "\(linked)")
        #expect(linked.error.contains("extra.yaml: a link to a file outside"), "\(linked.error)")
        #expect(try await cli.run(["history"], environment: environment).output.hasPrefix("Nothing was published yet"))
        try FileManager.default.removeItem(at: link)

        let published = try await cli.run(["publish", directory.path], environment: environment)
        #expect(published.status == 0, "\(published)")
        #expect(published.output.hasPrefix("Published bundle "))
        #expect(published.output.contains("(2 screens,") && published.output.contains("as release 1"))
        try Data(Self.screens(title: "Two")["home.yaml"]!).write(to: directory.appendingPathComponent("home.yaml"))
        #expect(try await cli.run(["publish", directory.path], environment: environment).output.contains("as release 2"))

        // No replica runs: nothing serves the release, so --wait fails after its timeout, and
        // rollout status fails, each saying so (a CI's deploy step must not pass on an empty fleet).
        let waited = try await cli.run(["publish", directory.path, "--wait", "--timeout", "0.5"], environment: environment)
        #expect(waited.status == 1, "\(waited)")
        #expect(waited.output.contains("already current"))
        #expect(waited.error.contains("no replica is live"), "\(waited.error)")
        let status = try await cli.run(["rollout", "status"], environment: environment)
        #expect(status.status == 1, "\(status)")
        #expect(status.output.contains("current: release 2"))
        #expect(status.output.contains("No replica is live (none reported in the last 10 s)"), "\(status.output)")

        // Who: --by, else the CI's account (GitHub Actions' GITHUB_ACTOR), not the runner's user@host.
        let rolledBack = try await cli.run(["rollback", "--by", "ada\u{1B}[31m"], environment: environment)
        #expect(rolledBack.status == 0, "\(rolledBack)")
        #expect(rolledBack.output.contains("as release 3"))
        try Data(Self.screens(title: "Three")["home.yaml"]!).write(to: directory.appendingPathComponent("home.yaml"))
        let fromCI = try await cli.run(["publish", directory.path], environment: environment.merging(["GITHUB_ACTOR": "octocat"]) { $1 })
        #expect(fromCI.output.contains("as release 4"), "\(fromCI)")
        let history = try await cli.run(["history"], environment: environment)
        #expect(history.output.split(separator: "\n").count == 6, "\(history.output)")
        #expect(history.output.contains("rollback"))
        let rows = history.output.split(separator: "\n")
        #expect(rows.contains { $0.contains("rollback") && $0.contains("ada[31m") && !$0.contains("\u{1B}") }, "\(history.output)")
        #expect(rows.contains { $0.contains("octocat") }, "\(history.output)")
        let unknown = try await cli.run(["rollback", "abcdef"], environment: environment)
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no published bundle is named abcdef"))
        let noStore = try await cli.run(["history"])
        #expect(noStore.status == 2)
        #expect(noStore.error.contains("no store is configured"))
        #expect(
            ![refused, published, status, rolledBack, history, unknown].contains {
                ($0.output + $0.error).contains(PostgresServer.password)
            })
    }
}
