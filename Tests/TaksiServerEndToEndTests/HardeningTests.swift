import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// What a deployment, a CDN, an upstream or a hostile client can do, over real sockets where it
/// is about HTTP. Each test failed before the fix it guards. Screens of their own, not the examples.
@Suite("Hardening")
struct HardeningTests {
    static let screens: [String: String] = [
        "start.json":
            #"{"name": "start", "entry": true, "components": [{"name": "label_component", "identifier": "t", "content": {"value": "Hi"}}]}"#,
        "versioned.json":
            #"{"name": "versioned", "entry": true, "version": ">= 2.0", "components": [{"name": "label_component", "identifier": "t", "content": {"value": "new"}}]}"#,
        "versioned-old.json":
            #"{"name": "versioned", "version": "< 2.0", "components": [{"name": "label_component", "identifier": "t", "content": {"value": "old"}}]}"#,
        // A timeout that is a hang guard: an upstream that answers must be waited for however
        // busy the machine is (0.5 s failed the redirects test under a parallel build).
        "stations.json": """
        {"name": "stations", "entry": true,
         "sources": {"api": {"type": "http", "upstream": "api", "path": "/networks/{network}", "timeout": 60, "stale_if_error": 0,
           "parameters": {"network": {"type": "string", "required": true}}}},
         "components": [{"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "api.name"}}}]}
        """,
        // A short timeout, where the test is that it fires (a busy machine only fires it sooner).
        "stalled.json": """
        {"name": "stalled", "entry": true,
         "sources": {"api": {"type": "http", "upstream": "api", "path": "/networks/{network}", "timeout": 0.5, "stale_if_error": 0,
           "parameters": {"network": {"type": "string", "required": true}}}},
         "components": [{"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "api.name"}}}]}
        """,
        "local.json": """
        {"name": "local", "entry": true,
         "sources": {"files": {"type": "http", "upstream": "files", "path": "/networks/{network}",
           "parameters": {"network": {"type": "string", "required": true}}}},
         "components": [{"name": "label_component", "identifier": "name", "content": {"value": {"$bind": "files.name"}}}]}
        """,
        "shapes.json": """
        {"name": "shapes", "entry": true,
         "sources": {"api": {"type": "http", "upstream": "api", "path": "/shapes/{case}", "stale_if_error": 0,
           "parameters": {"case": {"type": "string", "required": true}}}},
         "components": [
           {"name": "label_component", "identifier": "title", "content": {"value": {"$bind": "api.info.title"}}},
           {"name": "label_component", "identifier": "summary", "content": {"value": {"$template": "{api.info.count} items"}}},
           {"name": "collection_component", "identifier": "list", "content": {"component_name": "label_component",
             "values": {"$each": "api.items", "as": "item", "template": {"value": {"$bind": "item.name"}}}}}
         ]}
        """,
    ]

    static let goodShape = #"{"info": {"title": "T", "count": 2}, "items": [{"name": "a"}, {"name": "b"}]}"#

    /// An application over ``screens`` with an `api` upstream (`TestUpstream`) and a `files` one.
    static func makeApplication(
        limits: ConnectionLimits = ConnectionLimits(), upstream: String = "http://127.0.0.1:9"
    ) throws -> Application {
        let load = ScreenSetLoader.load(files: screens.mapValues { Array($0.utf8) }, upstreams: ["api", "files"])
        let screenSet = try #require(load.screenSet, "\(load.diagnostics.report)")
        var configuration = ServerConfiguration.forTests()
        configuration.limits = limits
        configuration.upstreams = ["api": upstream, "files": "file:" + filesUpstream.path]
        return buildApplication(configuration: configuration, screenSet: screenSet, logger: testLogger("hardening"))
    }

    /// A `file:` upstream with one network, and a secret file beside it that must stay out of reach.
    static let filesUpstream: URL = {
        let folder = Scratch.path("files")
        try? FileManager.default.createDirectory(at: folder.appendingPathComponent("networks"), withIntermediateDirectories: true)
        try? Data(#"{"name": "Vélib"}"#.utf8).write(to: folder.appendingPathComponent("networks/velib.json"))
        try? Data(#"{"name": "secret"}"#.utf8).write(to: folder.appendingPathComponent("networks.json"))
        return folder
    }()

    /// Runs `body` against the real server over ``screens`` on a free port, then drains it.
    static func withServer(
        limits: ConnectionLimits = ConnectionLimits(), upstream: String = "http://127.0.0.1:9", _ body: (Int) async throws -> Void
    ) async throws {
        try await withRunningServer(makeApplication(limits: limits, upstream: upstream), body)
    }

    // MARK: Request bodies (item 3)

    @Test("a body announced larger than max_body_bytes gets 413 at once, unread, and the answer arrives")
    func declaredBodyTooLarge() async throws {
        try await Self.withServer(limits: .with { $0.maxBodyBytes = 1000 }) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\nx")
            let response = try #require(await connection.receive(1).first)
            #expect(response.status == 413)
            #expect(response.json?["error"]?["code"] == "body_too_large")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Connection") == "close")
            #expect(await connection.isClosedByPeer())
        }
    }

    @Test("a chunked body that grows past max_body_bytes gets 413; a small body on GET is read and dropped")
    func chunkedBodyTooLarge() async throws {
        try await Self.withServer(limits: .with { $0.maxBodyBytes = 1000 }) { port in
            let small = try RawConnection(port: port)
            small.send(
                "GET /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await small.receive(2).map(\.status) == [200, 200])

            let large = try RawConnection(port: port)
            let chunk = String(repeating: "z", count: 600)
            large.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n")
            let response = try #require(await large.receive(1).first)
            #expect(response.status == 413)
            #expect(await large.isClosedByPeer())
        }
    }

    @Test("a body that stops arriving gets 408 after body_timeout, which frees the connection cap for others")
    func bodyTimeout() async throws {
        let limits = ConnectionLimits.with {
            $0.bodyTimeout = .milliseconds(100)
            $0.maxConnections = 2
        }
        try await Self.withServer(limits: limits) { port in
            let stalled = try (0..<2).map { _ in try RawConnection(port: port) }
            for connection in stalled { connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\nx") }
            for connection in stalled {
                let response = try #require(await connection.receive(1).first)
                #expect(response.status == 408)
                #expect(response.json?["error"]?["code"] == "body_timeout")
                #expect(await connection.isClosedByPeer())
            }
            // Both slots were held; a new client is answered once they are cut.
            let fresh = try RawConnection(port: port)
            fresh.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await fresh.receive(1).first?.status == 200)
        }
    }

    // MARK: Caching of errors (item 4)

    @Test("errors that depend on a header name it in Vary; errors and operational endpoints are no-store")
    func errorCaching() async throws {
        try await Self.withServer { port in
            let connection = try RawConnection(port: port)
            let requests = [
                "GET /screens/start HTTP/1.1\r\nHost: a\r\nX-Taksi-Version: banana\r\n\r\n",
                "GET /screens/versioned HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /screens/stations/data HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /screens HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
            ]
            connection.send(requests.joined())
            let responses = await connection.receive(requests.count)
            try #require(responses.count == requests.count)
            #expect(responses.map(\.status) == [400, 404, 400, 404, 200, 200, 200, 200])
            #expect(responses[0].json?["error"]?["code"] == "invalid_version")
            #expect(responses[0].header("Vary") == "X-Taksi-Version")
            #expect(responses[1].json?["error"]?["code"] == "screen_version_not_found")
            #expect(responses[1].header("Vary") == "X-Taksi-Version")
            for response in responses {
                #expect(response.header("Cache-Control") == "no-store", "\(response.status) \(response.body)")
            }
            // The plain URL still answers with its public skeleton.
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            let plain = try #require(await connection.receive(1).first)
            #expect(plain.status == 200)
            #expect(plain.header("Cache-Control")?.hasPrefix("public") == true)
            // A forced alternative the screen lacks gets the same public skeleton (the default).
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nX-Taksi-Alternative: nope\r\n\r\n")
            let forced = try #require(await connection.receive(1).first)
            #expect(forced.status == 200)
            #expect(forced.bytes == plain.bytes)
            #expect(forced.header("X-Taksi-Variant") == plain.header("X-Taksi-Variant"))
            #expect(forced.header("Vary") == plain.header("Vary"))
        }
    }

    // MARK: Upgrades, Expect, Host, targets, versions and methods (items 6, 9, 13)

    @Test("an upgrade offer (curl --http2) is ignored and the connection goes on answering")
    func upgradeIgnored() async throws {
        try await Self.withServer { port in
            let connection = try RawConnection(port: port)
            let offer =
                "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
            // Pipelined behind the offer, and sent after its answer.
            connection.send(offer + "GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await connection.receive(2).map(\.status) == [200, 200])
            connection.send(offer)
            #expect(await connection.receive(1).first?.status == 200)
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await connection.receive(1).first?.status == 200)
        }
    }

    @Test("Expect: 100-continue gets 100 Continue before the body; another expectation gets 417")
    func expectContinue() async throws {
        // The body is sent when the test's task runs again after the interim answer: on a busy
        // machine that took longer than the 10 s body timeout once (the answer was a 408), so
        // this server waits for a body far longer than any test runs.
        try await Self.withServer(limits: .with { $0.bodyTimeout = .seconds(3600) }) { port in
            let connection = try RawConnection(port: port)
            connection.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
            #expect(await connection.receive(1).first?.status == 100)
            connection.send("abc")
            #expect(await connection.receive(1).first?.status == 200)

            let other = try RawConnection(port: port)
            other.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nExpect: the-unexpected\r\n\r\n")
            let refused = try #require(await other.receive(1).first)
            #expect(refused.status == 417)
            #expect(refused.json?["error"]?["code"] == "expectation_failed")

            // A submit refused whatever its body gets its answer at once, never a 100 first.
            for (method, target, status, code) in [
                ("POST", "/screens/start/actions/nope", 404, "action_not_found"), ("POST", "/nowhere", 404, "not_found"),
                ("PUT", "/screens/start", 405, "method_not_allowed"),
            ] {
                let unknown = try RawConnection(port: port)
                unknown.send(
                    "\(method) \(target) HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"
                )
                let answer = try #require(await unknown.receive(1).first)
                #expect(answer.status == status, "\(target)")
                #expect(answer.json?["error"]?["code"] == .string(code))
                #expect(answer.header("Connection") == "close", "the body was never asked for, so the connection ends")
            }
        }
    }

    @Test("HTTP/1.1 without Host or with two gets 400; HTTP/1.0 may omit it; absolute-form targets are served")
    func hostAndTargets() async throws {
        try await Self.withServer { port in
            let missing = try RawConnection(port: port)
            missing.send("GET /screens/start HTTP/1.1\r\n\r\n")
            let noHost = try #require(await missing.receive(1).first)
            #expect(noHost.status == 400)
            #expect(noHost.json?["error"]?["code"] == "invalid_host")

            let twice = try RawConnection(port: port)
            twice.send("GET /screens/start HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
            #expect(await twice.receive(1).first?.json?["error"]?["code"] == "invalid_host")

            let old = try RawConnection(port: port)
            old.send("GET /screens/start HTTP/1.0\r\n\r\n")
            #expect(await old.receive(1).first?.status == 200)

            let absolute = try RawConnection(port: port)
            absolute.send(
                "GET http://example.com/screens/start HTTP/1.1\r\nHost: example.com\r\n\r\n"
                    + "GET /screens/start HTTP/1.1\r\nHost: a\r\n\r\n")
            let both = await absolute.receive(2)
            #expect(both.map(\.status) == [200, 200])
            #expect(both.first?.body == both.last?.body)
        }
    }

    @Test("a target over the limit gets 414 as soon as it is over, and the answer arrives, not a reset")
    func longTarget() async throws {
        try await Self.withServer { port in
            for length in [9_000, 40_000, 150_000] {
                let connection = try RawConnection(port: port)
                connection.send("GET /screens/\(String(repeating: "a", count: length)) HTTP/1.1\r\nHost: a\r\n\r\n")
                let response = try #require(await connection.receive(1).first, "\(length)")
                #expect(response.status == 414, "\(length)")
                #expect(response.json?["error"]?["code"] == "uri_too_long")
            }
            let headers = try RawConnection(port: port)
            headers.send("GET /healthz HTTP/1.1\r\nHost: a\r\nCookie: \(String(repeating: "c", count: 40_000))\r\n\r\n")
            #expect(await headers.receive(1).first?.status == 431)
        }
    }

    @Test("HTTP/1.2 is served as 1.1; HTTP/2.0 in text gets 505; unknown methods 501, CONNECT 405, OPTIONS 204")
    func versionsAndMethods() async throws {
        try await Self.withServer { port in
            let cases: [(String, Int, String?)] = [
                ("GET /screens/start HTTP/1.2\r\nHost: a\r\n\r\n", 200, nil),
                ("GET /screens/start HTTP/2.0\r\nHost: a\r\n\r\n", 505, "http_version_not_supported"),
                ("BREW /screens/start HTTP/1.1\r\nHost: a\r\n\r\n", 501, "method_not_implemented"),
                ("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405, "method_not_allowed"),
                ("POST /screens/start HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405, "method_not_allowed"),
                ("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 204, nil),
                ("OPTIONS /screens/start HTTP/1.1\r\nHost: a\r\n\r\n", 204, nil),
                ("HELLO THERE\r\n\r\n", 400, "malformed_request"),
            ]
            for (request, status, code) in cases {
                let connection = try RawConnection(port: port)
                connection.send(request)
                let response = try #require(await connection.receive(1).first, "\(request)")
                #expect(response.status == status, "\(request)")
                #expect(response.json?["error"]?["code"]?.stringValue == code, "\(request)")
                if [405, 501, 204].contains(status) { #expect(response.header("Allow") == "GET, HEAD, OPTIONS", "\(request)") }
            }
        }
    }

    // MARK: Upstreams (items 2, 5, 7, 8, 10)

    @Test("an upstream whose body stalls after its head is cut at the source's timeout, and the source degrades")
    func stalledUpstreamBody() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/networks/velib", .stalledBody(#"{"name": "Vél"#))
        let application = try Self.makeApplication(upstream: upstream.baseURL)
        let response = try await application.execute(.GET, uri: "/screens/stalled/data?network=velib")
        #expect(response.status == .ok)
        #expect(response.headers["X-Taksi-Degraded"] == ["api"])
        #expect(String(buffer: response.body) == #"{"interface_data":[]}"#)
        try await upstream.stop()
    }

    @Test("parameter values that are not one path segment (.., ., empty, control characters) get 400 and call nothing")
    func pathSegments() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/networks/velib", .json(#"{"name": "Vélib"}"#))
        let application = try Self.makeApplication(upstream: upstream.baseURL)
        for screen in ["stations", "local"] {
            for value in ["..", ".", "", "%2E%2E", "velib%00", "velib.json%00", "a%0Ab"] {
                let response = try await application.execute(.GET, uri: "/screens/\(screen)/data?network=\(value)")
                #expect(response.status == .badRequest, "\(screen) \(value)")
                let body = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
                #expect(body?["error"]?["code"] == "invalid_parameter", "\(screen) \(value)")
            }
            // A value with "/" stays one segment: it names no network, and climbs nowhere.
            let slash = try await application.execute(.GET, uri: "/screens/\(screen)/data?network=..%2Fnetworks")
            #expect(String(buffer: slash.body) == #"{"interface_data":[]}"#, "\(screen)")
            let good = try await application.execute(.GET, uri: "/screens/\(screen)/data?network=velib")
            #expect(String(buffer: good.body) == #"{"interface_data":[{"content":{"value":"Vélib"},"identifier":"name"}]}"#, "\(screen)")
        }
        #expect(upstream.requests.map(\.uri) == ["/networks/..%2Fnetworks", "/networks/velib"])
        try await upstream.stop()
    }

    @Test("redirects are followed on the upstream's own origin only; another host is never asked")
    func redirects() async throws {
        let upstream = try await TestUpstream()
        let elsewhere = try await TestUpstream()
        elsewhere.on("/stolen", .json(#"{"name": "from another host"}"#))
        upstream.on("/networks/away", .redirect(302, location: elsewhere.baseURL + "/stolen"))
        upstream.on("/networks/moved", .redirect(301, location: "/networks/velib"))
        upstream.on("/networks/velib", .json(#"{"name": "Vélib"}"#))
        upstream.on("/networks/loop", .redirect(307, location: "/networks/loop"))
        let application = try Self.makeApplication(upstream: upstream.baseURL)

        let away = try await application.execute(
            .GET, uri: "/screens/stations/data?network=away", headers: ["Accept-Language": "fr"]
        )
        #expect(away.headers["X-Taksi-Degraded"] == ["api"])
        #expect(String(buffer: away.body) == #"{"interface_data":[]}"#)
        #expect(elsewhere.requests.isEmpty, "the other host was never called")

        let moved = try await application.execute(.GET, uri: "/screens/stations/data?network=moved")
        #expect(String(buffer: moved.body) == #"{"interface_data":[{"content":{"value":"Vélib"},"identifier":"name"}]}"#)
        #expect(moved.headers["X-Taksi-Degraded"].isEmpty)

        let loop = try await application.execute(.GET, uri: "/screens/stations/data?network=loop")
        #expect(loop.headers["X-Taksi-Degraded"] == ["api"])
        #expect(upstream.count("/networks/loop") == UpstreamClient.maxRedirects + 1)
        try await upstream.stop()
        try await elsewhere.stop()
    }

    @Test(
        "valid JSON in another shape than the screen binds degrades the source",
        arguments: [
            #"{"info": [], "items": [{"name": "a"}]}"#,  // an array where an object is walked
            #"{"info": {"title": {"x": 1}, "count": 2}, "items": []}"#,  // an object where text goes
            #"{"info": {"title": "T", "count": 2}, "items": {"name": "a"}}"#,  // an object where an array is bound
            #"{"info": {"title": "T", "count": [1]}, "items": []}"#,  // an array spliced into text
            #"{"info": {"title": "T", "count": 2}, "items": [{"name": "a"}, "b"]}"#,  // an item that is not an object
        ]
    )
    func wrongShapes(body: String) async throws {
        let upstream = try await TestUpstream()
        upstream.on("/shapes/x", .json(body))
        upstream.on("/shapes/good", .json(Self.goodShape))
        let application = try Self.makeApplication(upstream: upstream.baseURL)
        let response = try await application.execute(.GET, uri: "/screens/shapes/data?case=x")
        #expect(response.status == .ok)
        #expect(response.headers["X-Taksi-Degraded"] == ["api"], "\(body)")
        #expect(response.headers["Cache-Control"] == ["private, no-store"])
        let good = try await application.execute(.GET, uri: "/screens/shapes/data?case=good")
        #expect(good.headers["X-Taksi-Degraded"].isEmpty)
        try await upstream.stop()
    }
}
