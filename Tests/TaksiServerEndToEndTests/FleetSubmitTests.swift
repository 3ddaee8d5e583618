import Foundation
import Logging
import MetricsTestKit
import TaksiPostgres
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// Keyed submits across replicas sharing a real PostgreSQL (a throwaway cluster per test), each
/// replica a real server on its own socket, one counting upstream behind them all: a retry on
/// another replica is answered once, whatever the store does.
@Suite("The fleet's keyed submits", .enabled(if: PostgresServer.isAvailable, "needs PostgreSQL (apt-get install postgresql)"))
struct FleetSubmitTests {
    /// One database, one upstream, and what every replica logged.
    final class Fleet: Sendable {
        let database: PostgresServer
        let upstream: TestUpstream
        let log = LogRecorder()

        init() async throws {
            database = try PostgresServer()
            upstream = try await TestUpstream()
        }

        /// A replica over `files`, sharing the store, its metrics in `metrics`. The store's timeout
        /// is a hang guard unless a test shortens it to see a refusal (and then only asserts
        /// refusals on that replica: on a busy machine a healthy store can be slower than it).
        /// - Parameter poolSize: the store's connections, when a test limits them.
        func replica(
            files: [String: String] = SharedScreens.actions, metrics: TestMetrics = TestMetrics(), storeTimeout: Double = 60,
            poolSize: Int? = nil
        ) throws -> Application {
            let load = ScreenSetLoader.load(files: files.mapValues { Array($0.utf8) }, upstreams: ["api"])
            guard let screenSet = load.screenSet else { throw FixtureError.invalidScreens(load.diagnostics.report) }
            var configuration = ServerConfiguration.forTests()
            configuration.upstreams = ["api": upstream.baseURL]
            try configuration.apply(key: "store", value: database.url, source: "test")
            configuration.store.timeout = storeTimeout
            if let poolSize { configuration.store.poolSize = poolSize }
            var parts = Application.Parts()
            parts.fleetStore = try PostgresFleetStore(settings: configuration.store, window: .seconds(3600), logger: log.logger)
            return buildApplication(configuration: configuration, screenSet: screenSet, logger: log.logger, metrics: metrics, parts: parts)
        }

        func remove() async throws {
            database.remove()
            try await upstream.stop()
        }
    }

    static let body = #"{"inputs": {"email": "a@b.c"}}"#
    static let submitPath = "/screens/signup/pro/actions/submit"

    /// A submit of `body` to `port`, with `key` when given, on a connection of its own.
    static func submit(_ port: Int, key: String?, body: String = body) async -> RawResponse? {
        guard let connection = try? RawConnection(port: port) else { return nil }
        connection.send(
            "POST \(submitPath) HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
                + (key.map { "Idempotency-Key: \($0)\r\n" } ?? "") + "\r\n" + body)
        // Off the cooperative pool: the answer waits on the store and the upstream.
        return await connection.receive(1).first
    }

    /// Runs `body` with every application's server listening and its store running.
    static func withReplicas(_ applications: [Application], _ body: ([Int]) async throws -> Void) async throws {
        let stores = applications.compactMap(\.fleetStore).map { store in Task { try await store.run() } }
        defer { stores.forEach { $0.cancel() } }
        func serve(_ remaining: ArraySlice<Application>, ports: [Int]) async throws {
            guard let application = remaining.first else { return try await body(ports) }
            try await withRunningServer(application) { port in try await serve(remaining.dropFirst(), ports: ports + [port]) }
        }
        try await serve(applications[...], ports: [])
    }

    @Test("a retry on another replica replays the first answer; the upstream is called once; another body is 422 there too")
    func retryElsewhere() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "7"}"#))
        try await Self.withReplicas([fleet.replica(), fleet.replica(), fleet.replica()]) { ports in
            let first = try #require(await Self.submit(ports[0], key: "K-1"))
            #expect(first.status == 200)
            #expect(first.header("Idempotent-Replayed") == nil)
            for port in ports.dropFirst() {
                let retry = try #require(await Self.submit(port, key: "K-1"))
                #expect(retry.status == 200)
                #expect(retry.header("Idempotent-Replayed") == "true")
                #expect(retry.body == first.body)
                #expect(retry.header("X-Taksi-Variant") == first.header("X-Taksi-Variant"))
            }
            #expect(fleet.upstream.count("/signups/pro") == 1)

            let reused = try #require(await Self.submit(ports[2], key: "K-1", body: #"{"inputs": {"email": "other@b.c"}}"#))
            #expect(reused.status == 422)
            #expect(reused.json?["error"]?["code"] == "idempotency_key_reused")
            // Unkeyed submits are each sent.
            #expect(await Self.submit(ports[1], key: nil)?.status == 200)
            #expect(await Self.submit(ports[1], key: nil)?.status == 200)
            #expect(fleet.upstream.count("/signups/pro") == 3)
        }
        // The store's password is in no line, message or metadata.
        let logged = fleet.log.recorded.map { $0.message + " " + $0.metadata.values.joined(separator: " ") }
        #expect(!logged.contains { $0.contains(PostgresServer.password) })
        try await fleet.remove()
    }

    @Test("a stored answer is checked before it is replayed: a status no HTTP answer has is 503, a header line it forges is dropped")
    func forgedStoredAnswer() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "7"}"#))
        try await Self.withReplicas([fleet.replica(), fleet.replica()]) { ports in
            #expect(await Self.submit(ports[0], key: "K-forged")?.status == 200)
            // Rows changed behind the servers' backs (a restore gone wrong, another program, a person).
            _ = try await fleet.database.sql("UPDATE taksi_submits SET status = -1")
            let negative = try #require(await Self.submit(ports[1], key: "K-forged"), "NIO's status traps on a negative code")
            #expect(negative.status == 503)
            #expect(negative.json?["error"]?["code"] == "store_unavailable")
            _ = try await fleet.database.sql(
                #"""
                UPDATE taksi_submits SET status = 200,
                    headers = '[["X-Forged", "a\r\nSet-Cookie: stolen=1"], ["Bad Name", "x"], ["X-Fine", "ok"]]'
                """#)
            let replayed = try #require(await Self.submit(ports[1], key: "K-forged"))
            #expect(replayed.status == 200)
            #expect(replayed.header("Idempotent-Replayed") == "true")
            #expect(replayed.header("X-Fine") == "ok")
            #expect(replayed.header("Set-Cookie") == nil && replayed.header("X-Forged") == nil && replayed.header("Bad Name") == nil)
        }
        #expect(fleet.upstream.count("/signups/pro") == 1)
        try await fleet.remove()
    }

    @Test("an answer recorded again (its first statement committed, its reply lost) is recorded, not counted as lapsed; a forget is done")
    func recordedAgain() async throws {
        let fleet = try await Fleet()
        var configuration = ServerConfiguration.forTests()
        try configuration.apply(key: "store", value: fleet.database.url, source: "test")
        configuration.store.timeout = 60
        let store = try PostgresFleetStore(settings: configuration.store, window: .seconds(3600), logger: testLogger("store"))
        let running = Task { try await store.run() }
        defer { running.cancel() }
        func claim(_ key: String) async throws -> UUID? {
            guard
                case .claimed(let token) = try await store.claimSubmit(
                    key: key, fingerprint: [1], lease: .seconds(60), window: .seconds(3600))
            else { return nil }
            return token
        }
        let answer = SubmitAnswer(status: .created, headers: [("X-Id", "7")], body: Array("{}".utf8))
        let token = try #require(try await claim("K-again"))
        #expect(try await store.finishSubmit(key: "K-again", token: token, answer: answer))
        #expect(try await store.finishSubmit(key: "K-again", token: token, answer: answer), "the same answer, recorded again")
        #expect(try await store.finishSubmit(key: "K-again", token: UUID(), answer: answer) == false, "another claim's")
        guard
            case .answered(let replayed) = try await store.claimSubmit(
                key: "K-again", fingerprint: [1], lease: .seconds(60), window: .seconds(3600))
        else {
            Issue.record("the answer is replayed")
            return
        }
        #expect(replayed.status == .created && replayed.headers.first?.1 == "7")

        // A forget (an answer of 500 or more is not kept), twice: done, and the key is free again.
        let forgotten = try #require(try await claim("K-forget"))
        #expect(try await store.finishSubmit(key: "K-forget", token: forgotten, answer: nil))
        #expect(try await store.finishSubmit(key: "K-forget", token: forgotten, answer: nil))
        #expect(try await claim("K-forget") != nil)
        try await fleet.remove()
    }

    @Test("a retry while the first still waits on its upstream elsewhere waits for its answer")
    func retryWhileRunning() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .held(#"{"id": "8"}"#))
        let second = TestMetrics()
        try await Self.withReplicas([fleet.replica(), fleet.replica(metrics: second)]) { ports in
            // Every outcome's series exists from the start, at 0 (a ratio needs no `or vector(0)`).
            let series = second.counters(label: "taksi_fleet_submits_total")
            #expect(
                Set(series.compactMap { counter in counter.dimensions.first { $0.0 == "outcome" }?.1 })
                    == ["claimed", "replayed", "waited", "mismatch", "in_progress", "store_unavailable", "unrecorded"])
            #expect(series.allSatisfy { $0.totalValue == 0 })
            async let first = Self.submit(ports[0], key: "K-2")
            await fleet.upstream.waitForRequests(1)
            async let retry = Self.submit(ports[1], key: "K-2")
            // The retry has found the claim running before the upstream answers.
            #expect(await eventually { second.counterTotal(label: "taksi_fleet_submits_total", dimensions: [("outcome", "waited")]) == 1 })
            fleet.upstream.release()
            let (answer, replayed) = await (first, retry)
            #expect(answer?.status == 200)
            #expect(replayed?.status == 200)
            #expect(replayed?.header("Idempotent-Replayed") == "true")
            #expect(replayed?.body == answer?.body)
            #expect(fleet.upstream.count("/signups/pro") == 1)
        }
        try await fleet.remove()
    }

    @Test("a retry that waits past its call's timeout gets 409 submit_in_progress with Retry-After, then the answer")
    func retryGivesUp() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .held(#"{"id": "9"}"#))
        // The second replica serves the action with a 0.3 s timeout (a rollout changed it).
        let hurried = SharedScreens.actions.merging(
            ["signup.yaml": SharedScreens.actions["signup.yaml"]!.replacingOccurrences(of: "timeout: 60", with: "timeout: 0.3")]) { $1 }
        try await Self.withReplicas([fleet.replica(), fleet.replica(files: hurried)]) { ports in
            async let first = Self.submit(ports[0], key: "K-3")
            await fleet.upstream.waitForRequests(1)
            let busy = try #require(await Self.submit(ports[1], key: "K-3"))
            #expect(busy.status == 409)
            #expect(busy.json?["error"]?["code"] == "submit_in_progress")
            #expect(busy.header("Retry-After") == "1")
            #expect(busy.header("Cache-Control") == "no-store")
            fleet.upstream.release()
            #expect(await first?.status == 200)
            let retry = try #require(await Self.submit(ports[1], key: "K-3"))
            #expect(retry.status == 200)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(fleet.upstream.count("/signups/pro") == 1)
        }
        try await fleet.remove()
    }

    @Test("a claim whose replica died mid-submit holds the key for its lease only; an answer of 500 or more is not kept")
    func lapsedClaimAndFailures() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "10"}"#))
        let replica = try fleet.replica()
        try await Self.withReplicas([replica]) { ports in
            // A replica that claimed the key and was killed: its claim's lease runs out.
            let store = try #require(replica.fleetStore)
            let fingerprint = FleetSubmits.fingerprint(contentType: "application/json", forwarded: [], body: Self.body)
            let claim = try await store.claimSubmit(
                key: FleetSubmits.key(path: "signup/pro", action: "submit", clientKey: "K-4"), fingerprint: Array(fingerprint.utf8),
                lease: .milliseconds(200), window: .seconds(3600))
            guard case .claimed = claim else {
                Issue.record("the dead replica's claim was not taken: \(claim)")
                return
            }
            let retry = try #require(await Self.submit(ports[0], key: "K-4"))
            #expect(retry.status == 200)
            #expect(retry.header("Idempotent-Replayed") == nil)
            #expect(fleet.upstream.count("/signups/pro") == 1)

            // 500 from the upstream: not kept, so the retry is sent again.
            fleet.upstream.on("/signups/pro", .status(500))
            #expect(await Self.submit(ports[0], key: "K-5")?.status == 502)
            #expect(await Self.submit(ports[0], key: "K-5")?.status == 502)
            #expect(fleet.upstream.count("/signups/pro") == 3)
        }
        try await fleet.remove()
    }

    @Test("a store down when the replica starts: keyed submits are 503 within store_timeout, then the migrations run when it is back")
    func storeDownAtStart() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "12"}"#))
        try fleet.database.stop()
        try await Self.withReplicas([fleet.replica(storeTimeout: 0.5), fleet.replica()]) { ports in
            let refused = try #require(await Self.submit(ports[0], key: "K-8"))
            #expect(refused.status == 503)
            #expect(refused.json?["error"]?["code"] == "store_unavailable")
            #expect(fleet.upstream.count("/signups/pro") == 0)
            try fleet.database.start()
            var answer: RawResponse?
            for _ in 0..<10 {  // each attempt bounded by store_timeout; a hang guard
                answer = await Self.submit(ports[1], key: "K-8")
                if answer?.status != 503 { break }
            }
            #expect(answer?.status == 200)
            #expect(fleet.upstream.count("/signups/pro") == 1)
        }
        #expect(fleet.log.recorded.contains { $0.message == "store: migrated" && $0.metadata["name"] == "submits" })
        try await fleet.remove()
    }

    @Test("a store that hangs, or a pool with every connection taken, costs a keyed submit store_timeout and a 503, never a hang")
    func hungStoreAndExhaustedPool() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "13"}"#))
        // One connection at most, and quick to give up: asked only while the store hangs.
        let hurried = try fleet.replica(storeTimeout: 0.5, poolSize: 1)
        try await Self.withReplicas([fleet.replica(), hurried]) { ports in
            // Connected before it hangs (a first connection may take longer than 0.5 s on a busy
            // machine: a refused attempt sends nothing; the count is a hang guard).
            var warm: Int?
            for _ in 0..<20 where warm != 200 { warm = await Self.submit(ports[1], key: "K-9")?.status }
            #expect(warm == 200)
            try fleet.database.pause()
            // Three at once on one connection: one waits on the frozen store, two on the pool.
            async let first = Self.submit(ports[1], key: "K-10")
            async let second = Self.submit(ports[1], key: "K-11")
            async let third = Self.submit(ports[1], key: "K-12")
            let answers = await [first, second, third]
            #expect(answers.map { $0?.status } == [503, 503, 503])
            #expect(answers.allSatisfy { $0?.json?["error"]?["code"] == "store_unavailable" })
            #expect(fleet.upstream.count("/signups/pro") == 1)
            try fleet.database.resume()
            // (Not K-10 to K-12: a claim already sent to the frozen store may be carried out when
            // it wakes, and then holds its key for its lease.)
            #expect(await Self.submit(ports[0], key: "K-13")?.status == 200)
            #expect(fleet.upstream.count("/signups/pro") == 2)
        }
        try await fleet.remove()
    }

    @Test("with the store down, a keyed submit is 503 store_unavailable and never sent; the rest is served; it recovers without a restart")
    func storeDown() async throws {
        let fleet = try await Fleet()
        fleet.upstream.on("/signups/pro", .answer(201, #"{"id": "11"}"#))
        // The first replica answers what needs the store; the second, quick to give up on it, is
        // asked only while it is down.
        try await Self.withReplicas([fleet.replica(), fleet.replica(storeTimeout: 1)]) { ports in
            #expect(await Self.submit(ports[0], key: "K-6")?.status == 200)
            try fleet.database.stop()

            let refused = try #require(await Self.submit(ports[1], key: "K-6"))
            #expect(refused.status == 503)
            #expect(refused.json?["error"]?["code"] == "store_unavailable")
            #expect(refused.header("Retry-After") == "5")
            #expect(refused.header("Cache-Control") == "no-store")
            #expect(await Self.submit(ports[1], key: "K-7")?.status == 503)
            #expect(fleet.upstream.count("/signups/pro") == 1, "nothing sent while it cannot be recorded")
            // Unkeyed submits and every GET go on.
            #expect(await Self.submit(ports[1], key: nil)?.status == 200)
            let connection = try RawConnection(port: ports[1])
            connection.send("GET /screens/feed HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            #expect(await connection.receive(1).first?.status == 200)
            #expect(fleet.upstream.count("/signups/pro") == 2)

            try fleet.database.start()
            // The pools reconnect on their own: the retry is replayed, not sent again (each
            // attempt is bounded by store_timeout; the count is a hang guard).
            var replayed: RawResponse?
            for _ in 0..<10 {
                replayed = await Self.submit(ports[0], key: "K-6")
                if replayed?.status != 503 { break }
            }
            #expect(replayed?.status == 200)
            #expect(replayed?.header("Idempotent-Replayed") == "true")
            #expect(await Self.submit(ports[0], key: "K-7")?.status == 200)
            #expect(fleet.upstream.count("/signups/pro") == 3)
        }
        let refusals = fleet.log.recorded.filter { $0.message.contains("the store did not answer") }
        #expect(!refusals.isEmpty)
        #expect(refusals.allSatisfy { !($0.metadata["cause"] ?? "").isEmpty })
        let logged = fleet.log.recorded.map { $0.message + " " + $0.metadata.values.joined(separator: " ") }
        #expect(!logged.contains { $0.contains(PostgresServer.password) })
        try await fleet.remove()
    }
}
