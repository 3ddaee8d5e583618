import Foundation
import NIOCore
package import TaksiSchema

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One parsed HTTP/1.1 response.
package struct RawResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    /// The body's bytes, as sent.
    package var bytes: [UInt8]
    /// The body as UTF-8 text.
    package var body: String { String(decoding: bytes, as: UTF8.self) }

    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    package var json: JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
    }
}

/// A deliberately plain HTTP/1.1 client over a socket: it writes exactly the bytes given (so tests
/// can pipeline), and reads (awaited, off Swift's cooperative pool) until it has parsed the
/// expected responses or the peer closes. A receive timeout keeps a broken server from hanging the suite: a hang guard, never
/// an assertion, so it is far longer than any answer takes on a busy machine (a 10 s one fired
/// under a parallel build on two cores).
package final class RawConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Where the unparsed bytes of `buffer` start.
    private var start = 0
    /// Whether a read gave up after ``hangGuardSeconds`` with nothing arriving.
    private var timedOut = false

    /// - Parameter receiveBuffer: a small kernel receive buffer, so a client that does not read
    ///   pushes back on the server quickly.
    /// How long a read waits for bytes before the test gives up on the server.
    static let hangGuardSeconds = 120

    package init(port: Int, receiveBuffer: Int32? = nil) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: Self.hangGuardSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        // Darwin has no MSG_NOSIGNAL: the socket itself is told not to raise SIGPIPE.
        var noSignal: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #endif
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
        // Not closed here: every stored property is set, so a throw runs deinit, which closes it.
        // (Closing it here too closed it twice: the second time whatever file or socket of
        // another test had been given the number meanwhile, which then went quiet.)
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    /// Closes the socket: once, whether the connection was made or refused (a throw from `init`
    /// after every stored property is set runs deinit too).
    deinit { if descriptor >= 0 { close(descriptor) } }

    package func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    /// Sends bytes as they are, including ones that are not UTF-8.
    package func send(bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            // A peer that closed gives an error here, not a SIGPIPE that ends the tests.
            #if canImport(Glibc)
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #else
            let result = bytes[sent...].withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress, $0.count, 0) }
            #endif
            guard result > 0 else { return }
            sent += result
        }
    }

    /// Sends one well-formed HTTP/1.1 request (a `Content-Length` when there is a body) and reads
    /// its response: nil when the server closes without one. For a request that is not
    /// well-formed, or several pipelined, ``send(_:)`` the bytes and ``receive(_:headRequests:)``.
    package func request(
        _ target: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil
    ) async -> RawResponse? {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.utf8.count)\r\n" }
        send(head + "\r\n" + (body ?? ""))
        return await receive(1, headRequests: method == "HEAD" ? [0] : []).first
    }

    // Every read runs on a thread of its own and is awaited: a blocking read on Swift's
    // cooperative pool (two threads on a two-core machine) could starve the very tasks that make
    // the server's answer.

    /// Reads `count` responses; `headRequests` says which of them answer HEAD (and so have no body).
    package func receive(_ count: Int, headRequests: Set<Int> = []) async -> [RawResponse] {
        await offPool { $0.blockingReceive(count, headRequests: headRequests) }
    }

    /// What arrives until `marker` has arrived `count` times (or the peer closes, or the receive
    /// timeout passes), as text from the first unread byte, all of it read: for streamed responses.
    package func receiveText(until marker: String, count: Int = 1) async -> String {
        await offPool { $0.blockingReceiveText(until: marker, count: count) }
    }

    /// Whether the server closed the connection (reads end-of-file).
    package func isClosedByPeer() async -> Bool {
        // The hang guard firing is not a close: a server that never closes fails this.
        await offPool { !$0.fill() && !$0.timedOut && $0.start == $0.buffer.count }
    }

    /// Whether bytes (or end-of-file) arrive within `milliseconds`.
    package func isReadable(within milliseconds: Int32) async -> Bool {
        await offPool { connection in
            var descriptor = pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, milliseconds) > 0
        }
    }

    /// Runs `read` on a thread of its own, which is the connection's only user until it returns.
    private func offPool<Value: Sendable>(_ read: @escaping @Sendable (RawConnection) -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let box = UncheckedBox(self)
            Thread { continuation.resume(returning: read(box.value)) }.start()
        }
    }

    private func blockingReceive(_ count: Int, headRequests: Set<Int>) -> [RawResponse] {
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

    private func blockingReceiveText(until marker: String, count: Int) -> String {
        func text() -> String { String(decoding: buffer[start...], as: UTF8.self) }
        while text().components(separatedBy: marker).count - 1 < count {
            guard fill() else { break }
        }
        defer { start = buffer.count }
        return text()
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let read = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard read > 0 else {
            if read < 0, errno == EAGAIN || errno == EWOULDBLOCK { timedOut = true }
            return false
        }
        buffer += chunk[0..<read]
        return true
    }

    /// A chunked body starting at `position`, and where what follows it starts; nil until all of
    /// it has arrived.
    private static func chunkedBody(_ buffer: [UInt8], from position: Int) -> ([UInt8], Int)? {
        var body: [UInt8] = []
        var position = position
        while true {
            guard let lineEnd = buffer.indices[position...].first(where: { buffer[$0...].starts(with: [13, 10]) }) else { return nil }
            let sizeText = String(decoding: buffer[position..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            let dataStart = lineEnd + 2
            guard buffer.count >= dataStart + size + 2 else { return nil }
            body += buffer[dataStart..<dataStart + size]
            position = dataStart + size + 2
            if size == 0 { return (body, position) }
        }
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
        let bodyStart = end + 4
        let bytes: [UInt8]
        let chunked = headers.contains { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased().contains("chunked") }
        if chunked, !isHead, status != 304, status != 204 {
            // A proxy (Varnish) may pass a body on in chunks: sizes in hex, each chunk and the
            // last, empty one followed by CRLF (no trailers).
            guard let (body, next) = Self.chunkedBody(buffer, from: bodyStart) else { return nil }
            bytes = body
            start = next
        } else {
            let length = isHead ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
            guard buffer.count >= bodyStart + length else { return nil }
            bytes = Array(buffer[bodyStart..<bodyStart + length])
            start = bodyStart + length
        }
        if start > 1 << 20 {
            buffer.removeFirst(start)
            start = 0
        }
        return RawResponse(status: status, headers: headers, bytes: bytes)
    }
}

/// Carries a non-Sendable value to a thread that is its only user from then on.

/// Carries a non-Sendable value to a thread that is its only user from then on.
package struct UncheckedBox<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
