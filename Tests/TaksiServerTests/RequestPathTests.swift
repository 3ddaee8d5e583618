import NIOCore
import NIOHTTP1
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// The one way a request travels: its head read once into ``RequestHead`` (the fields the server
/// acts on found as it is read), routed, and answered by the endpoint from what is kept (the
/// skeleton's forms, fixtures' data, data kept for that very target) before anything is made
/// text; what a connection writes, and counts, whatever the requests and however they arrive.
@Suite("One request path")
struct RequestPathTests {
    /// A screen with one variant (large enough for a gzip form), one with a path parameter, one
    /// with versions: `title` says which set it is.
    static func files(title: String = "One") -> [String: [UInt8]] {
        let long = String(repeating: "A long enough text to be worth compressing. ", count: 20)
        return [
            "plain.yaml": """
            name: plain
            entry: true
            components:
              - {name: label_component, identifier: title, content: {value: \(title)}}
              - {name: label_component, identifier: body, content: {value: \(long)}}
            """,
            "item.yaml": """
            name: items/{id}
            parameters: {id: {type: integer}}
            components: [{name: label_component, identifier: title, content: {value: Item}}]
            """,
            "order.yaml": """
            name: orders/{id}
            parameters: {id: {type: integer}}
            sources:
              q: {type: request, parameters: {note: {default: none}}}
            components:
              - {name: label_component, identifier: line, content: {value: {$template: "Order {path.id}: {q.note}"}}}
            """,
            "greet.yaml": """
            name: greet
            entry: true
            sources:
              query: {type: request, parameters: {name: {default: friend}}}
            components:
              - name: label_component
                identifier: greeting
                content: {value: {$template: "Hi {query.name}, \(long)"}}
            """,
            "strings/en.yaml": "hello: \"Hello, {name}!\"\n",
            "strings/pt.yaml": "hello: \"Olá, {name}!\"\n",
            "welcome.yaml": """
            name: welcome
            entry: true
            sources:
              q: {type: request, parameters: {name: {default: Ana}}}
            components:
              - {name: label_component, identifier: hello, content: {value: {$text: hello, with: {name: q.name}}}}
            """,
            "newer.yaml": "name: newer\nversion: \">= 2.0\"\ncomponents: [{name: label_component, content: {value: New}}]",
            "choice.yaml": "name: choice\nentry: true\ncomponents: [{name: label_component, content: {value: Default}}]",
            "choice-b.yaml": "name: choice\nalternative: b\ncomponents: [{name: label_component, content: {value: B}}]",
            "versioned.yaml": "name: versioned\nentry: true\ncomponents: [{name: label_component, content: {value: Old}}]",
            "versioned-2.yaml": """
            name: versioned
            version: ">= 2.0"
            components: [{name: label_component, content: {value: New}}]
            """,
        ].mapValues { Array($0.utf8) }
    }

    static let application = buildApplication(
        configuration: .forTests(), screenSet: try! #require(ScreenSetLoader.load(files: files()).screenSet), logger: testLogger("test"))

    /// The revision of `plain`'s skeleton, as its data requests name it.
    static let revision = application.store.snapshot.screens["plain"]!.onlyVariant!.revision.digest

    /// The `ETag`s of `plain`'s identity and gzip forms.
    static let etags: (identity: String, gzip: String) = {
        let skeleton = application.store.snapshot.screens["plain"]!.onlyVariant!.skeleton
        return (skeleton.identity.tag.text, skeleton.gzip!.tag.text)
    }()

    /// The head of a request's bytes, read as a connection reads it.
    static func head(_ request: String) throws -> RequestHead {
        var parser = HTTPRequestParser(limits: HTTPRequestParser.Limits(maxTargetLength: 8192, maxFieldBytes: 65536))
        var head: RequestHead?
        let buffer = ByteBuffer(string: request)
        _ = try buffer.withUnsafeReadableBytes { bytes in
            try parser.parse(bytes) { event in
                guard case .head(let parsed, let headBytes) = event else { return true }
                let offset = headBytes.baseAddress! - bytes.baseAddress!
                head = RequestHead(parsed, bytes: headBytes, in: buffer.getSlice(at: buffer.readerIndex + offset, length: headBytes.count)!)
                return false
            }
        }
        return try #require(head, "no head was read in \(request)")
    }

    /// The response the responder answers a request's bytes with.
    static func response(_ request: String, application: Application = application) throws -> HTTPResponse {
        guard case .ready(let response) = application.responder.respond(to: HTTPRequest(head: try head(request))) else {
            Issue.record("not answered at once: \(request)")
            return HTTPResponse(error: .notFound(path: "-"))
        }
        return response
    }

    /// The status and the coding of the body (`200`, `200 gzip`, `304`, `304 gzip`).
    static func answer(_ request: String) throws -> String {
        let response = try response(request)
        let gzip = response.headers.first(name: "ETag")?.hasSuffix("-gzip\"") == true ? " gzip" : ""
        #expect((response.headers.first(name: "Content-Encoding") == "gzip") == (gzip != "" && response.status == .ok))
        return "\(response.status.code)\(gzip)"
    }

    static func get(_ target: String, _ fields: String...) -> String {
        "GET \(target) HTTP/1.1\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    @Test(
        "a skeleton, and data, are answered from the head's fields: the variant its version and language pick, the form its Accept-Encoding and If-None-Match ask"
    )
    func answered() throws {
        let (identity, gzip) = Self.etags
        let expected: [(String, String)] = [
            (Self.get("/screens/plain"), "200"),
            (Self.get("/screens/plain", "X-Bench: 1", "Accept-Language: fr", "X-Taksi-User: u1", "Traceparent: x"), "200"),
            (Self.get("/screens/plain", "Accept-Encoding: br, gzip;q=0.5"), "200 gzip"),
            (Self.get("/screens/plain", "accept-encoding: br", "Accept-Encoding: *"), "200 gzip"),
            (Self.get("/screens/plain", "Accept-Encoding: gzip;q=0, *"), "200"),
            (Self.get("/screens/plain", "If-None-Match: \(identity)"), "304"),
            (Self.get("/screens/plain", "If-None-Match: \"other\", W/\(identity)"), "304"),
            (Self.get("/screens/plain", "If-None-Match: \"other\"", "if-none-match: *"), "304"),
            (Self.get("/screens/plain", "If-None-Match: \(gzip)"), "200"),
            (Self.get("/screens/plain", "Accept-Encoding: gzip", "If-None-Match: \(gzip)"), "304 gzip"),
            (Self.get("/screens/plain", "Accept-Encoding: gzip", "If-None-Match: \(identity)"), "200 gzip"),
            (Self.get("/screens/plain", "Connection: keep-alive"), "200"),
            (Self.get("/screens/items/7"), "200"),
            (Self.get("/screens/items/-12", "If-None-Match: *"), "304"),
            (Self.get("/screens/items/7/"), "200"),
            (Self.get("/screens/plain/"), "200"),
            (Self.get("/screens/plain", "X-Taksi-Version: 2.0"), "200"),
            (Self.get("/screens/versioned"), "200"),
            (Self.get("/screens/versioned", "X-Taksi-Version: 2.0"), "200"),
            (Self.get("/screens/versioned/data", "X-Taksi-Version: 1.2"), "200"),
            (Self.get("/screens/newer", "X-Taksi-Version: 2.0.1"), "200"),
            (Self.get("/screens/welcome", "Accept-Language: pt-PT"), "200"),
            (Self.get("/screens/welcome"), "200"),
            (Self.get("/screens/plain/data"), "200"),
            (Self.get("/screens/plain/data", "X-Taksi-Skeleton: \(Self.revision)"), "200"),
            (Self.get("/screens/plain/data", "X-Taksi-Skeleton: \(Self.revision)", "x-taksi-skeleton: other"), "200"),
            (Self.get("/screens/plain/data/"), "200"),
            (Self.get("/screens/items/7/data"), "200"),
            (Self.get("/screens/items/7/data", "If-None-Match: *"), "304"),
        ]
        for (request, answer) in expected {
            #expect(try Self.answer(request) == answer, "\(request)")
        }
    }

    @Test("the head reads its fields once, as sent: the text made of them on demand is the fields' names and values, in order")
    func fields() throws {
        let request = Self.get(
            "/screens/plain?x=1", "Accept-Encoding:  br, gzip ", "X-Taksi-Version: 2.0", "x-taksi-version: 1.0",
            "X-Other: a:b", "Connection: keep-alive")
        let head = try Self.head(request)
        #expect(head.uri == "/screens/plain?x=1" && head.method == .GET && head.version == .http1_1)
        #expect(
            head.headers.map { "\($0.name)=\($0.value)" } == [
                "Host=a", "Accept-Encoding=br, gzip", "X-Taksi-Version=2.0", "x-taksi-version=1.0", "X-Other=a:b", "Connection=keep-alive",
            ])
        #expect(head.text(head.fields.version) == "2.0" && head.acceptsGzip && head.fields.hosts == 1 && head.isKeepAlive)
        // A head made in process is read the same way.
        let made = RequestHead(method: .GET, uri: "/screens/plain?x=1", headers: HTTPHeaders(head.headers.map { ($0.name, $0.value) }))
        #expect(made.uri == head.uri && made.headers == head.headers && made.fields.bytes == head.fields.bytes)
        #expect(made.text(made.fields.version) == "2.0" && made.acceptsGzip && made.isKeepAlive)
        #expect(try !Self.head("GET / HTTP/1.0\r\n\r\n").isKeepAlive)
        #expect(try !Self.head(Self.get("/", "Connection: close")).isKeepAlive)
    }

    @Test("the app's version picks the variant, from the head or by the selector alike")
    func versions() throws {
        func variant(_ request: String) throws -> String? { try Self.response(request).variant }
        #expect(try variant(Self.get("/screens/versioned")) == "versioned|*|default")
        #expect(try variant(Self.get("/screens/versioned", "X-Taksi-Version: 1.9.9")) == "versioned|*|default")
        #expect(try variant(Self.get("/screens/versioned", "X-Taksi-Version: 2.0")) == "versioned|>= 2.0|default")
        #expect(try variant(Self.get("/screens/versioned/data", "X-Taksi-Version: 3.1-beta.2")) == "versioned|>= 2.0|default")
        #expect(try variant(Self.get("/screens/versioned/data?version=3.0")) == "versioned|>= 2.0|default")
        #expect(try variant(Self.get("/screens/versioned/data?%76ersion=3.0")) == "versioned|>= 2.0|default")
        #expect(
            try variant(Self.get("/screens/versioned", "X-Taksi-Version: 2.0", "x-taksi-version: 1.0")) == "versioned|>= 2.0|default")
        #expect(try Self.response(Self.get("/screens/versioned", "X-Taksi-Version: 2.x")).status == .badRequest)
        #expect(try Self.response(Self.get("/screens/newer", "X-Taksi-Version: 1.0")).status == .notFound)
        #expect(try variant(Self.get("/screens/choice", "X-Taksi-Alternative: b")) == "choice|*|b")
        #expect(
            try variant(Self.get("/screens/plain", "X-Taksi-Alternative: b")) == "plain|*|default", "an unknown alternative: the default")
    }

    @Test("Accept-Language picks the locale as it is negotiated")
    func languages() throws {
        func locale(_ request: String) throws -> String? {
            try Self.response(request).headers.first(name: "Content-Language")
        }
        #expect(try locale(Self.get("/screens/welcome")) == "en")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: pt-BR,pt;q=0.9")) == "pt")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: fr, pt;q=0.5")) == "pt")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: fr", "Accept-Language: pt")) == "en")
        #expect(try locale(Self.get("/screens/plain", "Accept-Language: pt")) == nil)
    }

    /// Requests answered otherwise than from what is kept for the screen (an error, another
    /// variant, a header read as text, a connection's rule).
    static let others = [
        Self.get("/screens/newer"),
        Self.get("/screens/newer", "X-Taksi-Version: 1.0"),
        Self.get("/screens/plain", "X-Taksi-Version: x"),
        Self.get("/screens/choice"),
        Self.get("/screens/choice/data"),
        Self.get("/screens/plain/data?version=2.0"),
        Self.get("/screens/plain/data?x=1"),
        Self.get("/screens/plain/data", "X-Taksi-Skeleton: other"),
        Self.get("/screens/plain/data", "X-Taksi-Skeleton: other", "X-Taksi-Skeleton: \(revision)"),
        Self.get("/screens/greet/data?name=Ada"),
        Self.get("/screens/items/x/data"),
        Self.get("/screens/items/7/data?version=2.0"),
        Self.get("/screens/orders/7/data?note=x"),
        Self.get("/screens/items/7?x=1"),
        Self.get("/screens/nothing"),
        Self.get("/screens/items/x"),
        Self.get("/screens/plain?version=2.0"),
        Self.get("/screens/plain?"),
        Self.get("/screens/%70lain"),
        Self.get("http://a/screens/plain"),
        Self.get("/screens"),
        Self.get("/healthz"),
        Self.get("/screens/plain", "X-Taksi-Alternative: b"),
        Self.get("/screens/plain", "X-Request-Id: abc"),
        Self.get("/screens/plain", "Expect: 100-continue"),
        Self.get("/screens/plain", "Content-Length: 0"),
        Self.get("/screens/plain", "Connection: close"),
        Self.get("/screens/plain", "Connection: keep-alive, Upgrade", "Upgrade: websocket"),
        Self.get("/screens/plain", "Host: b"),
        Self.get("/screens/plain", "X-Big: " + String(repeating: "x", count: ConnectionLimits().maxHeaderBytes)),
        "GET /screens/plain HTTP/1.1\r\n\r\n",
        "GET /screens/plain HTTP/1.0\r\nHost: a\r\n\r\n",
        "HEAD /screens/plain HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /screens/plain HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx",
        "OPTIONS /screens/plain HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /screens/plain HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ]

    /// A connection's bytes with the parts that differ per connection and moment (`Date`, the
    /// generated `X-Request-Id`) blanked.
    static func comparable(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map { line in
            if line.hasPrefix("Date: ") { return "Date: -" }
            if line.hasPrefix("X-Request-Id: "), line.contains("-") { return "X-Request-Id: -" }
            return line
        }.joined(separator: "\r\n")
    }

    @Test("a connection writes the same bytes for the same requests one by one, pipelined in one read, and a byte a read")
    func sameBytesHoweverTheyArrive() throws {
        let application = buildApplication(
            configuration: .forTests(), screenSet: try #require(ScreenSetLoader.load(files: Self.files()).screenSet),
            logger: testLogger("test"))
        let (identity, gzip) = Self.etags
        let answered =
            [
                Self.get("/screens/plain"), Self.get("/screens/plain", "Accept-Encoding: gzip"),
                Self.get("/screens/plain", "If-None-Match: \(identity)"),
                Self.get("/screens/plain", "Accept-Encoding: gzip", "If-None-Match: \(gzip)"),
                Self.get("/screens/items/7"), Self.get("/screens/plain", "Connection: keep-alive"), Self.get("/screens/plain/"),
                Self.get("/screens/items/7/data"), Self.get("/screens/plain/data/"),
                Self.get("/screens/plain/data"), Self.get("/screens/plain/data", "X-Taksi-Skeleton: \(Self.revision)"),
                Self.get("/screens/versioned", "X-Taksi-Version: 2.0"), Self.get("/screens/versioned"),
                Self.get("/screens/versioned/data", "X-Taksi-Version: 2.0"),
                Self.get("/screens/greet/data?name=Ada", "X-Taksi-Version: 2.0"),
                Self.get("/screens/welcome", "Accept-Language: pt"), Self.get("/screens/welcome", "Accept-Language: fr"),
            ] + Array(repeating: Self.get("/screens/welcome/data?name=Bia", "Accept-Language: pt-PT"), count: 4)
            + Array(repeating: Self.get("/screens/greet/data?name=Ada", "Accept-Encoding: gzip"), count: 4)
            + Array(repeating: Self.get("/screens/orders/7/data?note=x"), count: 4)
        // The others, but for the ones that end the connection.
        let kept = try Self.others.filter { request in
            let connection = try HTTPConnectionHandlerTests.Connection(application: application)
            try connection.send(request)
            return connection.channel.isActive
        }
        #expect(kept.count > Self.others.count / 2)
        var sequences = (answered + Self.others).map { [$0] }
        sequences.append(answered + kept + answered)
        sequences.append(kept.reversed() + answered)
        for sequence in sequences {
            let single = try HTTPConnectionHandlerTests.Connection(application: application)
            for request in sequence { try single.send(request) }
            let oneByOne = try Self.comparable(single.written())
            #expect(oneByOne.contains("HTTP/1.1 "))

            let whole = try HTTPConnectionHandlerTests.Connection(application: application)
            try whole.send(sequence.joined())
            let bytes = try HTTPConnectionHandlerTests.Connection(application: application)
            for byte in sequence.joined().utf8 { try bytes.send(String(decoding: [byte], as: UTF8.self)) }
            #expect(try Self.comparable(whole.written()) == oneByOne, "\(sequence)")
            #expect(try Self.comparable(bytes.written()) == oneByOne, "\(sequence)")
            #expect(whole.channel.isActive == single.channel.isActive && bytes.channel.isActive == single.channel.isActive)
        }
    }

    @Test("a reload is answered from the new set at once; the last request of a connection closes it")
    func reloadAndLastRequest() throws {
        let application = buildApplication(
            configuration: .forTests(), screenSet: try #require(ScreenSetLoader.load(files: Self.files(title: "One")).screenSet),
            logger: testLogger("test"))
        var limits = ConnectionLimits()
        limits.maxRequestsPerConnection = 3
        let connection = try HTTPConnectionHandlerTests.Connection(limits: limits, application: application)
        try connection.send(Self.get("/screens/plain"))
        #expect(try connection.written().contains("\"value\":\"One\""))
        application.store.replace(with: try #require(ScreenSetLoader.load(files: Self.files(title: "Two")).screenSet))
        try connection.send(Self.get("/screens/plain"))
        let second = try connection.written()
        #expect(second.contains("\"value\":\"Two\"") && !second.contains("Connection: close"))
        try connection.send(Self.get("/screens/plain"))
        #expect(try connection.written().contains("Connection: close"))
        #expect(!connection.channel.isActive)
    }

    /// `taksi_data_memo_lookups_total`'s hits and misses so far.
    static func memoLookups(_ application: Application) async throws -> (hits: Int, misses: Int) {
        let text = try await application.execute(uri: "/metrics").text
        func count(_ result: String) -> Int {
            let prefix = "taksi_data_memo_lookups_total{result=\"\(result)\"} "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
        }
        return (count("hit"), count("miss"))
    }

    @Test("data of request values kept for that very target is answered without reading its query, counted as any kept answer")
    func keptData() async throws {
        let screens = try #require(ScreenSetLoader.load(files: Self.files()).screenSet)
        let application = buildApplication(configuration: .forTests(), screenSet: screens, logger: testLogger("test"))
        let ada = Self.get("/screens/greet/data?name=Ada")
        // Rendered (a miss), kept the second time (a miss), found by its inputs and remembered by
        // its target the third (a hit), found by its target after (hits).
        for _ in 0..<5 { #expect(try Self.response(ada, application: application).body.readableBytes > 0) }
        var lookups = try await Self.memoLookups(application)
        #expect(lookups.hits == 3 && lookups.misses == 2, "\(lookups)")
        let etag = try #require(try Self.response(ada, application: application).headers.first(name: "ETag"))
        let revision = try #require(application.store.snapshot.screens["greet"]?.onlyVariant?.revision.digest)
        let expected: [(String, String)] = [
            (Self.get("/screens/greet/data?name=Ada", "If-None-Match: \(etag)"), "304"),
            (Self.get("/screens/greet/data?name=Ada", "Accept-Encoding: gzip"), "200 gzip"),
            (Self.get("/screens/greet/data?name=Ada", "X-Taksi-Skeleton: \(revision)"), "200"),
            (Self.get("/screens/greet/data?name=Ada", "X-Taksi-Skeleton: other"), "412"),
        ]
        for (request, answer) in expected {
            let response = try Self.response(request, application: application)
            let gzip = response.headers.first(name: "Content-Encoding") == "gzip" ? " gzip" : ""
            #expect("\(response.status.code)\(gzip)" == answer, "\(request)")
        }
        lookups = try await Self.memoLookups(application)
        #expect(lookups.hits == 7 && lookups.misses == 2, "\(lookups)")
        // Other values are other inputs: rendered.
        #expect(try Self.response(Self.get("/screens/greet/data?name=Bob"), application: application).status == .ok)
        #expect(try await Self.memoLookups(application).misses == 3)
        // A reload's variants are other variants: nothing remembered for the earlier ones answers.
        application.store.replace(with: screens)
        #expect(try Self.response(ada, application: application).status == .ok)
        #expect(try await Self.memoLookups(application).misses == 4)
    }

    @Test("data of a screen with path parameters kept for that very target is answered so too")
    func keptPathData() async throws {
        let application = buildApplication(
            configuration: .forTests(), screenSet: try #require(ScreenSetLoader.load(files: Self.files()).screenSet),
            logger: testLogger("test"))
        let order = Self.get("/screens/orders/7/data?note=x")
        for _ in 0..<4 { #expect(String(buffer: try Self.response(order, application: application).body).contains("Order 7: x")) }
        #expect(try await Self.memoLookups(application) == (2, 2))
        #expect(
            String(buffer: try Self.response(Self.get("/screens/orders/8/data?note=x"), application: application).body).contains(
                "Order 8: x"))
        #expect(try await Self.memoLookups(application) == (2, 3))
    }

    @Test("a path matched to a screen's pattern is kept with its values; one whose value does not fit is refused each time")
    func matchedPaths() throws {
        let screens = try #require(ScreenSetLoader.load(files: Self.files()).screenSet)
        let set = ServedScreenSet(screens)
        for _ in 0..<2 {
            let (screen, values) = try set.screen(at: "items/7")
            #expect(screen.variants.name == "items/{id}")
            #expect(values == ["id": .number(7)])
        }
        for _ in 0..<2 {
            #expect(throws: APIError.self) { try set.screen(at: "items/seven") }
        }
        #expect(throws: APIError.self) { try set.screen(at: "items/7/more") }
        // Past the bound the kept paths are forgotten, and every path is still matched.
        for id in 0...ServedScreenSet.maxMatchedPaths { _ = try set.screen(at: "items/\(id)") }
        #expect(try set.screen(at: "items/42").1 == ["id": .number(42)])
        #expect(try set.screen(at: "plain").0.variants.name == "plain")
    }
}

extension RequestPathTests {
    /// The response kept for a request's target, as the data endpoint's first stage finds it
    /// (``ResponseMemo/answer(for:of:)``), for the only variant of the screen whose data it asks
    /// for: its status (`200`, `304`), or nil when there is none.
    static func kept(_ request: String, application: Application) throws -> HTTPResponse? {
        let head = try Self.head(request)
        let path = head.uri.prefix { $0 != "?" }
        let name = String(path.dropFirst("/screens/".count).dropLast("/data".count))
        let variant = try #require(application.store.snapshot.screens[name]?.onlyVariant, "\(name)")
        return application.memo.answer(for: head, of: variant.memoID).map { $0.entry.response(to: head) }
    }
}
