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

    /// The next line, read on a thread of its own: a test waiting for a process's log must not
    /// hold one of the few threads of Swift's cooperative pool (two on a two-core machine), or
    /// every other test stalls behind it, long enough on a busy machine for their connections to
    /// pass the server's idle timeout. Nil at the end of the stream.
    package func nextLine() async -> String? {
        let reader = UncheckedBox(self)
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: reader.value.next()) }.start()
        }
    }

    /// The next line, blocking the calling thread (a thread of the test's own, never a task's);
    /// nil at the end of the stream.
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
) async throws -> (Process, LineReader, Int) {
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
    while port == nil, let line = await reader.nextLine() {
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

/// What a process that ran to its end said.
package struct ProcessOutcome: Sendable {
    package var status: Int32
    /// Its standard output (with its standard error, when they were merged).
    package var output: String
    /// Its standard error; empty when merged into ``output``.
    package var error: String
}

/// Runs `executable` with `arguments` in `directory` to its end. The wait and the reads run on
/// threads of their own, awaited: blocked on Swift's cooperative pool (two threads on a two-core
/// machine), they would stall every in-process server and upstream call of the tests running
/// beside it. Both pipes are read at once, so a child that fills one while the other is read does
/// not stall.
/// - Parameter mergingError: standard error into the output, in the order written.
/// Waits for `process` to exit, on a thread of its own: off the cooperative pool, which a
/// blocking wait would hold from every other test meanwhile.
package func exited(_ process: Process) async {
    let running = UncheckedBox(process)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            running.value.waitUntilExit()
            continuation.resume()
        }.start()
    }
}

package func runProcess(
    _ executable: URL, _ arguments: [String], in directory: URL = repositoryRoot, environment: [String: String]? = nil,
    mergingError: Bool = false
) async throws -> ProcessOutcome {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.currentDirectoryURL = directory
    if let environment { process.environment = environment }
    let output = Pipe()
    let error = mergingError ? output : Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let running = UncheckedBox(process)
    return await withCheckedContinuation { continuation in
        Thread {
            let errorBytes = UncheckedBox(NSMutableData())
            let errorRead = DispatchSemaphore(value: 0)
            if !mergingError {
                Thread {
                    errorBytes.value.append(error.fileHandleForReading.readDataToEndOfFile())
                    errorRead.signal()
                }.start()
            } else {
                errorRead.signal()
            }
            let outputBytes = output.fileHandleForReading.readDataToEndOfFile()
            errorRead.wait()
            running.value.waitUntilExit()
            continuation.resume(
                returning: ProcessOutcome(
                    status: running.value.terminationStatus, output: String(decoding: outputBytes, as: UTF8.self),
                    error: String(decoding: errorBytes.value as Data, as: UTF8.self)))
        }.start()
    }
}
