import NIOCore
import NIOHTTP1
import TaksiScreens
import TaksiTestSupport
import Testing

@testable import TaksiServer

/// Skeletons and data answered from a request head's bytes (``ServedScreenSet/precomputedAnswer(to:bytes:maxHeaderBytes:memo:)``):
/// which requests are, with which variant and response, and that a connection writes the same
/// bytes, and counts the same, whether it answers them that way or the general way.
@Suite("Precomputed answers")
struct PrecomputedAnswersTests {
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

    static let set = ServedScreenSet(try! #require(ScreenSetLoader.load(files: files()).screenSet))

    /// The revision of `plain`'s skeleton, as its data requests name it.
    static let revision = set.screens["plain"]!.onlyVariant!.revision.digest

    /// The `ETag`s of `plain`'s identity and gzip forms.
    static let etags: (identity: String, gzip: String) = {
        let skeleton = set.screens["plain"]!.onlyVariant!.skeleton
        return (skeleton.identity.etag, skeleton.gzip!.etag)
    }()

    /// What the set answers a request from its head: nil (the general way), or the status and
    /// the coding of the body (`200`, `200 gzip`, `304`, `304 gzip`).
    /// - Parameters:
    ///   - set: the set answering; ``set`` by default.
    ///   - memo: the data responses kept, for data of request values.
    static func answer(_ request: String, set: ServedScreenSet = set, memo: ResponseMemo? = nil) throws -> String? {
        try precomputed(request, set: set, memo: memo).map { answer in
            let response = answer.response
            let gzip = response.headers.first(name: "ETag")?.hasSuffix("-gzip\"") == true ? " gzip" : ""
            #expect((response.headers.first(name: "Content-Encoding") == "gzip") == (gzip != "" && response.status == .ok))
            return "\(response.status.code)\(gzip)"
        }
    }

    /// What the set answers a request from its head (nil: the general way), its request head
    /// checked: `GET` of the target's path (the access log's: the query left out), HTTP/1.1.
    static func precomputed(_ request: String, set: ServedScreenSet = set, memo: ResponseMemo? = nil) throws -> PrecomputedAnswer? {
        var parser = HTTPRequestParser(limits: HTTPRequestParser.Limits(maxTargetLength: 8192, maxFieldBytes: 65536))
        var answer: PrecomputedAnswer??
        _ = try Array(request.utf8).withUnsafeBytes { bytes in
            try parser.parse(bytes) { event in
                guard case .head(let head, let headBytes) = event else { return true }
                let found = set.precomputedAnswer(to: head, bytes: headBytes, maxHeaderBytes: ConnectionLimits().maxHeaderBytes, memo: memo)
                if let found {
                    let path = String(decoding: headBytes[head.target], as: UTF8.self).prefix { $0 != "?" }
                    #expect(found.head.uri == path && found.head.method == .GET && found.head.version == .http1_1)
                }
                answer = .some(found)
                return false
            }
        }
        return try #require(answer, "no head was read in \(request)")
    }

    static func get(_ target: String, _ fields: String...) -> String {
        "GET \(target) HTTP/1.1\r\nHost: a\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    @Test("a GET of a screen its head picks the variant of is answered from its head, as its Accept-Encoding and If-None-Match ask")
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

    /// Requests the general way answers (an error, another variant, a header it reads).
    static let general = [
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

    @Test("the app's version picks the variant as the general way picks it")
    func versions() throws {
        func variant(_ request: String) throws -> String? { try Self.precomputed(request)?.variant.compiled.variantID }
        #expect(try variant(Self.get("/screens/versioned")) == "versioned|*|default")
        #expect(try variant(Self.get("/screens/versioned", "X-Taksi-Version: 1.9.9")) == "versioned|*|default")
        #expect(try variant(Self.get("/screens/versioned", "X-Taksi-Version: 2.0")) == "versioned|>= 2.0|default")
        #expect(try variant(Self.get("/screens/versioned/data", "X-Taksi-Version: 3.1-beta.2")) == "versioned|>= 2.0|default")
        #expect(
            try variant(Self.get("/screens/versioned", "X-Taksi-Version: 2.0", "x-taksi-version: 1.0")) == "versioned|>= 2.0|default")
        #expect(try variant(Self.get("/screens/versioned", "X-Taksi-Version: 2.x")) == nil)
    }

    @Test("Accept-Language picks the locale as the general way negotiates it")
    func languages() throws {
        func locale(_ request: String) throws -> String? {
            try #require(try Self.precomputed(request), "not answered: \(request)").variant.compiled.locale
        }
        #expect(try locale(Self.get("/screens/welcome")) == "en")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: pt-BR,pt;q=0.9")) == "pt")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: fr, pt;q=0.5")) == "pt")
        #expect(try locale(Self.get("/screens/welcome", "Accept-Language: fr", "Accept-Language: pt")) == "en")
        #expect(try locale(Self.get("/screens/plain", "Accept-Language: pt")) == nil)
    }

    @Test("anything the general way reads differently is left to it")
    func leftToTheGeneralWay() throws {
        for request in Self.general {
            #expect(try Self.answer(request) == nil, "\(request)")
        }
    }

    /// A connection's bytes with the parts that differ per connection and moment (`Date`, the
    /// generated `X-Request-Id`) blanked.
    static func comparable(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map { line in
            if line.hasPrefix("Date: ") { return "Date: -" }
            if line.hasPrefix("X-Request-Id: "), line.contains("-") { return "X-Request-Id: -" }
            return line
        }.joined(separator: "\r\n")
    }

    @Test("a connection writes the same bytes whether it answers from heads or the general way: one by one, pipelined, a byte a read")
    func sameBytesBothWays() throws {
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
        // Those the general way answers, but for the ones that end the connection.
        let kept = try Self.general.filter { request in
            let connection = try HTTPConnectionHandlerTests.Connection(application: application)
            try connection.send(request)
            return connection.channel.isActive
        }
        #expect(kept.count > Self.general.count / 2)
        var sequences = (answered + Self.general).map { [$0] }
        sequences.append(answered + kept + answered)
        sequences.append(kept.reversed() + answered)
        for sequence in sequences {
            let fast = try HTTPConnectionHandlerTests.Connection(application: application, answersFromHeads: true)
            let general = try HTTPConnectionHandlerTests.Connection(application: application, answersFromHeads: false)
            // One request a read, all in one read, and a byte a read.
            for connection in [fast, general] {
                for request in sequence { try connection.send(request) }
            }
            let oneByOne = try Self.comparable(fast.written())
            #expect(oneByOne == Self.comparable(try general.written()), "\(sequence)")
            #expect(oneByOne.contains("HTTP/1.1 "))
            #expect(fast.channel.isActive == general.channel.isActive)

            let whole = try HTTPConnectionHandlerTests.Connection(application: application, answersFromHeads: true)
            try whole.send(sequence.joined())
            let bytes = try HTTPConnectionHandlerTests.Connection(application: application, answersFromHeads: true)
            for byte in sequence.joined().utf8 { try bytes.send(String(decoding: [byte], as: UTF8.self)) }
            #expect(try Self.comparable(whole.written()) == oneByOne, "\(sequence)")
            #expect(try Self.comparable(bytes.written()) == oneByOne, "\(sequence)")
        }
    }

    @Test("a reload answers from the new set's heads at once; the last request of a connection is answered the general way and closes it")
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

    @Test("data of request values is answered from the head once the general way kept it for that very target, and counted alike")
    func keptData() throws {
        let screens = try #require(ScreenSetLoader.load(files: Self.files()).screenSet)
        let fast = buildApplication(configuration: .forTests(), screenSet: screens, logger: testLogger("test"))
        let memo = try #require(fast.responder.memo)
        let ada = Self.get("/screens/greet/data?name=Ada")
        let connection = try HTTPConnectionHandlerTests.Connection(application: fast)
        // Rendered, kept the second time, remembered by its target the third; from the head after.
        for expected in [nil, nil, nil, "200"] as [String?] {
            #expect(try Self.answer(ada, set: fast.store.snapshot, memo: memo) == expected)
            try connection.send(ada)
            #expect(try connection.written().contains("Hi Ada"))
        }
        try connection.send(ada)
        let etag = try #require(
            try connection.written().components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") }?.dropFirst(6))
        let revision = try #require(fast.store.snapshot.screens["greet"]?.onlyVariant?.revision.digest)
        let expected: [(String, String?)] = [
            (Self.get("/screens/greet/data?name=Ada", "If-None-Match: \(etag)"), "304"),
            (Self.get("/screens/greet/data?name=Ada", "Accept-Encoding: gzip"), "200 gzip"),
            (Self.get("/screens/greet/data?name=Ada", "X-Taksi-Skeleton: \(revision)"), "200"),
            (Self.get("/screens/greet/data?name=Ada", "X-Taksi-Skeleton: other"), nil),
            (Self.get("/screens/greet/data?name=Bob"), nil),
            (Self.get("/screens/greet/data?name=Ada&x=1"), nil),
            (Self.get("/screens/greet/data?name=%41da"), nil),
            (Self.get("/screens/greet/data?name=Ada", "X-Request-Id: a"), nil),
        ]
        for (request, answer) in expected {
            #expect(try Self.answer(request, set: fast.store.snapshot, memo: memo) == answer, "\(request)")
        }
        // A reload's variants are other variants: nothing remembered for the earlier ones answers.
        fast.store.replace(with: screens)
        #expect(try Self.answer(ada, set: fast.store.snapshot, memo: memo) == nil)

        // The same requests, from heads and the general way, counted the same.
        let sequence =
            Array(repeating: ada, count: 6) + [
                Self.get("/screens/plain/data"), Self.get("/screens/plain/data", "X-Taksi-Skeleton: \(Self.revision)"),
                Self.get("/screens/plain"), Self.get("/screens/greet/data?name=Ada", "X-Taksi-Skeleton: \(revision)"),
            ]
        var counted: [String] = []
        for answersFromHeads in [true, false] {
            let application = buildApplication(configuration: .forTests(), screenSet: screens, logger: testLogger("test"))
            let connection = try HTTPConnectionHandlerTests.Connection(application: application, answersFromHeads: answersFromHeads)
            for request in sequence { try connection.send(request) }
            _ = try connection.written()
            try connection.send("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
            let lines = try connection.written().components(separatedBy: "\n").filter {
                ["taksi_variant_", "taksi_skeleton_revisions_total", "taksi_data_memo_lookups_total"].contains(where: $0.hasPrefix)
            }
            counted.append(lines.sorted().joined(separator: "\n"))
        }
        #expect(counted[0] == counted[1])
        #expect(counted[0].contains("taksi_variant_data_total{screen=\"greet\",variant=\"greet|*|default\"} 7"), "\(counted[0])")
        #expect(counted[0].contains("taksi_skeleton_revisions_total{result=\"absent\"} 7"), "\(counted[0])")
    }

    @Test("targets routed to a screen with path parameters are kept once routed, a bounded number of them")
    func routedTargets() throws {
        let set = ServedScreenSet(try #require(ScreenSetLoader.load(files: Self.files()).screenSet))
        #expect(set.headTargets.routedCount == 0)
        for _ in 0..<2 {
            #expect(try Self.precomputed(Self.get("/screens/items/1"), set: set)?.head.uri == "/screens/items/1")
            #expect(try Self.precomputed(Self.get("/screens/items/1/data"), set: set)?.head.uri == "/screens/items/1/data")
        }
        #expect(set.headTargets.routedCount == 2, "each routed once, and kept")
        #expect(try Self.precomputed(Self.get("/screens/plain"), set: set) != nil)
        #expect(set.headTargets.routedCount == 2, "a screen without parameters is in the set's own table")
        // Past the bound the table starts over: every target is still answered, each as its own.
        for id in 2...(ServedScreenSet.HeadTargets.maxRouted + 10) {
            for target in ["/screens/items/\(id)", "/screens/items/\(id)/data"] {
                let answer = try #require(try Self.precomputed(Self.get(target), set: set), "\(target)")
                #expect(answer.head.uri == target)
            }
            #expect(set.headTargets.routedCount <= ServedScreenSet.HeadTargets.maxRouted)
        }
        for _ in 0..<2 {
            #expect(try Self.precomputed(Self.get("/screens/items/7/"), set: set)?.head.uri == "/screens/items/7/")
            #expect(try Self.precomputed(Self.get("/screens/items/x"), set: set) == nil, "a value that does not fit its parameter")
            #expect(try Self.precomputed(Self.get("/screens/items/7?x=1"), set: set) == nil, "routed, but a skeleton's query")
        }
    }

    @Test("data of a screen with path parameters is answered from the head once kept for that very target")
    func keptPathData() throws {
        let application = buildApplication(
            configuration: .forTests(), screenSet: try #require(ScreenSetLoader.load(files: Self.files()).screenSet),
            logger: testLogger("test"))
        let memo = try #require(application.responder.memo)
        let order = Self.get("/screens/orders/7/data?note=x")
        let connection = try HTTPConnectionHandlerTests.Connection(application: application)
        for expected in [nil, nil, nil, "200"] as [String?] {
            #expect(try Self.answer(order, set: application.store.snapshot, memo: memo) == expected)
            try connection.send(order)
            #expect(try connection.written().contains("Order 7: x"))
        }
        #expect(try Self.answer(Self.get("/screens/orders/8/data?note=x"), set: application.store.snapshot, memo: memo) == nil)
        #expect(try Self.answer(Self.get("/screens/orders/7/data?note=y"), set: application.store.snapshot, memo: memo) == nil)
    }
}
