import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

@main
struct TaksiServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "taksi-server",
        abstract: "Serves Taksi server-driven UI screens: skeletons and data patches over HTTP.",
        version: TaksiServerVersion.current,
        subcommands: [
            Serve.self, Validate.self, Compat.self, Manifest.self, Codegen.self, Schema.self, Init.self, Deploy.self, Publish.self,
            Rollback.self, History.self, Rollout.self, VersionCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// Runs the HTTP server on a screen set.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the screens over HTTP (the default command).",
        discussion: """
            Settings come from flags, then TAKSI_* environment variables, then the configuration file \
            (--config, TAKSI_CONFIG, or ./config.json when present), then defaults.
            """
    )

    // The help of each flag is its setting's (ServerConfiguration.settings), like the table in docs/configuration.md.
    @Option(name: .long, help: ArgumentHelp(help("host")))
    var host: String?

    @Option(name: .long, help: ArgumentHelp(help("port")))
    var port: String?

    @Option(name: .long, help: ArgumentHelp(help("screens")))
    var screens: String?

    @Option(name: .long, help: "configuration file (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    @Option(name: .long, help: ArgumentHelp(help("threads")))
    var threads: String?

    @Option(name: .long, help: ArgumentHelp(help("log_level")))
    var logLevel: String?

    @Option(name: .long, help: ArgumentHelp(help("watch_interval")))
    var watchInterval: String?

    @Flag(name: .long, help: ArgumentHelp("Do not " + help("watch")))
    var noWatch = false

    @Option(name: .long, help: ArgumentHelp(help("log_format")))
    var logFormat: String?

    @Flag(name: .long, help: ArgumentHelp("Do not write " + help("access_log")))
    var noAccessLog = false

    @Option(name: .long, help: ArgumentHelp(help("access_log_format")))
    var accessLogFormat: String?

    @Option(name: .long, help: ArgumentHelp(help("access_log_output")))
    var accessLogOutput: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(help("preview")))
    var preview: Bool?

    /// A setting's help, from its description.
    private static func help(_ key: String) -> String {
        ServerConfiguration.setting(key)?.help ?? key
    }

    func run() async throws {
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.resolve(file: config)
            // Each value given on the command line, by its setting's key.
            let given: [(key: String, value: String?)] = [
                ("host", host), ("port", port), ("screens", screens), ("threads", threads), ("log_level", logLevel),
                ("watch_interval", watchInterval), ("watch", noWatch ? "false" : nil), ("log_format", logFormat),
                ("access_log", noAccessLog ? "false" : nil), ("access_log_format", accessLogFormat),
                ("access_log_output", accessLogOutput), ("preview", preview.map { $0 ? "true" : "false" }),
            ]
            for (key, value) in given {
                guard let value else { continue }
                let flag =
                    key == "preview" ? (value == "true" ? "--preview" : "--no-preview") : ServerConfiguration.setting(key)?.flags ?? key
                try configuration.apply(key: key, value: value, source: flag)
            }
        } catch {
            printError("taksi-server: configuration error: \(error)")
            throw ExitCode(2)
        }
        let level = configuration.logLevel
        let format = configuration.logFormat
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "taksi-server")
        if configuration.screensSource == .store, configuration.store.connection == nil {
            printError(
                "taksi-server: configuration error: screens_source is store, and no store is configured; set TAKSI_STORE to the fleet's PostgreSQL URL"
            )
            throw ExitCode(2)
        }
        let application: Application
        do {
            let window = Duration.milliseconds(Int64(configuration.idempotencyWindow * 1000))
            let store = try configuration.store.connection.map { connection in
                logger.info("fleet store", metadata: ["store": .string(connection.description)])
                return try PostgresFleetStore(settings: configuration.store, window: window, logger: logger)
            }
            var published: (name: String, screenSet: ScreenSet, bytes: Int?)?
            if configuration.screensSource == .store {
                let upstreams = Set(configuration.upstreams.keys)
                published = try await withStore(configuration) { store in
                    await Self.currentBundle(of: store, upstreams: upstreams, logger: logger)
                }
            }
            application = try buildApplication(configuration: configuration, logger: logger, store: store, published: published)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("taksi-server: \(error)")
            throw ExitCode.failure
        }
        do {
            try await application.run()
        } catch let error as ServerStartError {
            printError("taksi-server: \(error)")
            throw ExitCode.failure
        } catch let error as AccessLog.OpenError {
            printError("taksi-server: \(error)")
            throw ExitCode.failure
        }
    }
}

extension Serve {
    /// The store's current bundle, loaded: what a replica serving from the store starts with.
    /// Waits (not listening, so not ready) while the store cannot be reached, nothing is
    /// published, or the current bundle does not load here, saying so in the store and the log.
    static func currentBundle(
        of store: PostgresFleetStore, upstreams: Set<String>, logger: Logger
    ) async -> (name: String, screenSet: ScreenSet, bytes: Int?) {
        var said = ""
        func say(_ message: String, _ metadata: Logger.Metadata = [:], error: Bool = false) {
            guard message != said else { return }
            said = message
            if error { logger.error("\(message)", metadata: metadata) } else { logger.warning("\(message)", metadata: metadata) }
        }
        let state = PublishedScreens.State(replica: PublishedScreens.replicaName, serving: nil)
        while true {
            do {
                if let release = try await store.currentRelease(), let (name, bundle) = try await store.bundle(named: release.bundle) {
                    switch PublishedScreens.load(bundle, named: name, upstreams: upstreams) {
                    case .success(let (screenSet, bytes)):
                        logger.info(
                            "published screens loaded",
                            metadata: ["bundle": .string(String(name.prefix(12))), "screens": .stringConvertible(screenSet.screens.count)])
                        return (name, screenSet, bytes)
                    case .failure(let refusal):
                        var report = state.report
                        report.refusedBundle = name
                        report.refusal = refusal.description
                        try? await store.report(report)
                        say(
                            "the current published bundle does not load here; not serving until one does",
                            ["bundle": .string(String(name.prefix(12))), "cause": .string(refusal.description)], error: true)
                    }
                } else {
                    try? await store.report(state.report)
                    say("nothing is published yet; waiting for taksi-server publish")
                }
            } catch {
                say("store: cannot be reached; waiting for it to load the published screens", ["cause": .string(String(describing: error))])
            }
            // Until SIGTERM, whose default action ends the process: nothing is served yet.
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// The screens a command reads and the configuration that names their upstreams, found exactly
/// as `serve` finds them, so every command checks the same screens against the same upstream
/// names. Without a configuration file, upstream names are not checked.
struct ProjectOptions: ParsableArguments {
    @Argument(
        help:
            "The screens directory (default: the configuration's, as serve finds it: TAKSI_SCREENS, \"screens\" in the file, else Screens)."
    )
    var directory: String?

    @Option(help: "A configuration file whose upstreams http sources must name (TAKSI_CONFIG; default ./config.json when present).")
    var config: String?

    /// The screens directory.
    func screens() throws -> String {
        try directory ?? configuration().screensDirectory
    }

    func configuration() throws -> ServerConfiguration {
        do {
            return try ServerConfiguration.resolve(file: config)
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
    }

    /// The screens, loaded and checked.
    func load() throws -> ScreenSetLoad {
        let configuration = try configuration()
        let hasFile = ServerConfiguration.filePath(given: config) != nil
        let upstreams = hasFile || !configuration.upstreams.isEmpty ? Set(configuration.upstreams.keys) : nil
        return ScreenSetLoader.load(
            directory: directory ?? configuration.screensDirectory, upstreams: upstreams,
            upstreamDirectories: upstreams == nil ? [:] : configuration.upstreamDirectories,
            upstreamDocuments: upstreams == nil ? [:] : configuration.upstreamDocuments)
    }

    /// The screens, or their diagnostics printed and exit code 1.
    func loadValid() throws -> ScreenSetLoad {
        let load = try load()
        guard load.screenSet != nil else {
            print(load.diagnostics.report)
            print(load.summary)
            throw ExitCode.failure
        }
        return load
    }
}

/// A version given on the command line, or a usage error naming the option.
private func parseVersion(_ text: String, option: String, meaning: String) throws -> Version {
    guard let version = Version(text) else {
        printError("error: \(option) \"\(text)\" is not a version; write \(meaning), like 2.3")
        throw ExitCode(2)
    }
    return version
}

/// Checks a screen set and prints every diagnostic.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a screen directory and print every problem; exits 1 on any error.",
        discussion: "Warnings are printed but do not fail. Diagnostics read FILE:LINE:COLUMN: error: PATH: MESSAGE."
    )

    @OptionGroup var project: ProjectOptions

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "List the screen variants whose payloads are made from these files (a fragment, a string table, a fixture, a component schema, a screen file).",
            valueName: "file"
        )
    )
    var affected: [String] = []

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Print the tags these screens' skeletons carry for a CDN (with config.json's cdn header and prefix): what a change to them purges.",
            valueName: "screen"
        )
    )
    var tags: [String] = []

    func run() throws {
        let load = try project.load()
        if !load.diagnostics.isEmpty { print(load.diagnostics.report) }
        print(load.summary)
        if load.diagnostics.containsErrors { throw ExitCode.failure }
        // The editors' schema follows the catalog: rewritten when a project keeps one and it is stale.
        let schemas = EditorSchemas.directory(besides: try project.screens())
        do {
            for path in try EditorSchemas.write(catalog: load.catalog, into: schemas, onlyExisting: true) {
                print("updated \(ScreenDirectory.shown(path)) (the components changed)")
            }
        } catch {
            printError("warning: the editor schemas in \(schemas.path) could not be updated: \(error.localizedDescription)")
        }
        let cacheTags = (try? project.configuration().cdn?.tags) ?? CacheTags()
        if !affected.isEmpty, let screenSet = load.screenSet { print(Self.affectedReport(affected, in: screenSet, tags: cacheTags)) }
        if !tags.isEmpty, let screenSet = load.screenSet { print(Self.tagsReport(of: tags, in: screenSet, tags: cacheTags)) }
    }

    /// The cache tags of each variant of `screens`, one line per variant and locale:
    /// `home  Screens/home.yaml  en  taksi taksi:version:... taksi:screen:home ...`.
    static func tagsReport(of screens: [String], in screenSet: ScreenSet, tags: CacheTags) -> String {
        var lines: [String] = []
        for name in screens {
            guard let variants = screenSet.screens[name] else {
                lines.append("\(name): no such screen" + NameSuggestion.hint(for: name, among: screenSet.names))
                continue
            }
            for variant in variants.all {
                let compilations = [variant] + variant.translations.sorted { $0.key < $1.key }.map(\.value)
                for compiled in compilations {
                    let names = tags.tags(of: compiled, sources: variant, screensVersion: screenSet.version)
                    lines.append(
                        [name, variant.file, compiled.locale].compactMap { $0 }.joined(separator: "  ") + "  "
                            + names.joined(separator: " "))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Which variants depend on each of `files`, one per line, then a count:
    /// `home  Screens/home.yaml  (version >= 2.0; through Screens/fragments/greeting.yaml)`.
    static func affectedReport(_ files: [String], in screenSet: ScreenSet, tags: CacheTags = CacheTags()) -> String {
        func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        let wanted = Dictionary(files.map { (canonical($0), $0) }, uniquingKeysWith: { first, _ in first })
        var lines: [String] = []
        var screens: Set<String> = []
        var skeletons: Set<String> = []
        var matched: Set<String> = []
        for name in screenSet.names {
            for variant in screenSet.screens[name]?.all ?? [] {
                let through = variant.dependencies.compactMap { wanted[canonical($0)] }
                guard !through.isEmpty else { continue }
                matched.formUnion(through)
                screens.insert(name)
                // A fixture makes data, which no CDN keeps: only the skeleton's files purge it.
                if through.contains(where: { !$0.split(separator: "/").contains("fixtures") }) { skeletons.insert(name) }
                var notes = [variant.requirement.map { "version \($0)" } ?? "every version"]
                if variant.alternative != CompiledScreen.defaultAlternative { notes.append("alternative \(variant.alternative)") }
                let others = through.filter { $0 != wanted[canonical(variant.file)] }
                if !others.isEmpty { notes.append("through \(others.joined(separator: ", "))") }
                lines.append("\(name)  \(variant.file)  (\(notes.joined(separator: "; ")))")
            }
        }
        for file in files where !matched.contains(file) {
            lines.append("\(file): no variant's payloads are made from it")
        }
        let count = lines.count - files.filter { !matched.contains($0) }.count
        lines.append(
            "\(count) variant\(count == 1 ? "" : "s") of \(screens.count) screen\(screens.count == 1 ? "" : "s") change with \(files.count == 1 ? "this file" : "these files")"
        )
        if !screens.isEmpty {
            let purged = skeletons.sorted().map(tags.screen)
            lines.append("a CDN purges: " + (purged.isEmpty ? "nothing (only data changes)" : purged.joined(separator: " ")))
        }
        return lines.joined(separator: "\n")
    }
}

/// The breaking-change gate: what changed in the catalog since a base, and what of it can break
/// an app build that is already out.
struct Compat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the catalog changes since BASE; exits 1 when one can break an app build already out.",
        discussion: """
            BASE is a directory of screens, or a git revision of the repository the screens are in \
            (HEAD~1, main, origin/main). A change to what the catalog says about app versions already out \
            (a component, field, enum value or custom action removed, retyped or added for them; a field \
            made required or optional) is breaking; say new facts with "since" and "until". The screens \
            of the working tree are validated too.
            """
    )

    @Argument(help: "The base: a screens directory, or a git revision.")
    var base: String

    @OptionGroup var project: ProjectOptions

    @Option(help: "The newest app version already out: a change for it or older is breaking even where since/until says it.")
    var released: String?

    func run() throws {
        let releasedVersion = try released.map { try parseVersion($0, option: "--released", meaning: "the newest app version already out") }
        let screens = try project.screens()
        guard let head = ScreenFiles.read(directory: screens) else {
            printError("error: \(screens): not a directory of screens; give it as the second argument")
            throw ExitCode(2)
        }
        let baseFiles: (files: [String: [UInt8]], root: String)
        do {
            baseFiles = try ScreenFiles.base(base, screens: screens)
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
        let changes = CatalogCompatibility.changes(base: baseFiles, head: (head, screens), released: releasedVersion)
        for change in changes { print(change) }
        let breaking = changes.filter(\.isBreaking).count
        // The working tree must also be a valid set: the checks every variant gets.
        let load = try project.load()
        if load.diagnostics.containsErrors { print(load.diagnostics.report) }
        let count = changes.count
        print(
            "\(count) catalog change\(count == 1 ? "" : "s") since \(base): \(breaking) breaking, \(count - breaking) compatible"
                + (load.diagnostics.containsErrors ? "; the screens have errors" : "")
        )
        if breaking > 0 || load.diagnostics.containsErrors { throw ExitCode.failure }
    }
}

/// What the screens may send to one app build.
struct Manifest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what the screens may send to one app version: components, fields, enum values, actions, screens.",
        discussion: "Check an app release against it before it ships; --json for tools."
    )

    @Option(help: "The app version, like 2.3.")
    var appVersion: String

    @OptionGroup var project: ProjectOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let version = try parseVersion(appVersion, option: "--app-version", meaning: "an app version")
        guard let screenSet = try project.loadValid().screenSet else { throw ExitCode.failure }
        let manifest = AppManifest(screenSet, appVersion: version)
        print(json ? JSONWriter.string(manifest.json, pretty: true) : manifest.text, terminator: "")
    }
}

/// App code generated from the catalog.
struct Codegen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate the app code for the catalog's custom components and actions.",
        subcommands: [SwiftCode.self]
    )

    /// The Swift types an app registers with the Taksi client (``SwiftCodegen``).
    struct SwiftCode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "swift",
            abstract: "Write the Swift types an app registers with the Taksi client, one file per component and TaksiCatalog.swift.",
            discussion: """
                Each component's view is the app's: <Type>View, adopting ViewRepresentable, with init(content:onAction:). \
                Files are rewritten only when they change; a file an earlier run wrote for a component that is gone \
                is removed.
                """
        )

        @Option(help: "The folder to write to (in the app's sources).")
        var out: String

        @Option(help: "The app version to generate for (default: the newest the catalog describes).")
        var appVersion: String?

        @OptionGroup var project: ProjectOptions

        func run() throws {
            let version = try appVersion.map { try parseVersion($0, option: "--app-version", meaning: "an app version") }
            let load = try project.loadValid()
            let catalog = load.catalogVersions.catalog(load.catalog, forAppVersion: version)
            let files = SwiftCodegen.files(
                catalog: catalog, versions: load.catalogVersions, summaries: load.actionSummaries, appVersion: version,
                source: try project.screens())
            let folder = URL(fileURLWithPath: out)
            var changed = 0
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for file in files {
                    let url = folder.appendingPathComponent(file.name)
                    if FileManager.default.contents(atPath: url.path) == Data(file.contents.utf8) { continue }
                    try Data(file.contents.utf8).write(to: url, options: .atomic)
                    changed += 1
                }
                // What an earlier run wrote for a component that is gone.
                let names = Set(files.map(\.name))
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
                where name.hasSuffix(".swift") && !names.contains(name) {
                    let url = folder.appendingPathComponent(name)
                    guard let data = FileManager.default.contents(atPath: url.path),
                        String(decoding: data, as: UTF8.self).hasPrefix(SwiftCodegen.marker)
                    else { continue }
                    try FileManager.default.removeItem(at: url)
                    changed += 1
                }
            } catch {
                printError("taksi-server: \(out): \(error.localizedDescription)")
                throw ExitCode.failure
            }
            print("\(files.count) files in \(out): \(changed == 0 ? "unchanged" : "\(changed) written or removed")")
        }
    }
}

/// Reads the files of a screens directory, now or at a git revision.
enum ScreenFiles {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every file under `directory`, by its path relative to it.
    static func read(directory: String) -> [String: [UInt8]]? {
        guard let found = ScreenDirectory.files(in: directory) else { return nil }
        var files: [String: [UInt8]] = [:]
        for file in found {
            if let data = FileManager.default.contents(atPath: file.path) { files[file.relativePath] = Array(data) }
        }
        return files
    }

    /// The base's files and the name they are shown by: a directory's, or those of the screens
    /// directory at a git revision (`HEAD~1:Screens`).
    static func base(_ base: String, screens: String) throws -> (files: [String: [UInt8]], root: String) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: base, isDirectory: &isDirectory), isDirectory.boolValue {
            guard let files = read(directory: base) else { throw Failure(description: "\(base): cannot be read") }
            return (files, base)
        }
        let prefix = try git(["rev-parse", "--show-prefix"], in: screens).trimmingCharacters(in: .whitespacesAndNewlines)
        let top = try git(["rev-parse", "--show-toplevel"], in: screens).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try git(
            ["rev-parse", "--verify", "--quiet", base + "^{commit}"], in: screens,
            failure: "\(base) is neither a directory nor a git revision of the repository \(screens) is in")
        let listing = try git(["ls-tree", "-r", "-z", "--name-only", base, "--", prefix.isEmpty ? "." : prefix], in: top)
        var files: [String: [UInt8]] = [:]
        for path in listing.split(separator: "\0").map(String.init) where !path.isEmpty {
            let relative = prefix.isEmpty ? path : String(path.dropFirst(prefix.count))
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
            files[relative] = try gitData(["show", "\(base):\(path)"], in: top)
        }
        let name = prefix.isEmpty ? URL(fileURLWithPath: screens).lastPathComponent : String(prefix.dropLast())
        return (files, "\(base):\(name)")
    }

    private static func git(_ arguments: [String], in directory: String, failure: String? = nil) throws -> String {
        String(decoding: try gitData(arguments, in: directory, failure: failure), as: UTF8.self)
    }

    private static func gitData(_ arguments: [String], in directory: String, failure: String? = nil) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Failure(description: "git cannot be run (\(error.localizedDescription)); give the base as a directory")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: failure
                    ?? "git \(arguments.joined(separator: " ")): \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return Array(data)
    }
}

/// Prints the version, and for scripts what its release is made of.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version (as --version does); --json: the release's tag, tarball, checksum, downloads and image.",
        discussion: "scripts/release.sh names the tarball it makes from this, and taksi-server init writes the same names into a project."
    )

    @Flag(help: "Print an object: version, tag, repository, tarball (for this machine), checksum, downloads, image.")
    var json = false

    func run() {
        guard json else {
            print(TaksiServerVersion.current)
            return
        }
        let tarball = TaksiServerVersion.tarball()
        let release: JSONValue = .object([
            "version": .string(TaksiServerVersion.current), "tag": .string(TaksiServerVersion.tag()),
            "repository": .string(TaksiServerVersion.repository), "tarball": .string(tarball), "checksum": .string(tarball + ".sha256"),
            "downloads": .string(TaksiServerVersion.releaseDownloads()), "image": .string(TaksiServerVersion.image()),
        ])
        print(JSONWriter.string(release, pretty: true), terminator: "")
    }
}

/// Writes a starter project a team owns.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a project folder: a starter screen, a custom component, config.json, a Dockerfile.",
        discussion: "Never writes over a file. Then: cd DIR && taksi-server validate && taksi-server serve"
    )

    @Argument(help: "The folder to create (or an empty one).")
    var directory: String

    func run() throws {
        do {
            let written = try StarterProject.create(in: URL(fileURLWithPath: directory))
            print("Created \(directory):")
            for path in written { print("  \(path)") }
            print("Next: cd \(directory) && taksi-server serve, then curl localhost:8080/screens/home")
        } catch {
            printError("taksi-server: \(error)")
            throw ExitCode.failure
        }
    }
}

/// Writes what a platform needs to run a project's screens.
struct Deploy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write deployment files for a project's screens and configuration.",
        subcommands: [Kubernetes.self]
    )

    /// A Kubernetes manifest for the project (``KubernetesManifest``).
    struct Kubernetes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a Kubernetes manifest that ships the screens and the configuration in ConfigMaps.",
            discussion: """
                The screens are checked first, against the configuration's upstreams; nothing is written for a set \
                with errors. The configuration is yours with what a pod needs over it: host 0.0.0.0, port 8080, \
                the mounted screens, no preview, JSON logs unless you chose a format. Give the configuration you \
                run in production: its upstreams must be http(s) URLs. The memory request and limit are derived \
                from the configuration's caches and the screens' size. A screen file added later reaches running \
                pods with kubectl apply, without a restart; a changed configuration rolls them.
                """
        )

        @Option(help: "The configuration file to ship (default ./config.json when present).")
        var config: String?

        @Option(help: "The screens directory (default: the configuration's \"screens\", else Screens).")
        var screens: String?

        @Option(help: "The image to run; push the one you build to your registry and name it here.")
        var image = KubernetesManifest.Options().image

        @Option(help: "The name of every object and its app.kubernetes.io/name label.")
        var name = KubernetesManifest.Options().name

        @Option(help: "The namespace of every object (default: kubectl's current one).")
        var namespace: String?

        @Option(help: "Replicas, and the autoscaler's minimum.")
        var replicas = KubernetesManifest.Options().replicas

        @Option(
            help: ArgumentHelp(
                "Serve the screens published to the fleet's store (taksi-server publish), its URL from this Secret's key url; the ConfigMap then holds only the configuration.",
                valueName: "secret"))
        var store: String?

        @Flag(help: "Add a ServiceMonitor for the Prometheus Operator (the pods carry prometheus.io annotations either way).")
        var serviceMonitor = false

        @Option(name: .shortAndLong, help: "Write the manifest to this file instead of standard output.")
        var output: String?

        @Option(help: "Exit 1 when this file is not what would be written (for CI).")
        var check: String?

        func validate() throws {
            if output != nil, check != nil { throw ValidationError("give --output or --check, not both") }
        }

        func run() throws {
            var options = KubernetesManifest.Options()
            options.image = image
            options.name = name
            options.namespace = namespace
            options.replicas = replicas
            options.storeSecret = store
            options.serviceMonitor = serviceMonitor
            let manifest: KubernetesManifest
            do {
                manifest = try KubernetesManifest.make(
                    configurationFile: ServerConfiguration.filePath(given: config, environment: [:]), screensDirectory: screens,
                    options: options)
            } catch {
                printError("taksi-server: \(error)")
                throw ExitCode.failure
            }
            if let check {
                guard FileManager.default.contents(atPath: check).map({ String(decoding: $0, as: UTF8.self) }) == manifest.text else {
                    printError("\(check) is out of date: run this command again with --output \(check) instead of --check")
                    throw ExitCode.failure
                }
                printError("\(check) is up to date (\(manifest.summary))")
            } else if let output {
                do {
                    try Data(manifest.text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    printError("taksi-server: \(output): \(error.localizedDescription)")
                    throw ExitCode.failure
                }
                printError("Wrote \(output): \(manifest.summary)")
            } else {
                print(manifest.text, terminator: "")
                printError(manifest.summary)
            }
        }
    }
}

/// Prints the JSON Schema of screen files, or of component files, for editors.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the JSON Schema (2020-12) of screen files, custom components of DIR included (--catalog: of component files).",
        discussion: """
            --write keeps both in the project's schemas/ folder (beside DIR), where the editor settings taksi-server \
            init writes point; validate then rewrites the screen schema whenever the components change. See docs/validation.md.
            """
    )

    @Argument(help: "The screens directory whose custom components to include.")
    var directory: String = "Screens"

    @Flag(help: "Print the schema of component files (components/<type>.json) instead.")
    var catalog = false

    @Flag(help: "Write schemas/screen.schema.json and schemas/component.schema.json beside DIR instead of printing.")
    var write = false

    func run() throws {
        if write {
            let load = ScreenSetLoader.load(directory: directory)
            let folder = EditorSchemas.directory(besides: directory)
            let written: [String]
            do {
                written = try EditorSchemas.write(catalog: load.catalog, into: folder)
            } catch {
                printError("taksi-server: cannot write \(folder.path): \(error.localizedDescription)")
                throw ExitCode.failure
            }
            print(
                written.isEmpty
                    ? "\(ScreenDirectory.shown(folder.path)): up to date"
                    : written.map { "wrote \(ScreenDirectory.shown($0))" }.joined(separator: "\n")
            )
            return
        }
        if catalog {
            print(JSONWriter.string(CatalogJSONSchema.make(), pretty: true), terminator: "")
            return
        }
        let load = ScreenSetLoader.load(directory: directory)
        print(JSONWriter.string(ScreenJSONSchema.make(catalog: load.catalog), pretty: true), terminator: "")
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
