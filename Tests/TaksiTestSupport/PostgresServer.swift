package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: Debian's `postgresql` (`initdb`, `pg_ctl`), in a
/// temporary directory, on a free loopback port, with password authentication (SCRAM) for a user
/// `taksi`. Run as the `postgres` user when the tests run as root (PostgreSQL refuses root).
/// It can be stopped and started again on the same port (the store going away and coming back);
/// ``remove()`` stops it and deletes its files.
package final class PostgresServer: Sendable {
    /// Where `initdb` and `pg_ctl` are: the newest of /usr/lib/postgresql/*/bin, else PATH's.
    package static let binDirectory: String? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        if let newest = versions.last { return "\(root)/\(newest)/bin" }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        return nil
    }()

    /// Whether PostgreSQL is installed here (CI installs it; elsewhere its tests are skipped).
    package static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["CI"] != nil || binDirectory != nil
    }

    /// `psql` of the cluster's installation, else PATH's.
    static var psql: String { binDirectory.map { "\($0)/psql" } ?? "psql" }

    package static let password = "s3cret-Pa55word"

    package let directory: URL
    package let port: Int
    private let runsAsPostgres: Bool

    /// The store's URL, as `TAKSI_STORE` takes it.
    package var url: String { "postgres://taksi:\(Self.password)@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Runs `sql` through `psql` as the store's user: what a person (or another program) does to
    /// the store's rows behind the server's back. Returns what it printed (unaligned, tuples only).
    package func sql(_ sql: String) async throws -> String {
        let outcome = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/env"), [Self.psql, url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql])
        guard outcome.status == 0 else { throw PostgresServerError("psql failed: \(outcome.error)") }
        return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `sql` every second from a `psql` process of its own until the process is killed
    /// (SIGKILL: it inherits the test runner's blocked signals, SIGTERM among them): another
    /// replica's heartbeat (replicas report every second), which the test's own tasks cannot delay
    /// however busy the machine is.
    package func repeatEverySecond(_ sql: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.psql, url, "-v", "ON_ERROR_STOP=1", "-qAt"]
        // `\watch` repeats the query before it; `-c` cannot carry both (psql 15).
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data("\(sql)\n\\watch 1\n".utf8))
        try input.fileHandleForWriting.close()
        return process
    }

    /// Makes and starts a cluster.
    package init() throws {
        guard let bin = Self.binDirectory else { throw PostgresServerError("PostgreSQL is not installed (apt-get install postgresql)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("taksi-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runsAsPostgres = getuid() == 0
        if runsAsPostgres {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.path)
        }
        let passwordFile = directory.appendingPathComponent("password").path
        try Self.password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if runsAsPostgres { try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: passwordFile) }
        try Self.run(
            "\(bin)/initdb",
            [
                "-D", directory.appendingPathComponent("data").path, "-U", "taksi", "--pwfile=\(passwordFile)",
                "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C",
            ],
            asPostgres: runsAsPostgres)
        // A port free now; another process could take it before the server binds, so try a few.
        var lastError: (any Error)?
        for _ in 0..<5 {
            let candidate = try BoundSocket(listening: false).port
            do {
                try Self.startServer(bin: bin, directory: directory, port: candidate, asPostgres: runsAsPostgres)
                port = candidate
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? PostgresServerError("PostgreSQL did not start")
    }

    /// Stops the server at once (connections are cut, as when its machine goes away).
    package func stop() throws {
        guard let bin = Self.binDirectory else { return }
        try Self.run(
            "\(bin)/pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"],
            asPostgres: runsAsPostgres)
    }

    /// Starts it again on the same port.
    package func start() throws {
        guard let bin = Self.binDirectory else { return }
        try Self.startServer(bin: bin, directory: directory, port: port, asPostgres: runsAsPostgres)
    }

    /// Freezes the server and its backends (SIGSTOP): connections stay open and nothing answers,
    /// as a store that hangs. ``resume()`` thaws them.
    package func pause() throws { try signalAll(SIGSTOP) }

    package func resume() throws { try signalAll(SIGCONT) }

    /// Sends `signal` to the postmaster (the first line of `postmaster.pid`) and its children.
    private func signalAll(_ signal: Int32) throws {
        let pidFile = directory.appendingPathComponent("data/postmaster.pid")
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let postmaster = text.split(separator: "\n").first.flatMap({ pid_t($0) })
        else { throw PostgresServerError("no postmaster.pid: the server is not running") }
        var processes = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else {
                continue
            }
            // pid (comm) state ppid ...: the parent is the second field after the command's ')'.
            let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
            if fields.count > 2, pid_t(fields[2]) == postmaster { processes.append(pid) }
        }
        for pid in processes { kill(pid, signal) }
    }

    /// Stops it and deletes its files.
    package func remove() {
        try? resume()
        try? stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func startServer(bin: String, directory: URL, port: Int, asPostgres: Bool) throws {
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        try run(
            "\(bin)/pg_ctl",
            [
                "-D", directory.appendingPathComponent("data").path, "-o", options, "-l", directory.appendingPathComponent("log").path,
                "-w", "-t", "60", "start",
            ],
            asPostgres: asPostgres)
    }

    /// Runs a PostgreSQL tool, as the `postgres` user when asked; fails with its output. Spawned
    /// with only standard input, output and error (to a file): the server `pg_ctl` starts would
    /// otherwise inherit what `Process` watches to see its child end, and `pg_ctl` would never
    /// seem to.
    private static func run(_ tool: String, _ arguments: [String], asPostgres: Bool) throws {
        // bash closes every other descriptor it inherited, then becomes the tool.
        let closeOthers = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null; exec "$@""#
        let command =
            ["/bin/bash", "-c", closeOthers, "bash"]
            + (asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", tool] + arguments : [tool] + arguments)
        let outputFile = Scratch.path("pg-output").path
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw PostgresServerError("\(command[0]) could not be started: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0 else {
            let text = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
            throw PostgresServerError("\((tool as NSString).lastPathComponent) failed (status \(status)): \(text)")
        }
    }
}

package struct PostgresServerError: Error, CustomStringConvertible {
    package var description: String

    init(_ description: String) { self.description = description }
}
