import Foundation
import Logging
import MetricsTestKit
import NIOCore
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The buffered access log over a real socket: its two formats, what it leaves out and escapes,
/// reopening after a rotation, dropping when the writer falls behind, and SIGHUP in the binary.
@Suite("Access log")
struct AccessLogTests {
    static func temporaryDirectory() throws -> URL {
        let directory = Scratch.path("access")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func lines(_ file: URL) -> [String] {
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Runs `body` with a server over the fixture screens whose access log goes to `file`.
    static func withLoggingServer(
        format: ServerConfiguration.LogFormat, file: URL, _ body: (Int, HTTPServer) async throws -> Void
    ) async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.upstreams = fixtureUpstreams
        configuration.accessLogFormat = format
        configuration.accessLogOutput = .file(file.path)
        let application = buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: testLogger("test"))
        try await application.test(.live) { client in
            let live = try #require(client as? LiveClient)
            try await body(try #require(live.port), try #require(live.server))
        }
    }

    @Test("a text line per request: time, method, path without its query, status, bytes, duration, variant, id")
    func text() async throws {
        let file = try Self.temporaryDirectory().appendingPathComponent("access.log")
        try await Self.withLoggingServer(format: .text, file: file) { port, server in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/login?token=secret HTTP/1.1\r\nHost: a\r\nX-Request-Id: q\"1\r\n\r\n")
            connection.send("GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n")
            let responses = await connection.receive(2)
            #expect(responses.map(\.status) == [200, 404])
            await server.flushAccessLog()
            let lines = Self.lines(file)
            try #require(lines.count == 2, "\(lines)")
            let first = try #require(
                try /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET \/screens\/login 200 (\d+) \d+\.\d{3}ms variant=(\S+) id=q%221$/
                    .wholeMatch(in: lines[0]))
            #expect(Int(first.1) ?? 0 > 100, "bytes written, head and body")
            #expect(first.2 == "login|*|default")
            #expect(!lines[0].contains("secret"), "the query may hold a user's values")
            let generated = try #require(responses[1].header("X-Request-Id"))
            #expect(
                lines[1].hasSuffix(
                    " GET /nowhere 404 \(lines[1].split(separator: " ")[4]) \(lines[1].split(separator: " ")[5]) variant=- id=\(generated)")
            )
        }
    }

    @Test("a JSON line per request, each value typed, and a rotated file is reopened")
    func jsonAndReopen() async throws {
        let directory = try Self.temporaryDirectory()
        let file = directory.appendingPathComponent("access.log")
        try await Self.withLoggingServer(format: .json, file: file) { port, server in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/login HTTP/1.1\r\nHost: a\r\nX-Request-Id: one\r\n\r\n")
            _ = await connection.receive(1)
            await server.flushAccessLog()

            // A rotator moves the file away, then signals; new lines go to a new file.
            let rotated = directory.appendingPathComponent("access.log.1")
            try FileManager.default.moveItem(at: file, to: rotated)
            await server.reopenAccessLog()
            connection.send("HEAD /screens/login HTTP/1.1\r\nHost: a\r\nX-Request-Id: two\r\n\r\n")
            _ = await connection.receive(1, headRequests: [0])
            await server.flushAccessLog()

            let old = Self.lines(rotated).compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            let new = Self.lines(file).compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            try #require(old.count == 1 && new.count == 1, "\(Self.lines(rotated)) \(Self.lines(file))")
            let record = old[0]
            // The Elastic Common Schema's layout, as the application log's JSON lines.
            #expect(record["event.dataset"] == "taksi.access")
            #expect(record["log.level"] == "info")
            #expect(record["ecs.version"] == "8.11.0")
            #expect(record["http.request.method"] == "GET")
            #expect(record["url.path"] == "/screens/login")
            #expect(record["http.response.status_code"] == 200)
            #expect(record["http.request.id"] == "one")
            #expect(record["taksi.variant"] == "login|*|default")
            #expect(record["http.response.body.bytes"]?.numberValue ?? 0 > 100)
            #expect(record["event.duration"]?.numberValue.map { $0 >= 0 && $0 == $0.rounded() } == true, "whole nanoseconds")
            #expect(record["@timestamp"]?.stringValue?.hasSuffix("Z") == true)
            #expect(new[0]["http.request.method"] == "HEAD" && new[0]["http.request.id"] == "two")
        }
    }

    @Test("the application log's JSON lines have the access log's layout (ECS): a level on each, typed values, ECS names for ids")
    func applicationLogLayout() throws {
        let file = try Self.temporaryDirectory().appendingPathComponent("app.log")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        var logger = Logger(label: "taksi-server") { LineLogHandler(label: $0, format: .json, output: handle) }
        logger[metadataKey: "request_id"] = "9f3c-1"
        logger.warning(
            "upstream failed", metadata: ["count": .stringConvertible(3), "ratio": .stringConvertible(0.5), "cause": "refused"])
        try handle.close()
        let lines = Self.lines(file)
        try #require(lines.count == 1, "\(lines)")
        let record = try JSONDecoder().decode(JSONValue.self, from: Data(lines[0].utf8))
        #expect(record["@timestamp"]?.stringValue?.hasSuffix("Z") == true)
        #expect(record["log.level"] == "warning")
        #expect(record["ecs.version"] == "8.11.0")
        #expect(record["message"] == "upstream failed")
        #expect(record["service.name"] == "taksi-server")
        #expect(record["http.request.id"] == "9f3c-1", "the access log's name for it")
        #expect(record["taksi.count"] == 3, "a number stays a number")
        #expect(record["taksi.ratio"] == 0.5)
        #expect(record["taksi.cause"] == "refused")
        #expect(lines[0].hasPrefix(#"{"@timestamp":"#), "the time first, as in the access log")
    }

    @Test("when the writer is behind, lines are dropped and counted, and serving goes on")
    func drops() async throws {
        let file = try Self.temporaryDirectory().appendingPathComponent("access.log")
        let metrics = TestMetrics()
        // Nothing may wait: every chunk is over the limit, as when the writer is far behind.
        let log = try AccessLog(
            format: .text, output: .file(file.path), maxPendingBytes: 0, metrics: metrics, logger: testLogger("test"))
        let start = { (group: MultiThreadedEventLoopGroup) in
            try await HTTPServer.start(
                host: "127.0.0.1", port: 0, group: group, responder: fixtureApplication().responder, accessLog: log,
                logger: testLogger("test"))
        }
        try await withServer(start: start) { server, _ in
            let connection = try RawConnection(port: try #require(server.port))
            for _ in 0..<3 { connection.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n") }
            #expect(await connection.receive(3).map(\.status) == [200, 200, 200])
            await server.flushAccessLog()
            #expect(Self.lines(file).isEmpty)
            #expect(metrics.counterTotal(label: "taksi_access_log_dropped_lines_total") == 3)
        }
    }

    @Test("an access log file that cannot be opened stops start-up with the path and the fix")
    func unopenable() async throws {
        let path = "/nonexistent-\(UUID().uuidString)/access.log"
        #expect(throws: AccessLog.OpenError.self) {
            try AccessLog(format: .text, output: .file(path), metrics: TestMetrics(), logger: testLogger("test"))
        }
        do {
            _ = try AccessLog(format: .text, output: .file(path), metrics: TestMetrics(), logger: testLogger("test"))
        } catch {
            #expect(error.description.contains(path) && error.description.contains("access_log_output"))
        }
    }

    @Test("the binary reopens its access log file on SIGHUP, as log rotators expect, and writes the rest on SIGTERM")
    func sighup() async throws {
        let directory = try Self.temporaryDirectory()
        try FileManager.default.copyItem(at: fixtureScreensDirectory, to: directory.appendingPathComponent("Screens"))
        let file = directory.appendingPathComponent("access.log")
        let (process, reader, port) = try await startServerProcess(
            [
                "serve", "--screens", directory.appendingPathComponent("Screens").path, "--port", "0", "--no-watch", "--log-format", "json",
                "--access-log-output", file.path, "--access-log-format", "text", "--threads", "1",
            ],
            environment: ["TAKSI_UPSTREAM_CITYBIKES": fixtureUpstreams["citybikes"]!, "TAKSI_UPSTREAM_GITHUB": fixtureUpstreams["github"]!]
        )
        let connection = try RawConnection(port: port)
        connection.send("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: before\r\n\r\n")
        _ = await connection.receive(1)

        let rotated = directory.appendingPathComponent("access.log.1")
        try FileManager.default.moveItem(at: file, to: rotated)
        kill(process.processIdentifier, SIGHUP)
        // The reopen is logged once the lines handed over before it are written to the old file.
        var reopened = false
        while !reopened, let line = await reader.nextLine() {
            reopened = (try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)))?["message"] == "access log reopened"
        }
        #expect(reopened)
        // On a new connection: on a busy machine the first one may have sat idle past
        // idle_timeout (60 s) by now, closed by the server, and the request would get no answer.
        let later = try RawConnection(port: port)
        later.send("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: after\r\n\r\n")
        #expect(await later.receive(1).first?.status == 200)
        kill(process.processIdentifier, SIGTERM)
        var logged: [String] = []
        while let line = await reader.nextLine() { logged.append(line) }
        await exited(process)
        #expect(process.terminationStatus == 0)
        // With the server's own log in the message: what it said of the reopen and the shutdown.
        #expect(
            Self.lines(file).count == 1 && Self.lines(file).first?.hasSuffix(" id=after") == true,
            "\(Self.lines(file)) \(Self.lines(rotated)) \(logged)")
        #expect(!Self.lines(rotated).contains { $0.hasSuffix(" id=after") })
    }
}
