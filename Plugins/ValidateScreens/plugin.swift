import Foundation
import PackagePlugin

/// Validates the package's `Screens/` directory during `swift build` (and so `swift test`): an
/// invalid screen fails the build with compiler-style diagnostics at the offending line and
/// column. The command's inputs are every file under `Screens/`, so it runs again only when a
/// screen changes and adds nothing to a build where none did.
@main
struct ValidateScreens: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let screens = context.package.directoryURL.appendingPathComponent("Screens")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("ValidatedScreens.swift")
        var inputs: [URL] = []
        if let enumerator = FileManager.default.enumerator(
            at: screens, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]
        ) {
            while let url = enumerator.nextObject() as? URL {
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true { inputs.append(url) }
            }
        }
        return [
            .buildCommand(
                displayName: "Validating screens in \(screens.path)",
                executable: try context.tool(named: "taksi-validate").url,
                arguments: [screens.path, output.path],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
