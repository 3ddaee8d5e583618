import NIOHTTP1
import Testing

@testable import TaksiServer

@Suite("Trace context headers")
struct TraceContextHeadersTests {
    static let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// What a request with these headers passes on to the calls it makes, with tracing off.
    func passedOn(_ headers: [(String, String)]) -> [String: String] {
        let correlation = Correlation(requestID: "r", headers: HTTPHeaders(headers))
        return Dictionary(correlation.headers(for: nil).filter { $0.0 != "X-Request-Id" }, uniquingKeysWith: { $1 })
    }

    @Test(
        "a traceparent that is malformed, repeated, of another version or with zero ids is refused, and so is every tracestate beside it",
        arguments: [
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e47é6-00f067aa0ba902b7-01",
            "",
        ])
    func refusedParent(_ parent: String) {
        let context = TraceContextHeaders(HTTPHeaders([("traceparent", parent), ("tracestate", "a=1")]))
        #expect(context.traceParent == nil && context.traceState == nil && context.refused == .traceParent)
        #expect(passedOn([("traceparent", parent), ("tracestate", "a=1")]).isEmpty)
    }

    @Test("two traceparent headers are refused, even when each is valid; none is no refusal")
    func repeatedParent() {
        let context = TraceContextHeaders(HTTPHeaders([("traceparent", Self.parent), ("TraceParent", Self.parent)]))
        #expect(context.refused == .traceParent && context.traceParent == nil)
        let none = TraceContextHeaders(HTTPHeaders([("tracestate", "a=1")]))
        #expect(none.traceParent == nil && none.traceState == nil && none.refused == nil)
    }

    @Test(
        "a tracestate that breaks the grammar is refused whole; the traceparent beside it stands",
        arguments: [
            "a==b", "A=1", "1a=1", "a=caf\u{e9}", "a=1,a=2", "a=", "=1", "a=1,b", "a=x y ,b=\u{1}",
            "tenant@sys-tem-way-too-long=1", "a=" + String(repeating: "v", count: 257), String(repeating: "k", count: 257) + "=1",
            (0..<33).map { "k\($0)=\($0)" }.joined(separator: ","),
        ])
    func refusedState(_ state: String) {
        let context = TraceContextHeaders(HTTPHeaders([("traceparent", Self.parent), ("tracestate", state)]))
        #expect(context.traceParent == Self.parent && context.traceState == nil && context.refused == .traceState)
        #expect(passedOn([("traceparent", Self.parent), ("tracestate", state)]) == ["traceparent": Self.parent])
    }

    @Test("repeated tracestate headers are one list, passed on without the spaces and empty members the grammar allows")
    func normalisedState() {
        let headers = [
            ("traceparent", Self.parent), ("tracestate", " congo=t61rcWkgMzE ,, rojo=00f067aa0ba902b7\t"),
            ("tracestate", "tenant-1@vendor*x=a b/c"),
        ]
        #expect(
            passedOn(headers) == [
                "traceparent": Self.parent, "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,tenant-1@vendor*x=a b/c",
            ])
        #expect(TraceContextHeaders(HTTPHeaders(headers)).refused == nil)
        // An empty list is no list.
        #expect(passedOn([("traceparent", Self.parent), ("tracestate", " , ")]) == ["traceparent": Self.parent])
    }

    @Test("a tracestate over 512 bytes loses its members over 128 bytes first, then members from its end")
    func truncatedState() {
        let long = "long=" + String(repeating: "l", count: 200)
        let members = (0..<12).map { "k\($0)=" + String(repeating: "\($0 % 10)", count: 40) }  // 43 or 44 bytes each
        let state = ([members[0], long] + members[1...]).joined(separator: ",")
        let kept = passedOn([("traceparent", Self.parent), ("tracestate", state)])["tracestate"]
        // All twelve short members and their commas come to 529 bytes: the last one goes too.
        #expect(members.joined(separator: ",").utf8.count == 529)
        #expect(kept == members.prefix(11).joined(separator: ","))
        #expect((kept?.utf8.count ?? 0) <= 512)
        #expect(TraceContextHeaders(HTTPHeaders([("traceparent", Self.parent), ("tracestate", state)])).refused == nil)
    }
}
