import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// `POST /screens/<path>/actions/<name>` against a real upstream on a free port: inputs as JSON
/// and forms, validation, every upstream outcome, idempotent retries, and `?only=` refreshes.
/// Every answer is checked against the wire rules, as data is.
@Suite("Actions")
struct ActionTests {
    static let screens = SharedScreens.actions

    /// An application over these screens, its upstream `api` a test server.
    struct Fixture {
        let upstream: TestUpstream
        let application: Application
        let screenSet: ScreenSet

        /// What the application logged.
        let log = LogRecorder()

        init() async throws {
            upstream = try await TestUpstream()
            (application, screenSet) = try upstreamApplication(files: ActionTests.screens, upstream: upstream, logger: log.logger)
        }

        func post(
            _ uri: String, _ body: String, type: String? = "application/x-www-form-urlencoded", headers: [(String, String)] = []
        ) async throws -> TestResponse {
            try await application.execute(
                .POST, uri: uri, headers: headers + (type.map { [("Content-Type", $0)] } ?? []), body: body)
        }

        /// The answer's JSON, after checking it as the client would read it: the data payload
        /// decodes, names only dynamic components of the screen's skeleton with content that
        /// decodes exactly, and `then`, when present, is an action the client decodes.
        /// - Parameter screen: whose skeleton the answer patches; an action's answer (`signup`) is never stored.
        func answer(
            _ response: TestResponse, screen: String = "signup/{plan}", sourceLocation: Testing.SourceLocation = #_sourceLocation
        ) throws -> JSONValue {
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
            if screen == "signup/{plan}" || json["error"] != nil {
                #expect(response.headers["Cache-Control"] == ["no-store"], sourceLocation: sourceLocation)
            }
            if json["error"] != nil { return json }
            let data = try JSONDecoder().decode(InterfaceData.self, from: Data(response.body.readableBytesView))
            let skeleton = try #require(screenSet.screens[screen]?.all.first?.skeleton)
            let catalog = screenSet.catalog
            for entry in data.entries {
                let component = try #require(
                    skeleton.components.first { $0.identifier == entry.identifier }, sourceLocation: sourceLocation)
                #expect(catalog.schema(named: component.name)?.isDynamic == true, sourceLocation: sourceLocation)
                let check = catalog.check(
                    dataContent: entry.content, of: component.name, staticContent: component.content.objectValue ?? [:], mode: .definition
                )
                #expect(check.violations.isEmpty, "\(check.violations)", sourceLocation: sourceLocation)
            }
            if let then = json["then"] {
                #expect(catalog.check(then, as: .action).isValid, "\(then)", sourceLocation: sourceLocation)
            }
            return json
        }
    }

    static func message(_ json: JSONValue) -> JSONValue? {
        json["interface_data"]?.arrayValue?.first { $0["identifier"] == "message" }?["content"]?["value"]
    }

    @Test("a form and a JSON body reach the upstream as the declared call; success patches and navigates")
    func success() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/pro", .answer(201, #"{"id": "u 1"}"#))
        let response = try await fixture.post(
            "/screens/signup/pro/actions/submit", "email=ada%40example.com&age=36",
            headers: [("Authorization", "Bearer t"), ("Cookie", "c")]
        )
        #expect(response.status == .ok)
        let json = try fixture.answer(response)
        #expect(json["outcome"] == "success")
        #expect(Self.message(json) == "Welcome, ada@example.com")
        #expect(json["then"] == ["identifier": "navigation", "content": ["interface_identifier": "welcome/u%201"]])
        #expect(response.headers["X-Taksi-Variant"] == ["signup/{plan}|*|default"])
        let sent = try #require(fixture.upstream.requests.last)
        #expect(sent.method == "POST")
        #expect(sent.uri == "/signups/pro")
        #expect(
            try JSONDecoder().decode(JSONValue.self, from: Data(sent.body.utf8)) == ["email": "ada@example.com", "age": 36, "news": false])
        #expect(sent.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer t" })
        #expect(sent.headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "application/json" })
        #expect(!sent.headers.contains { $0.0 == "Cookie" }, "only allow-listed headers travel")

        fixture.upstream.on("/signups/free", .answer(200, #"{"id": "2"}"#))
        for (uri, type) in [
            ("/screens/signup/free/actions/submit", "application/json; charset=utf-8"),
            ("/interfaces/signup/free/actions/submit", "application/json"),
        ] {
            let viaJSON = try await fixture.post(uri, #"{"inputs": {"email": "bo@example.com", "news": true}}"#, type: type)
            #expect(
                try fixture.answer(viaJSON)["then"] == ["identifier": "navigation", "content": ["interface_identifier": "welcome/2"]],
                "\(uri)")
            // An optional input left out is left out of the body.
            #expect(
                try JSONDecoder().decode(JSONValue.self, from: Data((fixture.upstream.requests.last?.body ?? "").utf8)) == [
                    "email": "bo@example.com", "news": true,
                ])
        }

        // An action without a call answers at once.
        let ping = try await fixture.post("/screens/signup/free/actions/ping", "", type: nil)
        #expect(Self.message(try fixture.answer(ping)) == "pong")
    }

    @Test("an integer input beyond ±2^53 is refused, not rounded; 2^53 itself reaches the upstream exactly")
    func exactIntegers() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/pro", .answer(201, #"{"id": "1"}"#))
        let json = try await fixture.post(
            "/screens/signup/pro/actions/submit", #"{"inputs": {"email": "a@b.c", "age": 9007199254740993}}"#, type: "application/json")
        #expect(json.status == .badRequest)
        let error = try fixture.answer(json)["error"]
        #expect(error?["code"] == "invalid_body")
        #expect(error?["message"]?.stringValue?.contains("9007199254740993 is beyond ±2^53") == true, "\(String(describing: error))")
        for age in ["9007199254740993", "9223372036854775807", "-9007199254740993"] {
            let form = try await fixture.post("/screens/signup/pro/actions/submit", "email=a%40b.c&age=\(age)")
            #expect(form.status == .unprocessableEntity, "\(age)")
        }
        #expect(fixture.upstream.count("/signups/pro") == 0, "nothing rounded was sent")

        for body in [
            #"{"inputs": {"email": "a@b.c", "age": 9007199254740992}}"#, #"{"inputs": {"email": "a@b.c", "age": "9007199254740992"}}"#,
        ] {
            let exact = try await fixture.post("/screens/signup/pro/actions/submit", body, type: "application/json")
            #expect(exact.status == .ok)
            #expect(
                fixture.upstream.requests.last?.body.contains(#""age":9007199254740992"#) == true,
                "\(fixture.upstream.requests.last?.body ?? "")")
        }
    }

    @Test(
        "missing, mistyped, too long and blank inputs answer 422 with the patch and field errors, and call nothing",
        arguments: [
            ("age=3", "email required: Enter an email.", "Enter an email."),
            ("email=", "email required: Enter an email.", "Enter an email."),
            ("email=nope", "email invalid: Enter an email.", "Enter an email."),
            ("email=\(String(repeating: "a", count: 40))%40b", "email invalid: Enter an email.", "Enter an email."),
            ("email=a%40b&age=old", "age invalid: age must be an integer", "Check the form"),
            ("email=a%40b&news=maybe", "news invalid: news must be a bool", "Check the form"),
        ]
    )
    func invalid(body: String, error: String, message: String) async throws {
        let fixture = try await Fixture()
        let response = try await fixture.post("/screens/signup/pro/actions/submit", body)
        #expect(response.status == .unprocessableEntity)
        let json = try fixture.answer(response)
        #expect(json["outcome"] == "invalid")
        #expect(
            json["errors"]?.arrayValue?.map {
                "\($0["input"]?.stringValue ?? "") \($0["code"]?.stringValue ?? ""): \($0["message"]?.stringValue ?? "")"
            } == [error])
        #expect(Self.message(json) == .string(message))
        #expect(fixture.upstream.requests.isEmpty)
    }

    @Test(
        "an input the action does not declare is ignored, never sent on, and named in X-Taksi-Ignored-Inputs: an app newer than the screens can submit"
    )
    func undeclaredInputs() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/pro", .answer(201, #"{"id": "u1"}"#))
        let response = try await fixture.post("/screens/signup/pro/actions/submit", "email=ada%40example.com&admin=true&theme=dark")
        #expect(response.status == .ok, "\(response.text)")
        #expect(response.header("X-Taksi-Ignored-Inputs") == "admin, theme")
        let sent = try #require(fixture.upstream.requests.first)
        #expect(!sent.body.contains("admin") && !sent.uri.contains("admin"), "\(sent.body)")
        // Refused inputs still say which were ignored beside them; a name is percent-encoded, and at most ten are named.
        let invalid = try await fixture.post("/screens/signup/pro/actions/submit", "age=3&t%C3%A9ma=x")
        #expect(invalid.status == .unprocessableEntity)
        #expect(invalid.header("X-Taksi-Ignored-Inputs") == "t%C3%A9ma")
        let many = (1...12).map { "x\($0)=1" }.joined(separator: "&")
        let crowded = try await fixture.post("/screens/signup/pro/actions/submit", "email=ada%40example.com&" + many)
        #expect(crowded.header("X-Taksi-Ignored-Inputs") == "x1, x10, x11, x12, x2, x3, x4, x5, x6, x7, and 2 more")
        // Declared inputs only: none ignored, no header.
        let plain = try await fixture.post("/screens/signup/pro/actions/submit", "email=ada%40example.com")
        #expect(plain.header("X-Taksi-Ignored-Inputs") == nil)
    }

    @Test(
        "each upstream outcome gets its answer: a status of its own, its class, timeout, and failure for the rest",
        arguments: [
            (TestUpstream.Behavior.answer(409, #"{"message": "Taken"}"#), 422, "rejected", "Taken"),
            (.answer(409, "<html>conflict</html>"), 422, "rejected", "Already signed up"),
            (.answer(404, "{}"), 422, "rejected", "Refused"),
            (.answer(503, #"{"message": "down"}"#), 502, "failed", "Try again later"),
            (.answer(200, "not json"), 502, "failed", "Try again later"),
            (.redirect(302, location: "/elsewhere"), 502, "failed", "Try again later"),
            (.dropConnection(times: 5, then: .status(500)), 502, "failed", "Try again later"),
            // An upstream that never answers (until the test ends): the action with a short timeout.
            (.held(#"{"id": "late"}"#), 504, "timeout", "Too slow"),
        ]
    )
    func outcomes(behavior: TestUpstream.Behavior, status: Int, outcome: String, message: String) async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/free", behavior)
        let action = if case .held = behavior { "hurry" } else { "submit" }
        let response = try await fixture.post("/screens/signup/free/actions/\(action)", "email=a%40b")
        fixture.upstream.release()
        #expect(Int(response.status.code) == status)
        let json = try fixture.answer(response)
        #expect(json["outcome"] == .string(outcome))
        #expect(Self.message(json) == .string(message))
        #expect(json["then"] == nil)
        // A 404 is usually a wrong path: the log says so, where the app shows only "rejected".
        let warned = fixture.log.lines(atLeast: .warning).filter { $0.message.hasPrefix("action call answered 404") }
        if case .answer(404, _) = behavior {
            #expect(warned.count == 1, "\(fixture.log.recorded.map(\.message))")
            #expect(warned.first?.message.contains("the upstream has no POST /signups/{plan}; check the call's path and method") == true)
            #expect(warned.first?.metadata["action"] == "submit")
        } else {
            #expect(warned.isEmpty)
        }
    }

    @Test("a successful answer without what its next action needs leaves the action out, not the patch")
    func thenLeftOut() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/free", .answer(201, "{}"))
        let json = try fixture.answer(try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b"))
        #expect(json["then"] == nil)
        #expect(Self.message(json) == "Welcome, a@b")
    }

    @Test("bodies: other media types get 415 with Accept-Post, malformed ones 400; only POST is allowed; unknown actions 404")
    func requests() async throws {
        let fixture = try await Fixture()
        let uri = "/screens/signup/free/actions/submit"
        for (type, body) in [
            ("text/plain", "email=a%40b"), ("application/json; charset=latin1", "{}"), ("multipart/form-data; boundary=x", "--x"),
        ] {
            let response = try await fixture.post(uri, body, type: type)
            #expect(response.status == .unsupportedMediaType, "\(type)")
            #expect(response.headers["Accept-Post"] == ["application/json, application/x-www-form-urlencoded"])
            #expect(try fixture.answer(response)["error"]?["code"] == "unsupported_media_type")
        }
        #expect(try await fixture.post(uri, "email=a@b", type: nil).status == .unsupportedMediaType, "a body without a type")
        for (type, body, part) in [
            ("application/json", "{\"inputs\": ", "cannot be read as JSON"), ("application/json", "[1]", "must be an object"),
            ("application/json", #"{"email": "a@b"}"#, #"unknown key "email""#),
            ("application/json", #"{"inputs": [1]}"#, "must be an object"),
            ("application/x-www-form-urlencoded", "email=%zz", "malformed"),
        ] {
            let response = try await fixture.post(uri, body, type: type)
            #expect(response.status == .badRequest, "\(body)")
            let error = try fixture.answer(response)["error"]
            #expect(error?["code"] == "invalid_body")
            #expect(error?["message"]?.stringValue?.contains(part) == true, "\(String(describing: error))")
        }
        let get = try await fixture.application.execute(.GET, uri: uri)
        #expect(get.status == .methodNotAllowed)
        #expect(get.headers["Allow"] == ["POST, OPTIONS"])
        let options = try await fixture.application.execute(.OPTIONS, uri: uri)
        #expect(options.status == .noContent)
        #expect(options.headers["Allow"] == ["POST, OPTIONS"])
        let postSkeleton = try await fixture.application.execute(.POST, uri: "/screens/feed")
        #expect(postSkeleton.status == .methodNotAllowed)
        #expect(postSkeleton.headers["Allow"] == ["GET, HEAD, OPTIONS"])
        let unknown = try await fixture.post("/screens/signup/free/actions/sumbit", "")
        #expect(unknown.status == .notFound)
        let error = try fixture.answer(unknown)["error"]
        #expect(error?["code"] == "action_not_found")
        #expect(error?["message"]?.stringValue?.contains(#"(did you mean "submit"?)"#) == true)
        #expect(
            try await fixture.post("/screens/signup/gold/actions/submit", "email=a%40b").status == .badRequest,
            "the path parameter is checked")
        #expect(fixture.upstream.requests.isEmpty)
    }

    @Test("a submit never goes on a kept-alive connection the upstream may have closed: each POST gets a new one")
    func freshConnectionPerSubmit() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/pro", .oncePerConnection(#"{"id": "1"}"#))
        for attempt in 0..<5 {
            let response = try await fixture.post("/screens/signup/pro/actions/submit", "email=a%40b.c")
            #expect(try fixture.answer(response)["outcome"] == "success", "submit \(attempt)")
        }
        #expect(fixture.upstream.count("/signups/pro") == 5, "each sent once, none retried")
    }

    @Test("a retried submit with the same Idempotency-Key gets the first answer, and the upstream is called once")
    func idempotentRetry() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/free", .answer(201, #"{"id": "7"}"#))
        let key = [("Idempotency-Key", "5c0e0cbb-3d5e-4b43-9f31-d1c0b6a3e5a1")]
        let first = try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: key)
        let retry = try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: key)
        #expect(fixture.upstream.count("/signups/free") == 1)
        #expect(String(buffer: retry.body) == String(buffer: first.body))
        #expect(retry.status == first.status)
        #expect(retry.headers["Idempotent-Replayed"] == ["true"])
        #expect(first.headers["Idempotent-Replayed"].isEmpty)
        #expect(
            fixture.upstream.requests.first?.headers.contains { $0.0 == "Idempotency-Key" && $0.1 == key[0].1 } == true,
            "forwarded, so the upstream can deduplicate across replicas")

        // The same key with another body is a client bug, not a retry.
        let reused = try await fixture.post("/screens/signup/free/actions/submit", "email=c%40d", headers: key)
        #expect(reused.status == .unprocessableEntity)
        #expect(try fixture.answer(reused)["error"]?["code"] == "idempotency_key_reused")
        // So is the same body from another identity (another forwarded Authorization).
        let other = try await fixture.post(
            "/screens/signup/free/actions/submit", "email=a%40b", headers: key + [("Authorization", "Bearer other")])
        #expect(other.status == .unprocessableEntity)
        // Without a key, each submit calls; a malformed key is refused.
        _ = try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b")
        _ = try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b")
        #expect(fixture.upstream.count("/signups/free") == 3)
        #expect(
            try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: [("Idempotency-Key", "a b")]).status
                == .badRequest)
        // Invalid inputs are not kept: the corrected retry goes through with the same key.
        let fresh = [("Idempotency-Key", "k2")]
        #expect(try await fixture.post("/screens/signup/free/actions/submit", "email=bad", headers: fresh).status == .unprocessableEntity)
        #expect(try await fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: fresh).status == .ok)
        #expect(fixture.upstream.count("/signups/free") == 4)
    }

    @Test("a retry that arrives while the first submit waits on the upstream waits for its answer: one call")
    func concurrentRetry() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/signups/free", .held(#"{"id": "9"}"#))
        let key = [("Idempotency-Key", "same")]
        async let first = fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: key)
        async let second = fixture.post("/screens/signup/free/actions/submit", "email=a%40b", headers: key)
        await fixture.upstream.waitForRequests(1)
        fixture.upstream.release()
        let (a, b) = try await (first, second)
        #expect(fixture.upstream.count("/signups/free") == 1)
        #expect(String(buffer: a.body) == String(buffer: b.body))
        #expect([a, b].filter { !$0.headers["Idempotent-Replayed"].isEmpty }.count == 1)
    }

    @Test("kept answers are bounded: past the window or the byte limit, a submit runs again; a failure is not kept")
    func idempotencyBounds() async throws {
        // The store a server that runs alone answers its keyed submits through.
        let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_000_000))
        let store = MemoryFleetStore(window: .seconds(60), maxSubmitBytes: 1_000, now: { clock.withLockedValue { $0 } })
        func claim(_ key: String) async throws -> SubmitClaim {
            try await store.claimSubmit(key: key, fingerprint: Array("r".utf8), lease: .seconds(30), window: .seconds(60))
        }
        /// Claims `key` and records `text` as its answer (nil: the call failed, nothing kept).
        func answer(_ key: String, _ text: String?) async throws {
            guard case .claimed(let token) = try await claim(key) else {
                Issue.record("\(key) was not claimed")
                return
            }
            let kept = text.map { SubmitAnswer(status: .ok, headers: [], body: Array($0.utf8)) }
            #expect(try await store.finishSubmit(key: key, token: token, answer: kept))
        }
        func isKept(_ key: String) async throws -> Bool {
            if case .answered = try await claim(key) { return true }
            return false
        }
        try await answer("a", "one")
        #expect(try await isKept("a"))
        clock.withLockedValue { $0 += 61 }
        try await answer("a", "three")
        // Two large answers do not fit together: the older goes.
        try await answer("b", String(repeating: "x", count: 600))
        #expect(store.submitBytes <= 1_000)
        try await answer("c", String(repeating: "y", count: 600))
        #expect(store.submitBytes <= 1_000)
        #expect(try await !isKept("b"), "kept over the byte limit")
        #expect(try await isKept("c"))
        // A failure or a timeout is not kept: whether the upstream acted is not known, so a retry runs.
        try await answer("d", nil)
        try await answer("d", "retried")
        #expect(try await isKept("d"))
    }

    @Test("?only= answers just those components and calls only their sources; anything else is 400")
    func only() async throws {
        let fixture = try await Fixture()
        fixture.upstream.on("/news", .json(#"{"title": "Hello"}"#))
        fixture.upstream.on("/weather", .json(#"{"text": "Sunny"}"#))
        let one = try await fixture.application.execute(uri: "/screens/feed/data?only=forecast")
        #expect(one.status == .ok)
        #expect(try fixture.answer(one, screen: "feed")["interface_data"] == [["identifier": "forecast", "content": ["value": "Sunny"]]])
        #expect(fixture.upstream.count("/news") == 0)
        #expect(fixture.upstream.count("/weather") == 1)
        let whole = try await fixture.application.execute(uri: "/screens/feed/data")
        #expect(try fixture.answer(whole, screen: "feed")["interface_data"]?.arrayValue?.count == 2, "the whole is not the part kept")
        let both = try await fixture.application.execute(uri: "/screens/feed/data?only=headline,forecast")
        #expect(try fixture.answer(both, screen: "feed")["interface_data"]?.arrayValue?.count == 2)
        // A static label is dynamic to the client, so it may be asked for; it has nothing to send.
        #expect(
            try fixture.answer(try await fixture.application.execute(uri: "/screens/feed/data?only=static"), screen: "feed")[
                "interface_data"] == [])
        for bad in ["go", "nope", "headline,", ""] {
            let response = try await fixture.application.execute(uri: "/screens/feed/data?only=\(bad)")
            #expect(response.status == .badRequest, "\(bad)")
            #expect(try fixture.answer(response, screen: "feed")["error"]?["code"] == "invalid_parameter")
        }
    }
}
