import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

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

    /// Each value given on the command line, with its setting and the flag that gave it. A
    /// property stands for the setting whose flag is its name (`logLevel` is `--log-level`,
    /// `noWatch` is `--no-watch`, `preview` is `--preview` and `--no-preview`), so a flag is
    /// declared once here and described once, with its key, variable and default, in
    /// ``ServerConfiguration/settings``.
    private func given() throws -> [(setting: ServerConfiguration.Setting, flag: String, value: String)] {
        var given: [(ServerConfiguration.Setting, String, String)] = []
        for child in Mirror(reflecting: self).children {
            guard let label = child.label.map({ String($0.drop { $0 == "_" }) }), label != "config" else { continue }
            let flag = "--" + label.reduce(into: "") { $0 += $1.isUppercase ? "-" + $1.lowercased() : String($1) }
            let value: (flag: String, text: String)?
            switch child.value {
            case let option as Option<String?>:
                value = option.wrappedValue.map { (flag, $0) }
            case let negation as Flag<Bool> where flag.hasPrefix("--no-"):
                value = negation.wrappedValue ? (flag, "false") : nil
            case let toggle as Flag<Bool?>:
                value = toggle.wrappedValue.map { $0 ? (flag, "true") : ("--no-" + flag.dropFirst(2), "false") }
            default:
                throw ValidationError("\(flag) is no kind of flag serve knows how to read (taksi-server's own mistake)")
            }
            let settings = ServerConfiguration.settings
            guard
                let setting = settings.first(where: {
                    $0.flags?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == flag } == true
                })
            else { throw ValidationError("\(flag) is no setting's flag (taksi-server's own mistake)") }
            if let (flag, text) = value { given.append((setting, flag, text)) }
        }
        return given
    }

    func run() async throws {
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.resolve(file: config)
            for (setting, flag, value) in try given() {
                try configuration.apply(key: setting.key, value: value, source: flag)
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
            let window = configuration.idempotencyDuration
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
        var report = PublishedScreens.State(replica: PublishedScreens.replicaName, serving: nil).report
        while true {
            do {
                let release = try await store.currentRelease()
                if let release, release.bundle == report.refusedBundle {
                    // Refused already: read once, not again every second; still reported.
                    try await store.report(report)
                } else if let release,
                    let (name, loaded) = try await PublishedScreens.load(named: release.bundle, from: store, upstreams: upstreams)
                {
                    switch loaded {
                    case .success(let (screenSet, bytes)):
                        logger.info(
                            "published screens loaded",
                            metadata: ["bundle": .string(String(name.prefix(12))), "screens": .stringConvertible(screenSet.screens.count)])
                        return (name, screenSet, bytes)
                    case .failure(let refusal):
                        report.refusedBundle = name
                        report.refusal = refusal.description
                        try await store.report(report)
                        say(
                            "the current published bundle does not load here; not serving until one does",
                            ["bundle": .string(String(name.prefix(12))), "cause": .string(refusal.description)], error: true)
                    }
                } else {
                    try await store.report(report)
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
