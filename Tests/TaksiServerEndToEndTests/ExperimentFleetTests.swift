import Foundation
import MetricsTestKit
import ServiceLifecycle
import Synchronization
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

@testable import TaksiPostgres

#if canImport(Glibc)
import Glibc
#endif

/// An experiment as a team runs it in production: two replicas sharing a real PostgreSQL, one
/// behind a real Varnish with the shipped VCL, exposure records exported over OTLP/HTTP to a real
/// receiver, and 10,000 users whose requests land on either replica (some answered by Varnish).
@Suite(
    "Experiments across a fleet",
    .enabled(if: PostgresServer.isAvailable, "needs PostgreSQL (apt-get install postgresql)"),
    .enabled(if: pythonHas("opentelemetry.proto"), "needs python3 -m pip install opentelemetry-proto (.ci/run installs it)")
)
struct ExperimentFleetTests {
    static let userCount = 10_000

    /// `landing` runs the experiment (for iOS and Android: 10% held out, 50% in);
    /// `about` has none, so Varnish keeps it.
    static func screens(decision: String = "") -> [String: [UInt8]] {
        var files = SharedScreens.experiment("  audience: {platforms: [ios, android]}\n  holdout: 10\n  rollout: 50\n" + decision)
        files["about.yaml"] = Array(
            "name: about\nentry: true\ncomponents:\n  - {name: label_component, identifier: t, content: {value: About}}\n".utf8)
        return files
    }

    /// One replica: the store shared, exposures exported to `receiver`, purging `varnish` if given.
    static func replica(
        database: PostgresServer, receiver: TracingTests.Receiver, varnish: VarnishServer?, log: LogRecorder
    ) throws -> Application {
        let screenSet = try #require(ScreenSetLoader.load(files: screens()).screenSet)
        var configuration = ServerConfiguration.forTests()
        try configuration.apply(key: "store", value: database.url, source: "test")
        configuration.store.timeout = 60
        if let varnish { configuration.cdn = CDNSettings(skeletonSharedMaxAge: 3600, targets: [.varnish([varnish.url])]) }
        let metrics = TestMetrics()
        var parts = Application.Parts()
        parts.fleetStore = try PostgresFleetStore(settings: configuration.store, window: .seconds(3600), logger: testLogger("store"))
        parts.exposureExport = try makeExposureExport(
            endpoint: "http://127.0.0.1:\(receiver.port)", configuration.tracing, logger: log.logger, metrics: metrics)
        return buildApplication(configuration: configuration, screenSet: screenSet, logger: log.logger, metrics: metrics, parts: parts)
    }

    /// Which user is which: a platform by number, so a quarter is outside the audience.
    static func platform(_ index: Int) -> String { ["ios", "android", "web", "ios"][index % 4] }

    @Test("the store keeps a user's exposure window only while it decides: windows past exposure_window are deleted by the housekeeping")
    func exposureWindowsPruned() async throws {
        let database = try PostgresServer()
        defer { database.remove() }
        var configuration = ServerConfiguration.forTests()
        try configuration.apply(key: "store", value: database.url, source: "test")
        configuration.store.timeout = 60
        let store = try PostgresFleetStore(settings: configuration.store, window: .seconds(3600), logger: testLogger("store"))
        let running = Task { try await store.run() }
        defer { running.cancel() }
        func record(_ users: [String], window: Duration) async throws -> Int {
            let records = users.map {
                ExposureRecorder.Record(
                    experiment: "e", alternative: "B", user: $0, screen: "landing", variant: "landing|*|B", requestID: "r")
            }
            return try await store.recordExposures(records, window: window).count
        }
        func windows() async throws -> String { try await database.sql("SELECT count(*) FROM taksi_exposure_windows") }
        #expect(try await store.pruneExposureWindows() == 0, "nothing recorded, no window known: nothing to do")
        #expect(try await record(["a", "b", "c"], window: .seconds(3600)) == 3)
        #expect(try await store.pruneExposureWindows() == 0, "within the hour: each still decides")
        #expect(try await windows() == "3")
        // A window of nothing: every row written before this statement has ended.
        #expect(try await record(["d"], window: .zero) == 1)
        #expect(try await store.pruneExposureWindows() == 4)
        #expect(try await windows() == "0")
        #expect(try await database.sql("SELECT count(*) FROM taksi_exposures") == "4", "the records themselves are the analysts'")
    }

    @Test(
        "10,000 users over two replicas and Varnish: each one shown an alternative is recorded once in the collector and in the store, nobody else; a winner moves everyone at the reload"
    )
    func tenThousandUsers() async throws {
        guard VarnishServer.isAvailable else {
            print("skipped: Varnish is not installed (apt-get install varnish varnish-modules)")
            return
        }
        let database = try PostgresServer()
        defer { database.remove() }
        let receiver = try TracingTests.Receiver()
        let vcl = try CDNTests.vcl()
        let varnish = try VarnishServer(vcl: vcl)
        defer { varnish.stop() }
        let log = LogRecorder()
        let first = try Self.replica(database: database, receiver: receiver, varnish: varnish, log: log)
        let second = try Self.replica(database: database, receiver: receiver, varnish: nil, log: log)
        let exporters = ServiceGroup(
            services: [first, second].compactMap(\.exposureExporter), gracefulShutdownSignals: [], logger: testLogger("otel"))
        let exporting = Task { try await exporters.run() }
        let experiment = try #require(first.store.snapshot.screenSet.screens["landing"]?.versions.first?.experiment)
        let expected = (0..<Self.userCount).reduce(into: [String: String]()) { expected, index in
            if case .exposed(let alternative) = experiment.assignment(for: .init(user: "user-\(index)", platform: Self.platform(index))) {
                expected["user-\(index)"] = alternative
            }
        }

        try await FleetSubmitTests.withReplicas([first, second]) { ports in
            try varnish.use(vcl, backendPort: ports[0])
            // Eight clients at once, each a user at a time on connections it keeps: one to Varnish
            // (in front of the first replica), one to the second replica.
            let hits = Counted()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        let cdn = try Client(port: varnish.port)
                        let direct = try Client(port: ports[1])
                        for index in stride(from: lane, to: Self.userCount, by: 8) {
                            let headers = [("X-Taksi-User", "user-\(index)"), ("X-Taksi-Platform", Self.platform(index))]
                            // The skeleton through Varnish or straight to the second replica, then
                            // again (the app's revalidation), then its data from the other side.
                            let (skeletonSide, dataSide) = index % 2 == 0 ? (cdn, direct) : (direct, cdn)
                            let skeleton = try #require(await skeletonSide.request("/screens/landing", headers: headers))
                            #expect(skeleton.status == 200)
                            #expect(skeleton.header("Cache-Control")?.hasPrefix("private,") == true)
                            let tag = try #require(skeleton.header("ETag"))
                            #expect(
                                await skeletonSide.request("/screens/landing", headers: headers + [("If-None-Match", tag)])?.status == 304)
                            let revision = try #require(skeleton.header("X-Taksi-Skeleton"))
                            let data = await dataSide.request("/screens/landing/data", headers: headers + [("X-Taksi-Skeleton", revision)])
                            #expect(data?.status == 200)
                            #expect(skeleton.header("X-Taksi-Variant") == "landing|*|\(expected["user-\(index)"] ?? "default")")
                            // A screen without an experiment, answered by Varnish after its first miss.
                            if index % 10 == 0, await cdn.request("/screens/about", headers: headers)?.header("X-Cache") == "hit" {
                                hits.add()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(hits.value >= Self.userCount / 10 - 8, "Varnish answered \(hits.value) of the about screen's requests")
            await first.exposures.writes.idle()
            await second.exposures.writes.idle()

            // A winner, at one reload of each replica: every user gets B at once, by either way.
            let decided = try #require(ScreenSetLoader.load(files: Self.screens(decision: "  winner: B")).screenSet)
            first.store.replace(with: decided)
            second.store.replace(with: decided)
            await first.purger?.idle()
            let cdn = try Client(port: varnish.port)
            let direct = try Client(port: ports[1])
            for index in stride(from: 0, to: Self.userCount, by: 7) {
                let headers = [("X-Taksi-User", "user-\(index)"), ("X-Taksi-Platform", Self.platform(index))]
                for side in [cdn, direct] {
                    let response = await side.request("/screens/landing", headers: headers)
                    #expect(response?.header("X-Taksi-Variant") == "landing|*|B", "user-\(index)")
                }
            }
            await first.exposures.writes.idle()
            await second.exposures.writes.idle()
        }
        await exporters.triggerGracefulShutdown()
        try await exporting.value

        // The store took every batch (a failed one goes to the collector alone, and another
        // replica's record of the same user then makes two there).
        let failures = log.lines(atLeast: .warning).filter { $0.message.contains("store") }
        #expect(failures.isEmpty, "\(failures.map { "\($0.message) \($0.metadata)" }.prefix(3))")

        // The collector: one record per exposed user, with the alternative they were shown.
        let logs = try await receiver.spans().filter { $0["signal"] == "log" }
        var collected: [String: [String]] = [:]
        for record in logs {
            #expect(record["body"] == "exposure")
            guard let user = record["attributes"]?["user"]?.stringValue, let alternative = record["attributes"]?["alternative"]?.stringValue
            else {
                Issue.record("a record without user or alternative: \(record)")
                continue
            }
            collected[user, default: []].append(alternative)
        }
        #expect(collected.count == expected.count, "\(collected.count) users in the collector, \(expected.count) exposed")
        #expect(
            collected.filter { $0.value.count != 1 }.isEmpty,
            "users recorded more than once: \(collected.filter { $0.value.count != 1 }.prefix(5))")
        #expect(collected.mapValues { $0[0] } == expected)

        // The store: the same, one row each.
        let rows = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "psql", database.url, "-At", "-F", ",", "-c",
                "SELECT user_id, alternative, platform FROM taksi_exposures WHERE experiment = 'landing-cta'",
            ])
        #expect(rows.status == 0, "\(rows.error)")
        let stored = rows.output.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        #expect(stored.count == expected.count)
        #expect(Dictionary(stored.map { ($0[0], $0[1]) }, uniquingKeysWith: { a, _ in a }) == expected)
        #expect(stored.allSatisfy { $0.count == 3 && $0[2] != "web" })
        // About 45% of the three quarters in the audience.
        #expect(expected.count > 2_800 && expected.count < 4_000, "\(expected.count)")
    }

    /// An HTTP client on one connection it keeps, opening another when the server closes it
    /// (after `max_requests_per_connection`): every request here is a GET, which may be sent again.
    final class Client {
        let port: Int
        var connection: RawConnection

        init(port: Int) throws {
            self.port = port
            connection = try RawConnection(port: port)
        }

        func request(_ target: String, headers: [(String, String)]) async -> RawResponse? {
            if let response = await connection.request(target, headers: headers) {
                if response.header("Connection")?.lowercased() == "close", let fresh = try? RawConnection(port: port) { connection = fresh }
                return response
            }
            guard let fresh = try? RawConnection(port: port) else { return nil }
            connection = fresh
            return await connection.request(target, headers: headers)
        }
    }

    /// A count several tasks add to.
    final class Counted: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}
