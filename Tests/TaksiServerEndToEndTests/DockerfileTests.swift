import Foundation
import TaksiServer
import TaksiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Dockerfile's build stage, checked without a Docker engine: the files its `COPY` lines take
/// from the build context (what `.dockerignore` leaves) must make a package SwiftPM can load, or
/// `docker build` fails before compiling anything. (It did: the stage copied no `Tests/`, which
/// Package.swift names targets in.) The runtime stage is Benchmarks/container-check.sh's.
@Suite("Dockerfile")
struct DockerfileTests {
    /// `COPY` sources and destinations of the first stage, relative to its working directory.
    static func buildStageCopies(_ dockerfile: String) -> [(source: String, destination: String)] {
        var copies: [(String, String)] = []
        var stages = 0
        for line in dockerfile.components(separatedBy: "\n") {
            let words = line.split(separator: " ").map(String.init)
            if words.first == "FROM" { stages += 1 }
            guard stages == 1, words.first == "COPY", words.count >= 3, !words.contains(where: { $0.hasPrefix("--") }) else { continue }
            for source in words.dropFirst().dropLast() { copies.append((source, words.last!)) }
        }
        return copies
    }

    /// Whether `.dockerignore` leaves `path` out of the build context.
    static func isIgnored(_ path: String, patterns: [String]) -> Bool {
        let components = path.split(separator: "/").map(String.init)
        return patterns.contains { pattern in
            (1...components.count).contains { count in
                fnmatch(pattern, components.prefix(count).joined(separator: "/"), 0) == 0
            }
        }
    }

    @Test("the build stage's COPY lines give SwiftPM every target's directory")
    func buildStageLoads() async throws {
        let dockerfile = try String(contentsOf: repositoryRoot.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let ignore = try String(contentsOf: repositoryRoot.appendingPathComponent(".dockerignore"), encoding: .utf8)
        let patterns = ignore.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let copies = Self.buildStageCopies(dockerfile)
        #expect(copies.contains { $0.source == "Package.swift" })

        let context = Scratch.path("docker")
        defer { try? FileManager.default.removeItem(at: context) }
        try FileManager.default.createDirectory(at: context, withIntermediateDirectories: true)
        for (source, destination) in copies {
            #expect(!Self.isIgnored(source, patterns: patterns), "COPY \(source): .dockerignore leaves it out, so docker build fails")
            let target =
                destination.hasSuffix("/") || destination == "."
                ? context.appendingPathComponent(source) : context.appendingPathComponent(destination)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: target.path) {
                try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent(source), to: target)
            }
        }
        let result = try await runTool(["swift", "package", "--package-path", context.path, "describe"])
        #expect(result.status == 0, "the build stage's files do not load as a package:\n\(result.output.suffix(800))")
    }

    @Test("the image is tagged with the version the starter project's Dockerfile builds on")
    func versionTag() throws {
        let tag = "docker build -t taksi-server:\(TaksiServerVersion.current) -t taksi-server ."
        for file in ["Dockerfile", "docs/operations.md"] {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains(tag), "\(file) builds the image without the tag \(TaksiServerVersion.current)")
        }
    }

    @Test("COPY lines and ignore patterns are read as Docker reads them")
    func parsing() {
        let copies = Self.buildStageCopies(
            "FROM a AS build\nCOPY Package.swift ./\nCOPY Sources Sources\nFROM b\nCOPY --from=build /x /y\nCOPY Screens /app/Screens\n")
        #expect(copies.map(\.source) == ["Package.swift", "Sources"])
        #expect(Self.isIgnored(".build-rootfs/x", patterns: [".build-*"]))
        #expect(Self.isIgnored("Tests/Fixtures", patterns: ["Tests"]))
        #expect(!Self.isIgnored("Sources/Tests", patterns: ["Tests"]))
    }
}
