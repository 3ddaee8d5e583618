import Foundation
import TaksiServerClient
import TaksiTestSupport
import Testing

/// The app side's library as a fleet serves it: `taksi-server` processes on copies of the example
/// project, a reload between a skeleton and its data, two replicas on different files behind a
/// balancer that picks one per request (a rollout), submits whose answer is lost or that meet a
/// changed screen, and paths and queries no app should have to encode itself.
@Suite("Client library: a fleet over real sockets")
struct ClientFleetTests {
    /// The example newsletter as a new release changes it: another title, in a component of
    /// another identifier (a new shape, so a new revision: text alone keeps the revision, as the
    /// data made for it still fits).
    static func retitled(_ text: String) -> String {
        text.replacingOccurrences(
            of: "identifier: title\n    content: {value: Our newsletter", with: "identifier: heading\n    content: {value: Our letter")
    }

    static func retitled(_ directory: URL) throws {
        let file = directory.appendingPathComponent("Screens/newsletter.yaml")
        try retitled(String(contentsOf: file, encoding: .utf8)).write(to: file, atomically: true, encoding: .utf8)
    }

    /// The example login with another title (and so another revision), or without its password field.
    static func login(_ directory: URL, dropPassword: Bool = false) throws {
        let file = directory.appendingPathComponent("Screens/login.json")
        var text = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(
            of: "\"identifier\": \"title\",\n      \"content\": {\"value\": \"Log in\"",
            with: "\"identifier\": \"heading\",\n      \"content\": {\"value\": \"Sign in\"")
        if dropPassword {
            text = text.replacingOccurrences(
                of:
                    "{\n      \"name\": \"text_field_component\",\n      \"identifier\": \"password\",\n      \"content\": {\"placeholder\": \"Password\", \"is_secure\": true}\n    },\n",
                with: "")
        }
        try text.write(to: file, atomically: true, encoding: .utf8)
    }

    static let credentials = ["email": "ada@example.com", "password": "correct-horse"]

    /// Gives a replica's config.json `page_token_keys`: one key, its secret in a file beside it.
    static func pageKey(_ secret: String) -> (URL) throws -> Void {
        { directory in
            try Data(secret.utf8).write(to: directory.appendingPathComponent("page-key"))
            let file = directory.appendingPathComponent("config.json")
            var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
            config["page_token_keys"] = [["id": "fleet", "secret": ["file": "page-key"]]]
            try JSONSerialization.data(withJSONObject: config).write(to: file)
        }
    }

    @Test("a list's next page from another replica with the same page_token_keys; one with another key refuses the token")
    func pagesAcrossReplicas() async throws {
        let first = try await Replica(edit: Self.pageKey("the fleet's page key, 32 bytes or more"))
        defer { first.stop() }
        let second = try await Replica(edit: Self.pageKey("the fleet's page key, 32 bytes or more"))
        defer { second.stop() }
        let stranger = try await Replica(edit: Self.pageKey("another deployment's key, also 32+"))
        defer { stranger.stop() }
        let screen = try await client(first.url).load("repositories?q=swift").get()
        let page = try await client(second.url).loadMore("results", on: screen).get()
        #expect(page.added == 30 && page.hasMore)
        let third = try await client(first.url).loadMore("results", on: page.screen).get()
        #expect(third.added == 30 && !third.hasMore)
        #expect(await client(stranger.url).loadMore("results", on: screen).failureCode == "invalid_page_token")
    }

    @Test("data asked for after a reload is the data of the skeleton shown, and the next load gets the new skeleton")
    func reloadBetweenSkeletonAndData() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url)
        let before = try await server.load("newsletter").get()
        _ = try await server.skeleton("newsletter").get()
        try await replica.edit("newsletter.yaml", Self.retitled)
        // The server still answers for the skeleton the app holds.
        #expect(try await server.data("newsletter").get().count > 0)
        let after = try await server.load("newsletter").get()
        #expect(after.revision != before.revision)
        #expect(String(decoding: after.skeleton, as: UTF8.self).contains("Our letter"))
        #expect(after.passes == 1)
    }

    @Test("a load that meets a replica with other files fetches the skeleton again past the caches, from a replica that has its data")
    func rolloutRecovers() async throws {
        let old = try await Replica()
        defer { old.stop() }
        let new = try await Replica(edit: Self.retitled)
        defer { new.stop() }
        // The skeleton from the old release, everything after from the new one.
        let balancer = try Balancer(replicas: [old.port, new.port]) { index, _ in index == 0 ? 0 : 1 }
        defer { balancer.stop() }
        let screen = try await client(balancer.url).load("newsletter").get()
        #expect(screen.passes == 2)
        #expect(String(decoding: screen.skeleton, as: UTF8.self).contains("Our letter"))
        _ = try screen.data.get()
        let passed = balancer.passed
        try #require(passed.map(\.replica) == [0, 1, 1, 1])
        let oldRevision = try await client(old.url).load("newsletter").get().revision
        #expect(passed[1].header("X-Taksi-Skeleton") == oldRevision, "the data names the skeleton held")
        #expect(passed[0].header("Cache-Control") == nil)
        #expect(passed[2].header("Cache-Control") == "no-cache", "the second skeleton past every cache")
        #expect(passed[3].header("X-Taksi-Skeleton") == screen.revision)
    }

    @Test("a load that meets 412 on every pass stops after its passes, with the skeleton's placeholders and the reason")
    func rolloutBounded() async throws {
        let old = try await Replica()
        defer { old.stop() }
        let new = try await Replica(edit: Self.retitled)
        defer { new.stop() }
        // Skeletons from the old release, data from the new one: never the same.
        let balancer = try Balancer(replicas: [old.port, new.port]) { _, line in line.contains("/data") ? 1 : 0 }
        defer { balancer.stop() }
        let screen = try await client(balancer.url).load("newsletter").get()
        #expect(screen.passes == 4)
        #expect(screen.data == .failure(.skeletonOutdated))
        #expect(String(decoding: screen.skeleton, as: UTF8.self).contains("Our newsletter"))
        #expect(balancer.passed.count == 8)
    }

    @Test("a load whose data meets a draining replica (503) or none (502) asks again; after every pass, the placeholders and why")
    func unavailableReplica() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let balancer = try Balancer(replicas: [replica.port]) { _, _ in 0 }
        defer { balancer.stop() }
        let server = client(balancer.url)
        balancer.answer("GET /screens/newsletter/data", status: 503, count: 1)
        let screen = try await server.load("newsletter").get()
        #expect(screen.passes == 2)
        _ = try screen.data.get()
        balancer.answer("GET /screens/newsletter/data", status: 502, count: 4)
        let unfilled = try await server.load("newsletter").get()
        #expect(unfilled.passes == 4)
        #expect(unfilled.data.failureCode == "unavailable")
        #expect(unfilled.identifiers.contains("email"), "the skeleton, with its placeholders")
    }

    @Test("a submit whose answer is lost is sent again with the same key, and the upstream is called once")
    func submitRetried() async throws {
        let upstream = try await TestUpstream()
        upstream.on("/sessions", .json(#"{"token": "t", "user": {"name": "Ada"}}"#))
        let replica = try await Replica(upstreams: ["auth": upstream.baseURL])
        defer { replica.stop() }
        let balancer = try Balancer(replicas: [replica.port]) { _, _ in 0 }
        defer { balancer.stop() }
        let server = client(balancer.url)
        let login = try await server.load("login").get()
        balancer.dropAnswers(of: "POST", count: 1)
        let submission = try await server.submit("submit", inputs: Self.credentials, on: login).get()
        #expect(submission.status == 200)
        #expect(String(decoding: try #require(submission.then), as: UTF8.self).contains("\"interface_identifier\":\"home\""))
        let posts = balancer.passed.filter { $0.line.hasPrefix("POST") }
        #expect(posts.count == 2)
        #expect(Set(posts.compactMap { $0.header("Idempotency-Key") }) == [submission.idempotencyKey])
        #expect(upstream.count("/sessions") == 1)
        try await upstream.stop()
    }

    @Test("a submit that meets a changed screen still holding its inputs is sent again on it, once, with the same key")
    func submitAfterRollout() async throws {
        let old = try await Replica()
        defer { old.stop() }
        let new = try await Replica(edit: { try Self.login($0) })
        defer { new.stop() }
        // The screen loaded from the old release (skeleton and data), the submit on the new one.
        let balancer = try Balancer(replicas: [old.port, new.port]) { index, _ in index < 2 ? 0 : 1 }
        defer { balancer.stop() }
        let server = client(balancer.url)
        let login = try await server.load("login").get()
        let submission = try await server.submit("submit", inputs: Self.credentials, on: login).get()
        #expect(submission.status == 200)
        #expect(submission.screen.revision != login.revision)
        #expect(String(decoding: submission.screen.skeleton, as: UTF8.self).contains("Sign in"))
        let posts = balancer.passed.filter { $0.line.hasPrefix("POST") }
        #expect(posts.count == 2)
        #expect(posts.map { $0.header("X-Taksi-Skeleton") } == [login.revision, submission.screen.revision])
        #expect(Set(posts.compactMap { $0.header("Idempotency-Key") }).count == 1)
    }

    @Test("a submit that meets a changed screen without one of its inputs is not sent again: screenChanged, with the new screen")
    func submitScreenChanged() async throws {
        let old = try await Replica()
        defer { old.stop() }
        let new = try await Replica(edit: { try Self.login($0, dropPassword: true) })
        defer { new.stop() }
        let balancer = try Balancer(replicas: [old.port, new.port]) { index, _ in index < 2 ? 0 : 1 }
        defer { balancer.stop() }
        let server = client(balancer.url)
        let login = try await server.load("login").get()
        #expect(login.identifiers.isSuperset(of: ["email", "password"]))
        let result = await server.submit("submit", inputs: Self.credentials, on: login)
        guard case .failure(.screenChanged(let screen)) = result else {
            Issue.record("expected screenChanged, got \(result)")
            return
        }
        #expect(!screen.identifiers.contains("password") && screen.identifiers.contains("email"))
        #expect(balancer.passed.filter { $0.line.hasPrefix("POST") }.count == 1)
    }

    @Test(
        "a submit from a form whose field was renamed with its input since (a reload) runs nothing and meets screenChanged, not the new input's 'required'"
    )
    func submitRenamedInput() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url)
        let login = try await server.load("login").get()
        #expect(login.identifiers.contains("email"))
        // The field and its input renamed together: the skeleton's shape as the data sees it is
        // the same (a text field is static), so only the action's inputs tell the forms apart.
        try await replica.edit("login.json") { text in
            text.replacingOccurrences(of: #""identifier": "email","#, with: #""identifier": "login_name","#)
                .replacingOccurrences(of: #"        "email": {"#, with: #"        "login_name": {"#)
                .replacingOccurrences(of: "inputs.email", with: "inputs.login_name").replacingOccurrences(
                    of: "errors.email", with: "errors.login_name")
        }
        let result = await server.submit("submit", inputs: Self.credentials, on: login)
        guard case .failure(.screenChanged(let screen)) = result else {
            Issue.record("expected screenChanged, got \(result)")
            return
        }
        #expect(screen.identifiers.contains("login_name") && !screen.identifiers.contains("email"))
        #expect(screen.revision != login.revision, "the inputs are part of the revision")
    }

    @Test("an input the screen does not declare is ignored and named; an action the screen lacks is action_not_found")
    func ignoredInputsAndUnknownAction() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let server = client(replica.url)
        let newsletter = try await server.load("newsletter").get()
        let submission = try await server.submit(
            "subscribe", inputs: ["email": "ada@example.com", "frequency": "weekly", "nick name": "ada"], on: newsletter
        ).get()
        #expect(submission.ignoredInputs == ["nick name"] && submission.moreIgnoredInputs == 0)
        var many = ["email": "ada@example.com"]
        for index in 0..<12 { many["extra \(index)"] = "x" }
        let crowded = try await server.submit("subscribe", inputs: many, on: newsletter).get()
        #expect(crowded.ignoredInputs.count == 10 && crowded.moreIgnoredInputs == 2, "\(crowded.ignoredInputs)")
        #expect(crowded.ignoredInputs.allSatisfy { $0.hasPrefix("extra ") })
        #expect(await server.submit("open_restaurant", inputs: [:], on: newsletter).failureCode == "action_not_found")
    }

    @Test(
        "no path or query traps: what a URL cannot carry is encoded, escapes are kept, the server answers each",
        arguments: [
            ("repositories?q=swift nio", "GET /screens/repositories/data?q=swift%20nio HTTP/1.1"),
            ("repositories?q=café&sort=stars", "GET /screens/repositories/data?q=caf%C3%A9&sort=stars HTTP/1.1"),
            ("repositories?q=100%", "GET /screens/repositories/data?q=100%25 HTTP/1.1"),
            ("repositories?q=a%20b#top", "GET /screens/repositories/data?q=a%20b%23top HTTP/1.1"),
            ("repositories/apple/swift-nio", "GET /screens/repositories/apple/swift-nio/data HTTP/1.1"),
            ("repositories/{owner}/{repo}", "GET /screens/repositories/%7Bowner%7D/%7Brepo%7D HTTP/1.1"),
            ("products/Tea pot", "GET /screens/products/Tea%20pot HTTP/1.1"),
            ("restaurants/la table\n", "GET /screens/restaurants/la%20table%0A HTTP/1.1"),
            ("bikes/stations/vélib ✓", "GET /screens/bikes/stations/v%C3%A9lib%20%E2%9C%93 HTTP/1.1"),
            ("home\\..\\login", "GET /screens/home%5C..%5Clogin HTTP/1.1"),
            ("", nil),
            ("?q=swift", nil),
            ("/", nil),
        ])
    func hostilePaths(path: String, expected: String?) async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let balancer = try Balancer(replicas: [replica.port]) { _, _ in 0 }
        defer { balancer.stop() }
        let result = await client(balancer.url).load(path)
        switch result {
        case .success(let screen): _ = try screen.data.get()
        case .failure(.status(let status, let code, _)): #expect([400, 404].contains(status), "\(path): \(status) \(code ?? "")")
        case .failure(.invalidRequest): #expect(expected == nil, "\(path)")
        case .failure(let error): Issue.record("\(path): \(error)")
        }
        if let expected {
            #expect(balancer.passed.map(\.line).contains(expected), "\(balancer.passed.map(\.line))")
        } else {
            #expect(balancer.passed.isEmpty, "no screen named: nothing to ask")
        }
    }

    @Test("the variant's headers go with the skeleton, its data and its submits, the same on each")
    func headers() async throws {
        let replica = try await Replica()
        defer { replica.stop() }
        let balancer = try Balancer(replicas: [replica.port]) { _, _ in 0 }
        defer { balancer.stop() }
        let server = client(
            balancer.url, userID: "ada", alternative: "compact", version: "2.1.0", languages: ["de-DE", "en"], platform: "android")
        let landing = try await server.load("landing").get()
        #expect(landing.variant?.contains("compact") == true, "\(landing.variant ?? "")")
        _ = await server.submit("anything", inputs: [:], on: landing)
        let passed = balancer.passed
        #expect(passed.count == 3)
        for request in passed {
            #expect(request.header("X-Taksi-Version") == "2.1.0")
            #expect(request.header("X-Taksi-User") == "ada")
            #expect(request.header("X-Taksi-Alternative") == "compact")
            #expect(request.header("X-Taksi-Platform") == "android")
            #expect(request.header("Accept-Language") == "de-DE, en;q=0.9")
        }
    }
}
