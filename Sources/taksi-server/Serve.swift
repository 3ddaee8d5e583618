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
            // From the store, it starts with no screens; its follower loads the current bundle.
            application = try buildApplication(configuration: configuration, logger: logger, store: store)
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
