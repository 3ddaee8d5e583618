import Foundation
import TaksiServerClient
import TaksiTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A `taksi-server` process serving a copy of the example project (`Screens/`, `upstreams/`,
/// `config.json`) in a folder of its own, which a test may edit (the server reloads it). Its
/// log is read to the end on a thread of its own, so the process never blocks on a full pipe.
final class Replica: Sendable {
    let directory: URL
    let port: Int
    private let process: Process

    /// - Parameters:
    ///   - edit: changes to the copy before the server starts: the files of a new release.
    ///   - upstreams: upstreams of config.json to point elsewhere (a test's own upstream).
    init(edit: (URL) throws -> Void = { _ in }, upstreams: [String: String] = [:]) async throws {
        directory = Scratch.path("client")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["Screens", "upstreams", "config.json"] {
            try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent(name), to: directory.appendingPathComponent(name))
        }
        if !upstreams.isEmpty {
            let file = directory.appendingPathComponent("config.json")
            var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
            config["upstreams"] = (config["upstreams"] as? [String: Any] ?? [:]).merging(upstreams) { $1 }
            try JSONSerialization.data(withJSONObject: config).write(to: file)
        }
        try edit(directory)
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAKSI_") }
        let (process, reader, port) = try await startServerProcess(
            ["--port", "0", "--log-format", "json", "--no-access-log"], environment: environment, directory: directory)
        self.process = process
        self.port = port
        Thread { while reader.next() != nil {} }.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The screen set's version, from `/readyz`.
    func screensVersion() async -> String? {
        guard let (body, _) = try? await httpGet(url.appendingPathComponent("readyz")) else { return nil }
        return ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["screens_version"] as? String
    }

    /// Rewrites `file` of the screens with `change` and waits until the server serves the new set.
    func edit(_ file: String, _ change: (String) -> String) async throws {
        let before = await screensVersion()
        let path = directory.appendingPathComponent("Screens").appendingPathComponent(file)
        try change(String(contentsOf: path, encoding: .utf8)).write(to: path, atomically: true, encoding: .utf8)
        let guardTime = ContinuousClock.now + .seconds(60)  // a hang guard, not an assertion
        while await screensVersion() == before, ContinuousClock.now < guardTime { await Task.yield() }
    }

    /// Stops the server (SIGTERM) and removes its folder once it has exited. Called from a
    /// `defer`, which cannot await, so the wait runs on a thread of its own rather than holding a
    /// thread of the cooperative pool that the next test's servers and clients need.
    func stop() {
        if process.isRunning { process.terminate() }
        Thread { [process, directory] in
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }.start()
    }
}

/// A ScreenServer with no shared cache and no pauses between passes (a test asserts on what
/// happened, never on time).
func client(
    _ url: URL, userID: String? = nil, alternative: String? = nil, version: String = "1.0.0", languages: [String] = ["en"],
    platform: String? = ScreenServer.currentPlatform, keeping: ScreenKeeping? = nil, prefetch: Bool = false
)
    -> ScreenServer
{
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    return ScreenServer(
        baseURL: url, appVersion: version, userID: userID, alternative: alternative, platform: platform, languages: languages,
        session: URLSession(configuration: configuration), retry: ScreenServer.Retry(pause: 0), keeping: keeping,
        prefetch: prefetch)
}

/// An HTTP balancer in front of replicas over real sockets: each request (one per connection:
/// it asks the replica to close, so the app opens a new one) goes to the replica `route` picks,
/// as a load balancer that picks a replica per request. It records each request's head, and
/// can drop an answer after the replica sent it: a connection lost with the request done.
final class Balancer: @unchecked Sendable {
    /// One request as it passed: which replica got it, and its request line and headers.
    struct Passed: Sendable {
        let replica: Int
        let head: String
        var line: String { head.components(separatedBy: "\r\n").first ?? "" }
        func header(_ name: String) -> String? {
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    let port: Int
    private let replicas: [Int]
    private let route: @Sendable (Int, String) -> Int
    private let listener: BoundSocket
    private let lock = NSLock()
    private var passedRequests: [Passed] = []
    private var answersToDrop: (String, Int) = ("", 0)
    private var answersToReplace: (String, Int, Int) = ("", 0, 0)
    private var oneWay: TimeInterval = 0

    /// - Parameter route: the index in `replicas` for the request numbered `n` (from 0) with
    ///   this request line.
    init(replicas: [Int], route: @escaping @Sendable (Int, String) -> Int) throws {
        self.replicas = replicas
        self.route = route
        listener = try BoundSocket(listening: true)
        port = listener.port
        Thread { [self] in acceptLoop() }.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    var passed: [Passed] {
        lock.lock()
        defer { lock.unlock() }
        return passedRequests
    }

    /// Answers the next `count` requests whose line starts with `prefix` with `status` itself,
    /// as a balancer does when a replica is draining or gone; no replica sees them.
    func answer(_ prefix: String, status: Int, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        answersToReplace = (prefix, status, count)
    }

    /// Drops the answers of the next `count` requests whose line starts with `prefix`, after
    /// their replica answered.
    func dropAnswers(of prefix: String, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        answersToDrop = (prefix, count)
    }

    /// Holds each request, and each answer, this long on its way: a phone's link (150 ms each way
    /// is a slow cellular one).
    func delay(eachWay seconds: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        oneWay = seconds
    }

    /// Stops taking connections (the socket closes with the balancer).
    func stop() {
        shutdown(listener.descriptor, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener.descriptor, nil, nil)
            if connection < 0 { return }
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard var request = Self.readRequest(connection) else { return }
        let head = String(decoding: request.prefix(upTo: request.range(of: Data("\r\n\r\n".utf8))!.lowerBound), as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n").filter { !$0.lowercased().hasPrefix("connection:") }
        let rewritten = lines.joined(separator: "\r\n") + "\r\nConnection: close\r\n\r\n"
        request.replaceSubrange(request.startIndex..<request.range(of: Data("\r\n\r\n".utf8))!.upperBound, with: Data(rewritten.utf8))
        lock.lock()
        let replica = route(passedRequests.count, lines.first ?? "")
        passedRequests.append(Passed(replica: replica, head: head))
        let drop = answersToDrop.1 > 0 && (lines.first ?? "").hasPrefix(answersToDrop.0)
        if drop { answersToDrop.1 -= 1 }
        let replaced = answersToReplace.2 > 0 && (lines.first ?? "").hasPrefix(answersToReplace.0) ? answersToReplace.1 : nil
        if replaced != nil { answersToReplace.2 -= 1 }
        let delay = oneWay
        lock.unlock()
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        if let replaced {
            let body = #"{"error": {"code": "unavailable", "message": "no replica"}}"#
            let answer =
                "HTTP/1.1 \(replaced) Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            _ = Self.write(Data(answer.utf8), to: connection)
            return
        }

        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(replicas[replica]).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected, Self.write(request, to: upstream) else { return }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(upstream, &buffer, buffer.count)
            if count <= 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        if !drop { _ = Self.write(answer, to: connection) }
    }

    /// One request: its head and the body its `Content-Length` says.
    private static func readRequest(_ connection: Int32) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = data.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                let length =
                    head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if data.count >= end.upperBound + length { return data }
            }
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { return nil }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    private static func write(_ data: Data, to socket: Int32) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }
}

extension Result where Failure == TaksiServerError {
    /// The failure's error code (`link_not_found`), nil for a success or an error without one.
    var failureCode: String? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
