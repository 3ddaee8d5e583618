import Foundation
import Logging
import MetricsTestKit
import NIOConcurrencyHelpers
import ServiceLifecycle
import TaksiSchema
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Exposure records as an analyst reads them: one per user and experiment when the user is shown
/// an alternative (by the skeleton, a revalidated skeleton or the data), none for a user outside
/// the experiment, held out, forcing an alternative or after a decision.
@Suite("Exposure records")
struct ExposureTests {
    /// Keeps what it is given.
    final class Kept: ExposureSink {
        let records = NIOLockedValueBox<[ExposureRecorder.Record]>([])
        func write(_ record: ExposureRecorder.Record) { records.withLockedValue { $0.append(record) } }
        var all: [ExposureRecorder.Record] { records.withLockedValue { $0 } }
    }

    /// A clock a test moves.
    final class Clock: Sendable {
        let now = NIOLockedValueBox<Int64>(1_800_000_000_000)
        func advance(seconds: Int64) { now.withLockedValue { $0 += seconds * 1000 } }
        var read: @Sendable () -> Int64 { { self.now.withLockedValue { $0 } } }
    }

    static func files(experiment: String = "") -> [String: [UInt8]] { SharedScreens.experiment(experiment) }

    struct Server {
        let kept = Kept()
        let clock = Clock()
        let metrics = TestMetrics()
        let application: Application

        /// - Parameter collector: where exposure records are exported over OTLP instead of kept here.
        init(experiment: String = "", exportingTo collector: String? = nil) throws {
            let set = try #require(ScreenSetLoader.load(files: ExposureTests.files(experiment: experiment)).screenSet)
            var parts = Application.Parts()
            if let collector {
                let export = try makeExposureExport(
                    endpoint: collector, ServerConfiguration.forTests().tracing, logger: testLogger("test"), metrics: metrics)
                parts.exposureExport = export
                parts.exposures = ExposureRecorder(window: .seconds(3_600), sinks: [export.sink], metrics: metrics)
            } else {
                parts.exposures = ExposureRecorder(window: .seconds(3_600), sinks: [kept], metrics: metrics, clock: clock.read)
            }
            application = buildApplication(
                configuration: .forTests(), screenSet: set, logger: testLogger("test"), metrics: metrics, parts: parts)
        }

        func get(_ uri: String, user: String?, _ headers: [(String, String)] = []) async throws -> TestResponse {
            try await application.execute(uri: uri, headers: (user.map { [("X-Taksi-User", $0)] } ?? []) + headers)
        }

        func count(_ result: String) throws -> Int {
            Int(try metrics.expectCounter("taksi_exposures_total", [("result", result)]).totalValue)
        }
    }

    @Test("the skeleton, its revalidation and the data of one user in one window are one record, with what an analyst joins on")
    func oneRecordPerUser() async throws {
        let server = try Server()
        let users = (0..<200).map { "user-\($0)" }
        // Over the real server: the request id is the connection's.
        try await server.application.test(.live) { client in
            for user in users {
                let headers = [("X-Taksi-User", user)]
                let skeleton = try await client.execute(
                    uri: "/screens/landing", headers: headers + [("X-Request-Id", "skeleton-\(user)"), ("X-Taksi-Version", "3.1")])
                #expect(skeleton.status == .ok)
                let tag = try #require(skeleton.header("ETag"))
                #expect(
                    try await client.execute(uri: "/screens/landing", headers: headers + [("If-None-Match", tag)]).status == .notModified)
                let revision = try #require(skeleton.header("X-Taksi-Skeleton"))
                let data = try await client.execute(uri: "/screens/landing/data", headers: headers + [("X-Taksi-Skeleton", revision)])
                #expect(data.status == .ok)
            }
        }
        let records = server.kept.all
        #expect(records.count == users.count, "\(records.count)")
        #expect(Set(records.map(\.user)) == Set(users))
        let experiment = try #require(server.application.store.snapshot.screenSet.screens["landing"]?.versions.first?.experiment)
        for record in records {
            #expect(record.alternative == experiment.alternative(forUser: record.user))
            #expect(record.experiment == "landing-cta" && record.screen == "landing" && record.variant == "landing|*|\(record.alternative)")
            #expect(record.requestID == "skeleton-\(record.user)" && record.appVersion == "3.1" && record.time == 1_800_000_000_000)
        }
        #expect(Set(records.map(\.alternative)) == ["default", "B"])
        #expect(try server.count("recorded") == 200 && server.count("repeated") == 400)
        // Past the window, the next one is recorded again.
        server.clock.advance(seconds: 3_600)
        _ = try await server.get("/screens/landing", user: "user-1")
        #expect(server.kept.all.count == 201 && server.kept.all.last?.time == 1_800_003_600_000)
    }

    @Test("data for the skeleton the app holds from a cache records the user; data for another variant's skeleton does not")
    func dataRecords() async throws {
        let server = try Server()
        let experiment = try #require(server.application.store.snapshot.screenSet.screens["landing"]?.versions.first?.experiment)
        let inB = try #require((0..<100).map { "u\($0)" }.first { experiment.alternative(forUser: $0) == "B" })
        let revisions = try #require(
            server.application.store.snapshot.screens["landing"]?.served.values.map { ($0.compiled.alternative, $0.revision.digest) })
        let revision = Dictionary(uniqueKeysWithValues: revisions)
        // The app holds default's skeleton (cached before the experiment, say): its data is default's, no exposure.
        let held = try await server.get("/screens/landing/data", user: inB, [("X-Taksi-Skeleton", try #require(revision["default"]))])
        #expect(held.header("X-Taksi-Variant") == "landing|*|default")
        #expect(server.kept.all.isEmpty)
        // B's skeleton from a cache: its data request records the exposure.
        _ = try await server.get("/screens/landing/data", user: inB, [("X-Taksi-Skeleton", try #require(revision["B"]))])
        #expect(server.kept.all.map(\.alternative) == ["B"])
    }

    @Test("a platform that is no platform name is left out of the record (which is kept) and counted; a name is kept as sent")
    func platforms() async throws {
        let server = try Server()
        let sent = ["ios", "Android_TV-2.0", String(repeating: "p", count: 33), "ios<script>", "tvOS 17", "ü", ""]
        try await server.application.test(.live) { client in
            for (index, platform) in sent.enumerated() {
                let response = try await client.execute(
                    uri: "/screens/landing", headers: [("X-Taksi-User", "user-\(index)"), ("X-Taksi-Platform", platform)])
                #expect(response.status == .ok)
            }
        }
        let recorded = Dictionary(uniqueKeysWithValues: server.kept.all.map { ($0.user, $0.platform) })
        #expect(recorded.count == sent.count, "every exposure is recorded")
        #expect(recorded["user-0"] == "ios" && recorded["user-1"] == "Android_TV-2.0")
        #expect((2..<sent.count).allSatisfy { recorded["user-\($0)"] == .some(nil) }, "\(recorded)")
        #expect(try server.metrics.expectCounter("taksi_exposure_platforms_refused_total").totalValue == sent.count - 2)
    }

    @Test("a prefetch (Sec-Purpose or Purpose: prefetch) records nobody: the person has not seen the screen; the same skeleton shown does")
    func prefetchNotRecorded() async throws {
        let server = try Server()
        let prefetched = try await server.get("/screens/landing", user: "ada", [("Sec-Purpose", "prefetch")])
        #expect(prefetched.status == .ok)
        _ = try await server.get("/screens/landing", user: "bob", [("Purpose", "prefetch")])
        #expect(server.kept.all.isEmpty)
        let shown = try await server.get("/screens/landing", user: "ada")
        #expect(shown.body == prefetched.body, "the same skeleton, counted like any")
        #expect(server.kept.all.map(\.user) == ["ada"])
    }

    @Test("nobody is recorded without a user id, forcing an alternative, or with an id that cannot be recorded")
    func notRecorded() async throws {
        let server = try Server()
        _ = try await server.get("/screens/landing", user: nil)
        _ = try await server.get("/screens/landing", user: "qa", [("X-Taksi-Alternative", "B")])
        _ = try await server.get("/screens/landing", user: String(repeating: "x", count: 257))
        _ = try await server.get("/screens/landing", user: "tab\there")
        #expect(server.kept.all.isEmpty)
        #expect(try server.count("unrecordable") == 2)
    }

    @Test("the holdout, the rollout and the audience: only users who see an alternative are recorded, and each once")
    func whoIsIn() async throws {
        let server = try Server(experiment: "  holdout: 10\n  rollout: 30\n  audience: {platforms: [ios]}")
        let screen = try #require(server.application.store.snapshot.screenSet.screens["landing"])
        let experiment = try #require(screen.versions.first?.experiment)
        var expected: Set<String> = []
        for index in 0..<2_000 {
            let user = "user-\(index)"
            let platform = index % 4 == 0 ? "android" : "ios"
            let response = try await server.get("/screens/landing", user: user, [("X-Taksi-Platform", platform)])
            #expect(response.header("Vary") == "X-Taksi-Alternative, X-Taksi-User, X-Taksi-Platform, Accept-Encoding")
            let assignment = experiment.assignment(for: .init(user: user, platform: platform))
            #expect(response.header("X-Taksi-Variant") == "landing|*|\(assignment.alternative)")
            if case .exposed = assignment { expected.insert(user) }
        }
        let records = server.kept.all
        #expect(records.count == expected.count && Set(records.map(\.user)) == expected)
        #expect(records.allSatisfy { $0.platform == "ios" })
        // About 30% of the three quarters on iOS.
        #expect(expected.count > 300 && expected.count < 600, "\(expected.count)")
    }

    @Test("a winner edit moves every user at the reload, and nobody is recorded after it")
    func winner() async throws {
        let server = try Server()
        let users = (0..<500).map { "user-\($0)" }
        for user in users { _ = try await server.get("/screens/landing", user: user) }
        let before = server.kept.all.count
        let decided = try #require(ScreenSetLoader.load(files: Self.files(experiment: "  winner: B")).screenSet)
        server.application.store.replace(with: decided)
        for user in users + ["newcomer"] {
            let response = try await server.get("/screens/landing", user: user)
            #expect(response.header("X-Taksi-Variant") == "landing|*|B")
            #expect(response.header("Vary") == "X-Taksi-Alternative, Accept-Encoding", "a decided experiment does not vary by user")
        }
        #expect(server.kept.all.count == before)
        let index = try await server.get("/screens", user: nil)
        let entry = index.json?["screens"]?.arrayValue?.first { $0["name"] == "landing" }?["experiments"]?.arrayValue?.first
        #expect(entry?["status"] == "winner" && entry?["winner"] == "B", "\(String(describing: entry))")
    }

    @Test("the application records to its log: one `exposure` line with the record's fields, whatever the log level")
    func logLines() async throws {
        let log = LogRecorder()
        let set = try #require(ScreenSetLoader.load(files: Self.files()).screenSet)
        var logger = log.logger
        logger.logLevel = .error
        let application = buildApplication(configuration: .forTests(), screenSet: set, logger: logger, metrics: TestMetrics())
        for _ in 0..<3 {
            _ = try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-User", "ada"), ("X-Taksi-Platform", "ios")])
        }
        let lines = log.recorded.filter { $0.message == "exposure" }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.level == .info)
        #expect(line.metadata["experiment"] == "landing-cta" && line.metadata["user"] == "ada" && line.metadata["platform"] == "ios")
        #expect(line.metadata["screen"] == "landing" && line.metadata["alternative"] != nil && line.metadata["request_id"] != nil)
    }

    @Test(
        "records a collector does not take are counted export_failed: a collector that answers 400, and the exporter's messages about batches it lost"
    )
    func exportFailuresCounted() async throws {
        let collector = try await TestUpstream()
        defer { Task { try? await collector.stop() } }
        collector.on("/v1/logs", .status(400))  // not retried: the batch is lost
        let server = try Server(exportingTo: collector.baseURL)
        let application = server.application
        let exporter = try #require(application.exposureExporter)
        let exporting = ServiceGroup(services: [exporter], gracefulShutdownSignals: [], logger: testLogger("otel"))
        let running = Task { try await exporting.run() }
        for user in (0..<50).map({ "user-\($0)" }) {
            #expect(try await application.execute(uri: "/screens/landing", headers: [("X-Taksi-User", user)]).status == .ok)
        }
        let recorded = try server.count("recorded")
        #expect(recorded > 0)
        #expect(await eventually { (try? server.count("export_failed")) == recorded }, "every record handed over was lost")
        #expect(collector.count("/v1/logs") > 0)
        await exporting.triggerGracefulShutdown()
        try await running.value

        // What swift-otel says of the records it lost, as it says it: the batch's size in the
        // logger's metadata, a queue's dropped count and a collector's rejections in the message's.
        func lost(_ message: String, handler: Logger.Metadata = [:], _ metadata: Logger.Metadata = [:]) -> Int {
            ExposureExportFailures.lost(
                in: LogEvent(level: .warning, message: "\(message)", metadata: metadata, source: "OTel", file: "", function: "", line: 0),
                metadata: handler)
        }
        #expect(lost("Failed to export batch.", handler: ["batch_size": "12", "batch_id": "3"]) == 12)
        #expect(lost("Log records were dropped this iteration because queue was full", ["dropped_count": "7"]) == 7)
        #expect(lost("Partial success", ["rejected_log_records": "2", "message": "bad"]) == 2)
        #expect(lost("Exported batch.", handler: ["batch_size": "12"]) == 0)
        #expect(lost("Failed to export batch.", handler: ["batch_size": "many"]) == 0, "a size that is no number counts nothing")
        #expect(lost("Failed to export batch.", handler: ["batch_size": "-4"]) == 0)
    }
}
