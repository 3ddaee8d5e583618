package import Foundation

/// The built executable `name` (`taksi-server`, `taksi-validate`) beside the test bundle, as
/// `swift build` left it; nil when it was not built.
package func builtExecutable(_ name: String) -> URL? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return nil
}

/// Reads a pipe line by line, blocking until a line or the end. Sendable so a thread of its own
/// can read a log to its end; one reader at a time.
package final class LineReader: @unchecked Sendable {
    private let handle: FileHandle
    private var buffer = Data()

    package init(_ handle: FileHandle) {
        self.handle = handle
    }

    package func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self) }
            buffer.append(chunk)
        }
    }
}

/// Why a server process could not be started.
package struct ServerProcessError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}

/// Starts the built `taksi-server` with `arguments` (which must include `--log-format json` and
/// bind port 0) and returns it running, its standard error as lines, and the port it bound, read
/// from its "listening on" line.
package func startServerProcess(
    _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil
) throws -> (Process, LineReader, Int) {
    guard let executable = builtExecutable("taksi-server") else { throw ServerProcessError(description: "taksi-server is not built") }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }
    let logs = Pipe()
    process.standardError = logs
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let reader = LineReader(logs.fileHandleForReading)
    var port: Int?
    var lines: [String] = []
    while port == nil, let line = reader.next() {
        lines.append(line)
        let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        let message = object?["message"] as? String ?? ""
        if message.hasPrefix("listening on http://127.0.0.1:") { port = Int(message.split(separator: ":").last ?? "") }
    }
    guard let port else {
        throw ServerProcessError(description: "the server did not say where it listens:\n" + lines.joined(separator: "\n"))
    }
    return (process, reader, port)
}
