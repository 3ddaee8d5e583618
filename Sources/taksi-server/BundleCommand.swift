import ArgumentParser
import Foundation
import TaksiSchema
import TaksiScreens
import TaksiServer

/// `taksi-server bundle`: the skeletons one app build would get, for the app to ship (its first
/// launch with no network shows them), or a check that a committed one is current.
struct BundleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Write the skeletons an app version would get, for the app to ship as its first-launch floor.",
        discussion: """
            Each screen without path parameters, in each alternative that version can be shown and each \
            --locale, as the server answers them. The app library reads the file (ScreenKeeping's bundle): \
            a first launch with no network shows those screens with placeholders where data goes. \
            --check FILE exits 1 when FILE is not what would be written (a CI step after changing the screens).
            """
    )

    @Option(help: "The app version, like 2.1.0.")
    var appVersion: String

    @Option(name: .customLong("locale"), help: "A locale to include (repeat for more); none: each screen's default.")
    var locales: [String] = []

    @Option(help: "Write the bundle to this file instead of standard output.")
    var output: String?

    @Option(help: "Check that this file is the bundle that would be written; exit 1 when it is not.")
    var check: String?

    @OptionGroup var project: ProjectOptions

    func run() throws {
        let version = try parseVersion(appVersion, option: "--app-version", meaning: "an app version")
        guard let screenSet = try project.loadValid().screenSet else { throw ExitCode.failure }
        let bundle = FirstLaunchBundle.make(screenSet, appVersion: version, locales: locales)
        let text = JSONWriter.string(bundle, pretty: true) + "\n"
        if let check {
            guard fileHolds(text, at: check) else {
                let locales = self.locales.map { " --locale \($0)" }.joined()
                printError(
                    "error: \(check) is not the bundle of these screens for app \(appVersion): run taksi-server bundle --app-version \(appVersion)\(locales) --output \(check), and ship it with the app"
                )
                throw ExitCode.failure
            }
            print("\(check) is current for app \(appVersion)")
            return
        }
        guard let output else {
            print(text, terminator: "")
            return
        }
        do {
            try writeWhole(text, to: output)
        } catch {
            printError("error: \(output) cannot be written: \(error.localizedDescription)")
            throw ExitCode(1)
        }
        print("Wrote \(output): \(bundle["screens"]?.arrayValue?.count ?? 0) skeletons for app \(appVersion)")
    }
}
