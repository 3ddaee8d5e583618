import Foundation
import Logging
import NIOCore
import NIOPosix
import TaksiSchema
import TaksiScreens
import TaksiServer
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The tests' own screen set, `Tests/Fixtures/Screens`: every kind of screen (versions, an
/// experiment, custom components, fixture, request and upstream sources). It began as a copy of
/// the examples and is frozen, so a team can replace `Screens/` without breaking these tests;
/// only `ExampleScreensTests` checks the examples.
let fixtureScreensDirectory = repositoryRoot.appendingPathComponent("Tests/Fixtures/Screens")

/// ``fixtureScreensDirectory``, loaded once.
let fixtureScreens: ScreenSet = {
    let load = ScreenSetLoader.load(directory: fixtureScreensDirectory.path)
    guard let set = load.screenSet else { preconditionFailure("the test screens do not load:\n\(load.diagnostics.report)") }
    return set
}()

/// The fixture set's upstreams: offline answers under `Tests/Fixtures/upstreams`.
let fixtureUpstreams = [
    "citybikes": "file:" + repositoryRoot.appendingPathComponent("Tests/Fixtures/upstreams/citybikes").path,
    "github": "file:" + repositoryRoot.appendingPathComponent("Tests/Fixtures/upstreams/github").path,
]

/// An application over the fixture screens, bound to port 0 on loopback.
func fixtureApplication(limits: ConnectionLimits = ConnectionLimits()) -> Application {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.threads = 1
    configuration.accessLog = false
    configuration.upstreams = fixtureUpstreams
    configuration.limits = limits
    return buildApplication(configuration: configuration, screenSet: fixtureScreens, logger: Logger(label: "test"))
}

/// Runs `body` against the real server over the fixture screens on a free port, then drains it.
func withRunningServer(limits: ConnectionLimits = ConnectionLimits(), _ body: (Int) async throws -> Void) async throws {
    try await withRunningServer(fixtureApplication(limits: limits), body)
}

/// Runs `body` against `application`'s real server on a free port (it must be configured for
/// port 0), then drains it.
func withRunningServer(_ application: Application, _ body: (Int) async throws -> Void) async throws {
    try await withRunningServer(application) { port, _ in try await body(port) }
}

/// Runs `body` against `application`'s real server, given its port and the server itself (to
/// flush or reopen its access log), then drains it.
func withRunningServer(_ application: Application, _ body: (Int, HTTPServer) async throws -> Void) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    // The server is released before its event loops stop: NIO's quiescing helper completes a
    // promise on them when it goes, and NIO reports (and will one day trap on) work scheduled
    // on a loop that has shut down.
    func run() async throws {
        let server = try await application.start(on: group)
        do {
            try await body(try #require(server.port), server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
    do {
        try await run()
    } catch {
        try await group.shutdownGracefully()
        throw error
    }
    try await group.shutdownGracefully()
}

/// Runs a command (found on PATH) in the repository's root; its exit status and its output and
/// errors together. For the independent checkers some tests use (Python validators, scripts).
func runTool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// One parsed HTTP/1.1 response.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var json: JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
    }
}

/// A deliberately plain blocking HTTP/1.1 client over a socket: it writes exactly the bytes given
/// (so tests can pipeline), and reads until it has parsed the expected responses or the peer
/// closes. A receive timeout keeps a broken server from hanging the suite.
final class RawConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Where the unparsed bytes of `buffer` start.
    private var start = 0

    /// - Parameter receiveBuffer: a small kernel receive buffer, so a client that does not read
    ///   pushes back on the server quickly.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    /// Sends bytes as they are, including ones that are not UTF-8.
    func send(bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a peer that closed gives an error here, not a SIGPIPE that ends the tests.
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard result > 0 else { return }
            sent += result
        }
    }

    /// Reads `count` responses; `headRequests` says which of them answer HEAD (and so have no body).
    func receive(_ count: Int, headRequests: Set<Int> = []) -> [RawResponse] {
        var responses: [RawResponse] = []
        while responses.count < count {
            if let response = parse(isHead: headRequests.contains(responses.count)) {
                responses.append(response)
                continue
            }
            guard fill() else { break }
        }
        return responses
    }

    /// ``receive(_:headRequests:)`` on a thread of its own, for tests whose server answers from
    /// Swift tasks: a blocking read on the cooperative pool could starve the tasks it waits for.
    func receiveOffPool(_ count: Int) async -> [RawResponse] {
        await withCheckedContinuation { continuation in
            let box = UncheckedBox(self)
            Thread { continuation.resume(returning: box.value.receive(count)) }.start()
        }
    }

    /// What arrives until `marker` has arrived `count` times (or the peer closes, or the receive
    /// timeout passes), as text from the first unread byte, all of it read: for streamed responses.
    func receiveText(until marker: String, count: Int = 1) -> String {
        func text() -> String { String(decoding: buffer[start...], as: UTF8.self) }
        while text().components(separatedBy: marker).count - 1 < count {
            guard fill() else { break }
        }
        defer { start = buffer.count }
        return text()
    }

    /// ``receiveText(until:count:)`` on a thread of its own (see ``receiveOffPool(_:)``).
    func receiveTextOffPool(until marker: String, count: Int = 1) async -> String {
        await withCheckedContinuation { continuation in
            let box = UncheckedBox(self)
            Thread { continuation.resume(returning: box.value.receiveText(until: marker, count: count)) }.start()
        }
    }

    /// Whether the server closed the connection (reads end-of-file).
    func isClosedByPeer() -> Bool {
        !fill() && start == buffer.count
    }

    /// Whether bytes (or end-of-file) arrive within `milliseconds`.
    func isReadable(within milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let read = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard read > 0 else { return false }
        buffer += chunk[0..<read]
        return true
    }

    private func parse(isHead: Bool) -> RawResponse? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = buffer.indices[start...].first(where: { buffer[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: buffer[start..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        let headers = head.dropFirst().map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        let length = isHead ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        let bodyStart = end + 4
        guard buffer.count >= bodyStart + length else { return nil }
        let body = String(decoding: buffer[bodyStart..<bodyStart + length], as: UTF8.self)
        start = bodyStart + length
        if start > 1 << 20 {
            buffer.removeFirst(start)
            start = 0
        }
        return RawResponse(status: status, headers: headers, body: body)
    }
}

/// Carries a non-Sendable value to a thread that is its only user from then on.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Whether the independent validators some tests use can run here: `python3` with these modules.
/// CI (`CI` set) always runs those tests, so a missing install fails there instead of skipping.
func pythonHas(_ modules: String...) -> Bool {
    ProcessInfo.processInfo.environment["CI"] != nil
        || (try? runTool(["python3", "-c", "import " + modules.joined(separator: ", ")]))?.status == 0
}

/// Counts the reads the handlers after it ask the channel for.
final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
    // Unchecked: touched only on the testing channel's event loop and, once it is idle, by the test.
    typealias OutboundIn = Any
    private(set) var count = 0
    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}
