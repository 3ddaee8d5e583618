package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway Varnish for tests: Debian's `varnish` with `varnish-modules` (vmod_xkey), in a
/// temporary directory, listening on a free loopback port it picked itself, with the VCL a test
/// gives (`deploy/varnish/taksi.vcl` pointed at the test's server). ``stop()`` ends it and
/// deletes its files.
package final class VarnishServer: Sendable {
    package static let varnishd = "/usr/sbin/varnishd"
    package static let varnishadm = "/usr/bin/varnishadm"

    /// Whether Varnish is installed here (CI installs it; elsewhere its tests are skipped).
    package static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["CI"] != nil || FileManager.default.isExecutableFile(atPath: varnishd)
    }

    package let directory: URL
    package let port: Int
    private let pid: pid_t

    /// Starts Varnish with `vcl` whose backend's port is written `BACKEND_PORT` (taken as 9, the
    /// discard port, until ``use(_:backendPort:)`` names the real one).
    package init(vcl: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-varnish-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let initial = directory.appendingPathComponent("initial.vcl")
        try vcl.replacingOccurrences(of: "BACKEND_PORT", with: "9").write(to: initial, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("varnishd.log")
        pid = try Self.spawn(
            Self.varnishd,
            [
                "-F", "-a", "127.0.0.1:0", "-T", "127.0.0.1:0", "-n", directory.appendingPathComponent("work").path, "-f",
                initial.path, "-s", "malloc,32m", "-j", "none",
            ], output: .file(log.path))
        // Listening once its management process answers: asked until it does (a hang guard of a
        // minute, never an assertion on time).
        let guardTime = ContinuousClock.now + .seconds(60)
        var port: Int?
        while port == nil, kill(pid, 0) == 0, ContinuousClock.now < guardTime {
            let address = try? Self.admin(["-n", directory.appendingPathComponent("work").path, "debug.listen_address"])
            port = address?.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }
        }
        guard let port else {
            Self.end(pid)
            throw VarnishError("varnishd did not start: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
        }
        self.port = port
    }

    package var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Loads `vcl` with its backend on `backendPort` and makes it the active one.
    package func use(_ vcl: String, backendPort: Int) throws {
        let name = "vcl\(UUID().uuidString.prefix(8).lowercased())"
        let file = directory.appendingPathComponent("\(name).vcl")
        try vcl.replacingOccurrences(of: "BACKEND_PORT", with: String(backendPort)).write(to: file, atomically: true, encoding: .utf8)
        let work = directory.appendingPathComponent("work").path
        _ = try Self.admin(["-n", work, "vcl.load", name, file.path])
        _ = try Self.admin(["-n", work, "vcl.use", name])
    }

    package func stop() {
        Self.end(pid)
        try? FileManager.default.removeItem(at: directory)
    }

    /// SIGTERM, and reaped: varnishd stops its child before it exits.
    private static func end(_ pid: pid_t) {
        guard kill(pid, SIGTERM) == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    /// Starts `path` with `arguments`, its standard output and error where `output` says (a file
    /// opened for appending, or a pipe's writing end), with no signal blocked: a test's thread
    /// blocks signals, which a child inherits (varnishd then ignored SIGTERM). Spawned with
    /// posix_spawn; reaped with waitpid by the caller.
    private static func spawn(_ path: String, _ arguments: [String], output: Output) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch output {
        case .file(let file): posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        case .pipe(let read, let write):
            posix_spawn_file_actions_adddup2(&actions, write, 1)
            posix_spawn_file_actions_addclose(&actions, read)
        }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let cArguments = ([path] + arguments).map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, path, &actions, &attributes, cArguments, environ)
        guard spawned == 0 else { throw VarnishError("\(path) could not start (\(spawned))") }
        return pid
    }

    /// Where a spawned program's output goes.
    private enum Output {
        case file(String)
        case pipe(read: Int32, write: Int32)
    }

    /// Runs varnishadm and returns what it printed, reaped with waitpid.
    private static func admin(_ arguments: [String]) throws -> String {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw VarnishError("no pipe") }
        let pid: pid_t
        do {
            // -t: a bound on each wait (for varnishd to come up, say), never forever.
            pid = try spawn(varnishadm, ["-t", "5"] + arguments, output: .pipe(read: pipe[0], write: pipe[1]))
            close(pipe[1])
        } catch {
            close(pipe[0])
            close(pipe[1])
            throw error
        }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        close(pipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = String(decoding: output, as: UTF8.self)
        // Exited normally with 0: status's low byte is 0 and its exit code (bits 8-15) too.
        guard status == 0 else { throw VarnishError("varnishadm \(arguments.joined(separator: " ")): \(text)") }
        return text
    }
}

package struct VarnishError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
