import Foundation
import TaksiSchema

/// Loads a whole screen directory: reads every file, checks everything, and compiles the screens.
/// Nothing is served from a set with errors, and every error is reported at once.
///
/// The directory's layout:
/// - `*.json` anywhere: one screen each (the screen's `name` is inside the file);
/// - `components/<type>.json`: one custom component schema each;
/// - `actions.json`: the custom action identifiers the app registered;
/// - `links.yaml`: deep links (universal links, custom schemes) mapped to screens;
/// - `fixtures/`: JSON files that `fixture` sources read (never screens themselves);
/// - `fragments/`: reusable parts of screens (see ``Fragment``), expanded where a screen uses them;
/// - `strings/<locale>.yaml`: localized messages (see ``Localization``).
///
/// ```swift
/// let load = ScreenSetLoader.load(directory: "Screens")
/// guard let screens = load.screenSet else { print(load.diagnostics.report); exit(1) }
/// ```
public enum ScreenSetLoader {
    /// The largest file read; larger ones are reported, not read.
    public static let maximumFileSize = 4 * 1024 * 1024
    /// The most a screen's components may grow to with its fragments expanded, in bytes of JSON
    /// as written compactly: the limit of one file (``maximumFileSize``). A
    /// fragment used several times inside another that is itself used several times multiplies
    /// (13 files of 1 KB, each using the one before four times, make 4 million components), so the
    /// expansion is measured as it goes and stopped at the use that passes the limit.
    public static let maximumExpandedBytes = maximumFileSize
    /// The most components a screen may have with its fragments expanded.
    public static let maximumExpandedComponents = 2_000
    /// The fragment uses one screen's expansion may meet, each copy of a use counted, expanded or
    /// refused: a chain whose every level places the next several times is refused here even when
    /// its uses add nothing (each too deep, say), instead of being walked down every path.
    public static let maximumFragmentUses = 20_000
    /// The folder of custom component schemas.
    public static let componentsFolder = "components"
    /// The folder of fixture files.
    public static let fixturesFolder = "fixtures"
    /// The files of custom action identifiers (one of them).
    public static let actionsFiles = ["actions.json", "actions.yaml", "actions.yml"]
    /// The file of deep links (one of them).
    public static let linksFiles = ["links.yaml", "links.yml", "links.json"]
    /// The extensions of definition files: JSON, and YAML (which allows comments).
    public static let definitionExtensions = ["json", "yaml", "yml"]

    /// Loads the screen set in `directory`. Paths in diagnostics start with `directory` as given.
    /// - Parameters:
    ///   - upstreams: the configured upstream names; when given, an `http` source naming another is
    ///     an error. Nil skips the check (validating without a configuration).
    ///   - upstreamDirectories: the folders of the upstreams that answer from files (`file:DIR`),
    ///     by name: a source's path must have its file there, and its bindings must name what the
    ///     file holds.
    ///   - upstreamDocuments: the paths of the upstreams' OpenAPI documents, by name: a source's
    ///     path must be an operation there, and its bindings must name what the operation answers.
    public static func load(
        directory: String, upstreams: Set<String>? = nil, upstreamDirectories: [String: String] = [:],
        upstreamDocuments: [String: String] = [:]
    ) -> ScreenSetLoad {
        let read = read(directory: directory)
        guard let files = read.files else { return ScreenSetLoad(screenSet: nil, diagnostics: read.diagnostics) }
        var load = load(
            files: files, root: read.root, upstreams: upstreams, upstreamDirectories: upstreamDirectories,
            upstreamDocuments: upstreamDocuments)
        load.diagnostics = read.diagnostics + load.diagnostics
        if load.diagnostics.containsErrors { load.screenSet = nil }
        return load
    }

    /// The definition files of `directory` (what ``load(directory:upstreams:)`` loads, and what
    /// `publish` stores), keyed by their path relative to it; nil files when the directory
    /// cannot be read. Diagnostics name files too large or unreadable, which are left out.
    public static func read(directory: String) -> (files: [String: [UInt8]]?, root: String, diagnostics: [Diagnostic]) {
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        var files: [String: [UInt8]] = [:]
        var diagnostics: [Diagnostic] = []
        // Links are followed (a Kubernetes ConfigMap is a tree of symbolic links); see ScreenDirectory.
        guard let found = ScreenDirectory.files(in: root) else {
            return (
                nil, root,
                [
                    Diagnostic(
                        code: .unreadableFile, file: root,
                        message:
                            "the screens directory does not exist or is not a directory; pass --screens DIR or set \"screens\" in config.json"
                    )
                ]
            )
        }
        if case .failure(let problem)? = ScreenDirectory.pathIndex(in: root) {
            diagnostics.append(
                Diagnostic(
                    code: .unreadableFile, file: "\(root)/\(ScreenDirectory.pathIndexName)", location: SourceLocation(line: 1, column: 1),
                    message: "\(problem.message); deploy kubernetes writes this file, so write the manifest again"))
        }
        for file in found where definitionExtensions.contains((file.relativePath as NSString).pathExtension) {
            let relative = file.relativePath
            if file.size > maximumFileSize {
                diagnostics.append(
                    Diagnostic(
                        code: .fileTooLarge, file: "\(root)/\(relative)", location: SourceLocation(line: 1, column: 1),
                        message:
                            "the file has \(file.size) bytes, more than the limit of \(maximumFileSize); split it or move data to an upstream"
                    )
                )
                continue
            }
            guard let data = FileManager.default.contents(atPath: file.path) else {
                diagnostics.append(
                    Diagnostic(
                        code: .unreadableFile, file: "\(root)/\(relative)", message: "the file cannot be read; check its permissions")
                )
                continue
            }
            files[relative] = Array(data)
        }
        return (files, root, diagnostics)
    }

    /// Loads a screen set from files in memory, keyed by their path relative to the screens
    /// directory (`home.json`, `components/card.json`). Used by ``load(directory:)`` and by tests.
    public static func load(
        files: [String: [UInt8]], root: String = "Screens", upstreams: Set<String>? = nil, upstreamDirectories: [String: String] = [:],
        upstreamDocuments: [String: String] = [:]
    ) -> ScreenSetLoad {
        guard let upstreams else { return ScreenSetBuilder(files: DefinitionFiles(files, root: root), upstreams: nil).build() }
        var configured = ConfiguredUpstreams(names: upstreams, directories: upstreamDirectories)
        // A document that cannot be read fails the load (its problem located in it): the screens
        // would otherwise be served unchecked against the API they call.
        var problems: [Diagnostic] = []
        for (name, path) in upstreamDocuments.sorted(by: { $0.key < $1.key }) where upstreams.contains(name) {
            switch OpenAPIDocument.read(path: path) {
            case .success(let document): configured.documents[name] = document
            case .failure(let problem): problems.append(problem)
            }
        }
        var load = ScreenSetBuilder(files: DefinitionFiles(files, root: root), upstreams: configured).build()
        if !problems.isEmpty {
            load.diagnostics = problems + load.diagnostics
            load.screenSet = nil
        }
        return load
    }

    /// A digest of every file's path and bytes: the same files give the same version on every
    /// replica and after every restart, and any edit gives a new one.
    static func contentVersion(of files: [String: [UInt8]]) -> String {
        var digest = FNV1a()
        for path in files.keys.sorted() {
            digest.combine(path.utf8)
            digest.combine(0)
            digest.combine(files[path] ?? [])
            digest.combine(0)
        }
        return digest.hexDigest
    }

    /// `fixtures/a.json` for `./fixtures/a.json`; nil for absolute paths and any that climb out with `..`.
    static func normalizedRelativePath(_ path: String) -> String? {
        guard !path.hasPrefix("/") else { return nil }
        var segments: [Substring] = []
        for segment in path.split(separator: "/") {
            switch segment {
            case ".": continue
            case "..": return nil
            default: segments.append(segment)
            }
        }
        return segments.isEmpty ? nil : segments.joined(separator: "/")
    }

    /// The offset of the first byte that is not valid UTF-8, or nil when all are.
    static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
