import Foundation
import PackagePlugin

/// Validates the package's `Screens/` directory during `swift build` (and so `swift test`): an
/// invalid screen fails the build with compiler-style diagnostics at the offending line and
/// column. Upstream names are checked against the package's `config.json` when there is one.
///
/// The check runs on every build. SwiftPM plans a plugin's commands once and re-plans only on
/// changes it notices itself, so a list of screen files as inputs goes stale: a file added in a
/// subfolder after the first build was never checked, and one deleted from the list broke the
/// build with "missing inputs" until `.build` was removed. Instead the command's one input is a
/// stamp in the plugin's work directory that `taksi-validate` rewrites each time it runs, so the
/// next build runs it again. Validating takes milliseconds, and the generated file is rewritten
/// only when its text changes, so a build where no screen changed compiles and links nothing.
@main
struct ValidateScreens: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let package = context.package.directoryURL
        let screens = package.appendingPathComponent("Screens")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("ValidatedScreens.swift")
        let stamp = context.pluginWorkDirectoryURL.appendingPathComponent("validation.stamp")
        if !FileManager.default.fileExists(atPath: stamp.path) {
            try FileManager.default.createDirectory(at: context.pluginWorkDirectoryURL, withIntermediateDirectories: true)
            try Data("0\n".utf8).write(to: stamp)
        }
        var arguments = [screens.path, output.path, "--stamp", stamp.path]
        let config = package.appendingPathComponent("config.json")
        if FileManager.default.fileExists(atPath: config.path) { arguments += ["--config", config.path] }
        return [
            .buildCommand(
                displayName: "Validating screens in \(screens.path)",
                executable: try context.tool(named: "taksi-validate").url,
                arguments: arguments,
                inputFiles: [stamp],
                outputFiles: [output]
            )
        ]
    }
}
