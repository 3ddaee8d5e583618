import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

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
