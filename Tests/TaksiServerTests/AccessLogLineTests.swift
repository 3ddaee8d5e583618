import Foundation
import MetricsTestKit
import NIOCore
import TaksiSchema
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// One event loop's access log buffer, line by line: what each format writes of values that must
/// be escaped, and of numbers at their bounds.
@Suite("Access log lines")
struct AccessLogLineTests {
    /// The lines `record` calls write in `format`.
    static func lines(_ format: ServerConfiguration.LogFormat, _ record: (AccessLogBuffer) -> Void) async throws -> [String] {
        let directory = Scratch.path("access-lines")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("\(UUID().uuidString).log")
        let log = try AccessLog(format: format, output: .file(file.path), metrics: TestMetrics(), logger: testLogger("test"))
        let buffer = log.makeBuffer()
        record(buffer)
        buffer.handOver()
        await log.written()
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// A path with a quote, a backslash, a space, a tab, a newline and UTF-8; a variant with `|`;
    /// an id given with a quote; the largest numbers, and a negative duration (clamped to zero).
    static func recordHostile(_ buffer: AccessLogBuffer) {
        buffer.record(
            method: "GET", uri: "/screens/a\"b\\c d\te\nf/caf\u{e9}?q=secret", status: 404, bytes: Int.max,
            duration: .nanoseconds(-5), variant: "a|*|default"
        ) { $0.writeString("id\"1") }
        buffer.record(
            method: "M-SEARCH", uri: "*", status: 200, bytes: 0, duration: .nanoseconds(1_234_567_891), variant: nil
        ) { $0.writeString("x") }
    }

    @Test("text: a value that is not visible ASCII, or is a quote or a backslash, is %XX; numbers are whole")
    func text() async throws {
        let lines = try await Self.lines(.text, Self.recordHostile)
        try #require(lines.count == 2, "\(lines)")
        let first = try #require(try /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (.*)$/.wholeMatch(in: lines[0])).1
        #expect(first == "GET /screens/a%22b%5Cc%20d%09e%0Af/caf%C3%A9 404 9223372036854775807 0.000ms variant=a|*|default id=id%221")
        let second = try #require(try /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (.*)$/.wholeMatch(in: lines[1])).1
        #expect(second == "M-SEARCH * 200 0 1234.567ms variant=- id=x")
    }

    @Test("JSON: each line parses, with the values as they were escaped and the numbers typed")
    func json() async throws {
        let lines = try await Self.lines(.json, Self.recordHostile)
        try #require(lines.count == 2, "\(lines)")
        let first = try JSONDecoder().decode(JSONValue.self, from: Data(lines[0].utf8))
        #expect(first["url.path"] == "/screens/a%22b%5Cc%20d%09e%0Af/caf%C3%A9")
        #expect(first["http.response.body.bytes"]?.numberValue == Double(Int.max))
        #expect(first["event.duration"] == 0)
        #expect(first["taksi.variant"] == "a|*|default")
        #expect(first["http.request.id"] == "id%221")
        #expect(first["@timestamp"]?.stringValue?.count == 24)
        let second = try JSONDecoder().decode(JSONValue.self, from: Data(lines[1].utf8))
        #expect(second["http.request.method"] == "M-SEARCH" && second["url.path"] == "*")
        #expect(second["event.duration"] == 1_234_567_891 && second["taksi.variant"] == nil)
    }
}
