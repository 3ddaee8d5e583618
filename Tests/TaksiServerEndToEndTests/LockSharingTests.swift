import LockCensus
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TaksiScreens
import TaksiServer
import TaksiTestSupport
import Testing

/// No lock is shared between event loops on a request's way: a server with two event loops, a
/// connection on each, the same requests on both, and every mutex each loop's thread takes
/// recorded (``LockCensus``). A lock taken by both threads is one they share; a loop's own locks
/// (SwiftNIO's task queue) are taken by that loop alone.
@Suite("Locks shared between event loops")
struct LockSharingTests {
    /// One kind of request, the way `Benchmarks/run.sh` names its rows.
    struct Row: CustomStringConvertible {
        var name: String
        /// The request's target; `{n}` is replaced by a number new for each request.
        var target: String
        var headers: [(String, String)] = []
        var description: String { name }

        func request(_ number: Int) -> String {
            "GET \(target.replacingOccurrences(of: "{n}", with: String(number))) HTTP/1.1\r\nHost: a\r\n"
                + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        }
    }

    static let requestsPerConnection = 400

    /// A screen of each kind the benchmark's rows ask for, over the fixtures' CityBikes answers
    /// (and an experiment's, `landing`, from ``SharedScreens/experiment(_:)``).
    static let files = [
        "welcome.yaml": """
        name: welcome
        sources:
          query:
            type: request
            parameters:
              name: {type: string, default: friend}
        components:
          - {name: label_component, identifier: blurb, content: {value: "\(String(repeating: "Made to order, shipped in a week. ", count: 20))"}}
          - {name: label_component, identifier: hello, content: {value: {$template: "Hello, {query.name}"}}}
        """,
        "stations.yaml": """
        name: stations/{network}
        parameters:
          network: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
        sources:
          citybikes: {type: http, upstream: citybikes, path: "/v2/networks/{network}", ttl: 300}
        components:
          - {name: label_component, identifier: title, content: {value: {$bind: citybikes.network.name}}}
        """,
        "search.yaml": """
        name: search
        sources:
          citybikes:
            type: http
            upstream: citybikes
            path: /v2/networks/{network}
            parameters:
              network: {type: string, required: true}
            headers: [Accept-Language]
            ttl: 300
        components:
          - {name: label_component, identifier: title, content: {value: {$bind: citybikes.network.name}}}
        """,
    ]

    #if os(Linux)
    @Test(
        "no row of the benchmark takes a lock another event loop takes: skeletons, 304, kept data, cached upstream data, a new value each time"
    )
    func noSharedLocks() async throws {
        try Self.checkCensusSeesNIOLocks()
        var configuration = ServerConfiguration.forTests()
        configuration.threads = 2
        configuration.upstreams = ["citybikes": fixtureUpstreams["citybikes"] ?? ""]
        // As shipped: the access log on (to a file; standard error is the test runner's).
        configuration.accessLog = true
        configuration.accessLogOutput = .file(Scratch.path("access", suffix: ".log").path)
        let load = ScreenSetLoader.load(files: Self.files.mapValues { Array($0.utf8) }.merging(SharedScreens.experiment()) { $1 })
        let screens = try #require(load.screenSet, "\(load.diagnostics.report)")
        let application = buildApplication(configuration: configuration, screenSet: screens, logger: testLogger("test"))
        try await withServer(threads: 2, start: { try await application.start(on: $0) }) { server, group in
            try await Self.checkRows(of: server, on: group)
        }
    }

    /// Serves every row on `group`'s two loops and checks each.
    static func checkRows(of server: HTTPServer, on group: MultiThreadedEventLoopGroup) async throws {
        let port = try #require(server.port)
        let first = try RawConnection(port: port)
        first.send(Row(name: "skeleton", target: "/screens/welcome").request(0))
        let etag = try #require(await first.receive(1).first?.header("ETag"))
        let rows = [
            Row(name: "skeleton", target: "/screens/welcome"),
            Row(name: "skeleton gzip", target: "/screens/welcome", headers: [("Accept-Encoding", "gzip")]),
            Row(name: "304", target: "/screens/welcome", headers: [("If-None-Match", etag)]),
            Row(name: "skeleton, path parameter", target: "/screens/stations/velib"),
            Row(name: "data, request value", target: "/screens/welcome/data?name=Ada"),
            Row(name: "data, cached upstream, path parameter", target: "/screens/stations/velib/data"),
            Row(
                name: "data, cached upstream, query", target: "/screens/search/data?network=velib", headers: [("Accept-Language", "fr")]
            ),
            Row(name: "data, a new request value each time", target: "/screens/welcome/data?name=visitor-{n}"),
            // Recorded as exposed by its first request (the warm-up): a repeat after that.
            Row(
                name: "skeleton of an experiment, a user exposed before", target: "/screens/landing", headers: [("X-Taksi-User", "ada")]
            ),
        ]
        var report: [String] = []
        for row in rows {
            let perRequest = try await Self.sharedAcquisitions(of: row, port: port, loops: Array(group.makeIterator()))
            report.append("\(row.name): \(perRequest) shared-lock acquisitions per request")
            // None per request: a lock taken per request counts 1 or more. What is not a request's
            // (the access log's chunk handed to its writer every 64 KB or second, a metric series
            // made the first time a loop counts it, SwiftNIO's own work under a loaded machine)
            // has counted 0.003 to 0.06 here.
            #expect(perRequest < 0.25, "\(row.name): \(perRequest) acquisitions of locks both loops take, per request")
        }
        print(report.joined(separator: "\n"))
    }

    /// The census sees a lock SwiftNIO's code takes (it is built into this executable).
    static func checkCensusSeesNIOLocks() throws {
        let lock = NIOLock()
        lock_census_clear()
        lock_census_record_this_thread(1)
        lock.withLock {}
        lock_census_record_this_thread(0)
        let this = lock_census_this_thread()
        let seen = (0..<lock_census_count()).contains { index in
            var thread: UInt64 = 0
            var mutex: UInt64 = 0
            lock_census_entry(index, &thread, &mutex)
            return thread == this
        }
        try #require(seen, "the lock census does not see SwiftNIO's locks: pthread_mutex_lock is not interposed")
    }

    /// Acquisitions per request of the locks both loops took while each answered `row` on its own
    /// connections (after answering it once, so what a first request makes is made).
    static func sharedAcquisitions(of row: Row, port: Int, loops: [any EventLoop]) async throws -> Double {
        // Connections go to the loops in turn: four put two on each.
        let connections = try (0..<4).map { _ in try RawConnection(port: port) }
        for (index, connection) in connections.enumerated() {
            connection.send(row.request(-1 - index))
            #expect(await connection.receive(1).first.map { $0.status < 400 } == true, "\(row.name): the warm-up request failed")
        }
        var threads: [UInt64] = []
        for loop in loops { threads.append(try await loop.submit { lock_census_this_thread() }.get()) }
        lock_census_clear()
        for loop in loops { try await loop.submit { lock_census_record_this_thread(1) }.get() }
        for (index, connection) in connections.enumerated() {
            let first = index * requestsPerConnection
            connection.send((first..<first + requestsPerConnection).map(row.request).joined())
        }
        for connection in connections {
            let statuses = await connection.receive(requestsPerConnection).map(\.status)
            #expect(statuses.count == requestsPerConnection && statuses.allSatisfy { $0 < 400 }, "\(row.name): \(Set(statuses))")
        }
        for loop in loops { try await loop.submit { lock_census_record_this_thread(0) }.get() }
        var taken: [UInt64: [UInt64: Int]] = [:]
        for index in 0..<lock_census_count() {
            var thread: UInt64 = 0
            var mutex: UInt64 = 0
            lock_census_entry(index, &thread, &mutex)
            taken[thread, default: [:]][mutex, default: 0] += 1
        }
        let byLoop = threads.map { taken[$0] ?? [:] }
        try #require(byLoop.allSatisfy { !$0.isEmpty }, "\(row.name): a loop recorded nothing; the connections did not reach both")
        let shared = Set(byLoop[0].keys).intersection(byLoop[1].keys)
        let acquisitions = byLoop.reduce(0) { sum, locks in sum + shared.reduce(0) { $0 + (locks[$1] ?? 0) } }
        return Double(acquisitions) / Double(connections.count * requestsPerConnection)
    }
    #endif
}
