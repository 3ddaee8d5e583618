import ArgumentParser
import Foundation
import Logging
import TaksiPostgres
import TaksiSchema
import TaksiScreens
import TaksiServer

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

    @Flag(
        help: ArgumentHelp(
            "Change nothing: an editor schema out of date is an error naming the command that updates it, instead of being rewritten. The default where the CI environment variable is set (GitHub Actions, GitLab CI and others set it)."
        )
    )
    var check = false

    @Flag(
        help: ArgumentHelp(
            "Also check the configuration is one to ship in an image: no upstream that answers from files (their folder stays on your desk). The starter's Dockerfile runs this on the configuration it packs."
        )
    )
    var production = false

    /// Whether this runs in CI: `CI` set to anything but empty, `false` or `0`.
    static func inCI(_ environment: [String: String]) -> Bool {
        guard let value = environment["CI"] else { return false }
        return !["", "false", "0"].contains(value.lowercased())
    }

    func run() throws {
        if production,
            let problem = try project.configuration().fileUpstreamProblem(
                file: ServerConfiguration.filePath(given: project.config), place: "an image",
                fix:
                    "ship the configuration you run in production, whose upstreams are http(s) URLs (docker build --build-arg CONFIG=production.json)"
            )
        {
            printError("error: \(problem)")
            throw ExitCode.failure
        }
        let load = try project.load()
        if !load.diagnostics.isEmpty { print(load.diagnostics.report) }
        print(load.summary)
        if load.diagnostics.containsErrors { throw ExitCode.failure }
        // The editors' schema follows the catalog: rewritten when a project keeps one and it is
        // stale; in CI an error, for a CI job that rewrote its checkout would pass a stale commit.
        let schemas = EditorSchemas.directory(besides: try project.screens())
        if check || Self.inCI(ProcessInfo.processInfo.environment) {
            let stale = EditorSchemas.stale(catalog: load.catalog, in: schemas, onlyExisting: true)
            for (path, _) in stale {
                printError(
                    "error: \(ScreenDirectory.shown(path)) is out of date (the components changed); run `taksi-server validate` (outside CI, without --check) to update it, and commit it"
                )
            }
            if !stale.isEmpty { throw ExitCode.failure }
        } else {
            do {
                for path in try EditorSchemas.write(catalog: load.catalog, into: schemas, onlyExisting: true) {
                    print("updated \(ScreenDirectory.shown(path)) (the components changed)")
                }
            } catch {
                printError("warning: the editor schemas in \(schemas.path) could not be updated: \(error.localizedDescription)")
            }
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
                if variant.alternative != ScreenVariant.defaultAlternative { notes.append("alternative \(variant.alternative)") }
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
