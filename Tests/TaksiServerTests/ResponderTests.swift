import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// The routes, answered in-process (no socket): statuses, headers and whole bodies.
@Suite("Responder")
struct ResponderTests {
    let application = fixtureApplication()

    func get(
        _ uri: String, method: HTTPMethod = .GET, headers: [(String, String)] = []
    ) async throws -> (status: HTTPResponseStatus, headers: HTTPHeaders, body: JSONValue?) {
        let response = try await application.execute(method, uri: uri, headers: headers)
        return (response.status, response.headers, response.json)
    }

    func error(_ code: String, _ message: String) -> JSONValue {
        ["error": ["code": .string(code), "message": .string(message)]]
    }

    @Test("the index lists every screen, its variants and experiments")
    func index() async throws {
        let response = try await get("/screens")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == ["application/json; charset=utf-8"])
        let listed = try #require(response.body?["screens"]?.arrayValue)
        #expect(listed.map { $0["name"] } == ["bikes/networks", "bikes/stations", "home", "landing", "login", "repositories"])
        // Every variant names its skeleton's revision (16 hex digits); the rest is compared whole.
        let revisions = listed.flatMap { $0["variants"]?.arrayValue ?? [] }.map { $0["revision"]?.stringValue ?? "" }
        #expect(revisions.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isHexDigit) }, "\(revisions)")
        let screens = listed.map { screen -> JSONValue in
            var screen = screen.objectValue ?? [:]
            screen["variants"] = screen["variants"].map {
                .array(
                    ($0.arrayValue ?? []).map { variant in
                        var variant = variant.objectValue ?? [:]
                        variant["revision"] = nil
                        return .object(variant)
                    })
            }
            return .object(screen)
        }
        let byName = { (name: String) in screens.first { $0["name"] == .string(name) } }
        #expect(
            byName("home")?["variants"]
                == [
                    [
                        "id": "home|>= 2.0|default", "version": ">= 2.0", "alternative": "default", "requires_data": true, "actions": [],
                        "uses": [
                            "button_component", "collection_component", "label_component", "restaurant_component", "spacer_component",
                        ],
                    ],
                    [
                        "id": "home|*|default", "version": nil, "alternative": "default", "requires_data": true, "actions": [],
                        "uses": ["button_component", "collection_component", "label_component"],
                    ],
                ]
        )
        #expect(
            byName("landing")?["experiments"]
                == [
                    [
                        "name": "landing-call-to-action", "version": nil, "weights": ["default": 50, "compact": 50], "status": "running",
                        "holdout": 0, "rollout": 100,
                    ]
                ]
        )
        #expect(
            byName("login") == [
                "name": "login", "parameters": [:], "requires_data": false, "experiments": [],
                "variants": [
                    [
                        "id": "login|*|default", "version": nil, "alternative": "default", "requires_data": false, "actions": [],
                        "uses": ["button_component", "label_component", "text_field_component"],
                    ]
                ],
            ])
    }

    @Test("skeletons are the compiled screens, under both prefixes", arguments: ["/screens/", "/interfaces/"])
    func skeleton(_ prefix: String) async throws {
        for name in fixtureScreens.names {
            let response = try await get(prefix + name)
            #expect(response.status == .ok)
            #expect(response.body == fixtureScreens[name]?.skeleton.jsonValue)
            let length = try await application.execute(.GET, uri: prefix + name, headers: [:]).body.readableBytes
            #expect(response.headers["Content-Length"] == ["\(length)"])
        }
    }

    @Test("data is built from fixtures and the request's query parameters")
    func data() async throws {
        let response = try await get("/screens/home/data?name=Ada%20Lovelace", headers: [("X-Taksi-Version", "2.0")])
        #expect(response.status == .ok)
        let entries = try #require(response.body?["interface_data"]?.arrayValue)
        #expect(entries.first == ["identifier": "greeting", "content": ["value": "Hello, Ada Lovelace!"]])
        #expect(entries.map { $0["identifier"]?.stringValue } == ["greeting", "headline", "restaurants", "categories"])
        #expect(try await get("/interfaces/home/data?name=Ada+Lovelace&version=2.0").body == response.body)
        #expect(try await get("/screens/login/data").body == ["interface_data": []])
    }

    @Test(
        "skeletons are public (private with a running experiment) and revalidated by ETag; If-None-Match gives 304 with the same headers and no body"
    )
    func caching() async throws {
        let first = try await application.execute(.GET, uri: "/screens/landing", headers: [:])
        let etag = try #require(first.headers.first(name: "ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 18)
        // landing runs an experiment: its skeleton depends on the user, so no shared cache keeps it.
        #expect(first.headers["Cache-Control"] == ["private, max-age=60, stale-while-revalidate=300"])
        let login = try await application.execute(.GET, uri: "/screens/login", headers: [:])
        #expect(login.headers["Cache-Control"] == ["public, max-age=60, stale-while-revalidate=300"])
        for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*", " \t\(etag) ", "\"other\",,\t\(etag)", "\"a\" , * "] {
            let revalidated = try await application.execute(
                .GET, uri: "/screens/landing", headers: HTTPHeaders([("If-None-Match", condition)]))
            #expect(revalidated.status == .notModified, "\(condition)")
            #expect(revalidated.body.readableBytes == 0)
            #expect(revalidated.headers["ETag"] == [etag])
            #expect(revalidated.headers["Vary"] == first.headers["Vary"])
            #expect(revalidated.headers["X-Taksi-Variant"] == first.headers["X-Taksi-Variant"])
            #expect(revalidated.headers["Content-Length"].isEmpty)
        }
        for condition in [
            "\"0000000000000000\"", "W/", String(etag.dropFirst().dropLast()), String(etag.dropLast()), "w/\(etag)", "**", ",",
        ] {
            let changed = try await application.execute(
                .GET, uri: "/screens/landing", headers: HTTPHeaders([("If-None-Match", condition)]))
            #expect(changed.status == .ok, "\(condition)")
        }
        // Another variant has other bytes, so another tag.
        let compact = try await application.execute(
            .GET, uri: "/screens/landing", headers: HTTPHeaders([("X-Taksi-Alternative", "compact")]))
        #expect(compact.headers.first(name: "ETag") != etag)

        let data = try await application.execute(.GET, uri: "/screens/home/data", headers: [:])
        #expect(data.headers["Cache-Control"] == ["private, no-cache"])
        // Request-dependent data is kept per request values, with its own tag, so the app's
        // revalidation (no-cache) is answered with a 304.
        let requestTag = try #require(data.headers.first(name: "ETag"))
        #expect(
            try await application.execute(
                .GET, uri: "/screens/home/data", headers: HTTPHeaders([("If-None-Match", requestTag)])
            ).status
                == .notModified)
        let other = try await application.execute(
            .GET, uri: "/screens/home/data?name=Ada", headers: HTTPHeaders([("If-None-Match", requestTag)]))
        #expect(other.status == .ok && other.headers.first(name: "ETag") != requestTag, "other values, other bytes, other tag")
        let staticData = try await application.execute(.GET, uri: "/screens/login/data", headers: [:])
        let dataTag = try #require(staticData.headers.first(name: "ETag"))
        #expect(
            try await application.execute(.GET, uri: "/screens/login/data", headers: HTTPHeaders([("If-None-Match", dataTag)]))
                .status
                == .notModified)
    }

    @Test(
        "gzip goes to clients that accept it, with its own ETag; identity to the others",
        arguments: [
            ("gzip", true), ("gzip, deflate, br", true), ("br;q=1.0, gzip;q=0.8", true), ("*", true), ("x-gzip", true),
            ("", false), ("identity", false), ("gzip;q=0", false), ("deflate", false), ("*;q=0", false), ("gzip;q=0, *", false),
            ("GZIP", true), (" deflate,,\tgzip ", true), ("*;q=0, gzip", true), ("gzip ; Q=0", false), ("gzip;level=1;q=0.000", false),
            ("gzip;q=0.5;x", true), ("gzipx, x-gzipx", false), ("*;q=0.1", true), ("*;q=0, *", true),
        ]
    )
    func gzip(acceptEncoding: String, gzipped: Bool) async throws {
        let plain = try await application.execute(.GET, uri: "/screens/home", headers: [:])
        #expect(plain.headers["Content-Encoding"].isEmpty)
        let headers = acceptEncoding.isEmpty ? HTTPHeaders() : HTTPHeaders([("Accept-Encoding", acceptEncoding)])
        let response = try await application.execute(.GET, uri: "/screens/home", headers: headers)
        #expect(response.headers["Vary"] == ["X-Taksi-Version, Accept-Encoding"])
        guard gzipped else {
            #expect(response.headers["Content-Encoding"].isEmpty)
            #expect(response.body == plain.body)
            return
        }
        #expect(response.headers["Content-Encoding"] == ["gzip"])
        #expect(response.headers["Content-Length"] == ["\(response.body.readableBytes)"])
        #expect(response.body.readableBytes < plain.body.readableBytes)
        var compressed = response.body
        #expect(try compressed.decompress(with: .gzip()) == plain.body)
        let etag = try #require(response.headers.first(name: "ETag"))
        #expect(etag != plain.headers.first(name: "ETag"))
        let revalidated = try await application.execute(
            .GET, uri: "/screens/home", headers: HTTPHeaders([("Accept-Encoding", acceptEncoding), ("If-None-Match", etag)])
        )
        #expect(revalidated.status == .notModified)
        #expect(revalidated.headers["Content-Encoding"].isEmpty)
    }

    @Test("a trailing slash is tolerated")
    func trailingSlash() async throws {
        #expect(try await get("/screens/login/").status == .ok)
        #expect(try await get("/screens/").status == .ok)
    }

    @Test("errors are JSON with a stable code and the right status")
    func errors() async throws {
        let unknown = try await get("/screens/nope")
        #expect(unknown.status == .notFound)
        #expect(unknown.body == error("screen_not_found", #"there is no screen named "nope"; GET /screens lists the screens"#))

        #expect(
            try await get("/screens/nope/data").body
                == error("screen_not_found", #"there is no screen named "nope"; GET /screens lists the screens"#))

        let route = try await get("/elsewhere")
        #expect(route.status == .notFound)
        #expect(route.body?["error"]?["code"] == "not_found")

        let method = try await get("/screens/home", method: .POST)
        #expect(method.status == .methodNotAllowed)
        #expect(method.headers["Allow"] == ["GET, HEAD, OPTIONS"])
        #expect(method.headers["Cache-Control"] == ["no-store"], "errors are never stored by shared caches")
        #expect(method.body == error("method_not_allowed", "POST is not allowed here; use GET or HEAD"))

        let query = try await get("/screens/home/data?name=%E0%A4")
        #expect(query.status == .badRequest)
        #expect(query.body == error("invalid_query", "the query string is malformed: a percent-encoded value is not UTF-8"))

        let escape = try await get("/screens/home/data?name=%zz")
        #expect(escape.body?["error"]?["code"] == "invalid_query")
    }

    @Test("a bad query parameter is a 400 that names the parameter")
    func badParameter() async throws {
        let load = ScreenSetLoader.load(files: [
            "stations.json": Array(
                #"{"name": "stations", "sources": {"q": {"type": "request", "parameters": {"network": {"required": true}, "page": {"type": "integer", "default": 1}}}}, "components": [{"name": "label_component", "content": {"value": {"$template": "{q.network} p{q.page}"}}}]}"#
                    .utf8
            )
        ])
        let set = try #require(load.screenSet, "\(load.diagnostics.report)")
        let application = buildApplication(configuration: ServerConfiguration(), screenSet: set, logger: .init(label: "t"))
        func body(_ uri: String) async -> JSONValue? {
            try? JSONDecoder().decode(
                JSONValue.self, from: Data(try await application.execute(.GET, uri: uri).body.readableBytesView))
        }
        #expect(try await application.execute(.GET, uri: "/screens/stations/data").status == .badRequest)
        #expect(
            await body("/screens/stations/data")
                == error("missing_parameter", #"query parameter "network" (string) is required; add ?network=..."#))
        #expect(
            await body("/screens/stations/data?network=oslo&page=x")
                == error("invalid_parameter", #"query parameter "page" must be an integer, found "x""#))
        #expect(
            await body("/screens/stations/data?network=oslo&page=2") == [
                "interface_data": [["identifier": "component$0", "content": ["value": "oslo p2"]]]
            ])
    }

    @Test("routes parse names with slashes and the data suffix")
    func routes() async throws {
        let load = ScreenSetLoader.load(files: ["s.json": Array(#"{"name": "bikes/stations", "components": []}"#.utf8)])
        let set = try #require(load.screenSet)
        let application = buildApplication(configuration: ServerConfiguration(), screenSet: set, logger: .init(label: "t"))
        #expect(try await application.execute(.GET, uri: "/screens/bikes/stations").status == .ok)
        #expect(try await application.execute(.GET, uri: "/screens/bikes/stations/data").status == .ok)
        #expect(try await application.execute(.GET, uri: "/screens/bikes").status == .notFound)
        #expect(try await application.execute(.GET, uri: "/healthz").status == .ok)
    }
}
