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
    /// - Parameter upstreams: the configured upstream names; when given, an `http` source naming
    ///   another is an error. Nil skips the check (validating without a configuration).
    public static func load(directory: String, upstreams: Set<String>? = nil) -> ScreenSetLoad {
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        var files: [String: [UInt8]] = [:]
        var diagnostics: [Diagnostic] = []
        // Links are followed (a Kubernetes ConfigMap is a tree of symbolic links); see ScreenDirectory.
        guard let found = ScreenDirectory.files(in: root) else {
            return ScreenSetLoad(
                screenSet: nil,
                diagnostics: [
                    Diagnostic(
                        code: .unreadableFile, file: root,
                        message: "the screens directory does not exist or is not a directory; pass --screens DIR or set \"screens\" in config.json"
                    )
                ]
            )
        }
        for file in found where definitionExtensions.contains((file.relativePath as NSString).pathExtension) {
            let relative = file.relativePath
            if file.size > maximumFileSize {
                diagnostics.append(
                    Diagnostic(
                        code: .fileTooLarge, file: "\(root)/\(relative)", location: SourceLocation(line: 1, column: 1),
                        message: "the file has \(file.size) bytes, more than the limit of \(maximumFileSize); split it or move data to an upstream"
                    )
                )
                continue
            }
            guard let data = FileManager.default.contents(atPath: file.path) else {
                diagnostics.append(
                    Diagnostic(code: .unreadableFile, file: "\(root)/\(relative)", message: "the file cannot be read; check its permissions")
                )
                continue
            }
            files[relative] = Array(data)
        }
        var load = load(files: files, root: root, upstreams: upstreams)
        load.diagnostics = diagnostics + load.diagnostics
        if load.diagnostics.containsErrors { load.screenSet = nil }
        return load
    }

    /// Loads a screen set from files in memory, keyed by their path relative to the screens
    /// directory (`home.json`, `components/card.json`). Used by ``load(directory:)`` and by tests.
    public static func load(files: [String: [UInt8]], root: String = "Screens", upstreams: Set<String>? = nil) -> ScreenSetLoad {
        var diagnostics: [Diagnostic] = []
        var parsed: [String: (SourceFile, JSONNode)] = [:]
        func parse(_ relative: String) -> (SourceFile, JSONNode)? {
            if let done = parsed[relative] { return done }
            guard var bytes = files[relative] else { return nil }
            // A UTF-8 byte order mark (some editors write one) starts the file; it is no part of the
            // first key. YAML and JSON (RFC 8259, 8.1) both let a reader ignore it.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            let file = SourceFile(path: "\(root)/\(relative)", bytes: bytes)
            if let offset = firstInvalidUTF8Offset(bytes) {
                let isUTF16 = bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
                diagnostics.append(
                    Diagnostic(
                        code: .syntax, file: file.path, location: file.location(ofOffset: offset),
                        message: isUTF16 ? "the file is UTF-16; save it as UTF-8" : "the file is not valid UTF-8; save it as UTF-8"
                    )
                )
                return nil
            }
            do {
                let isYAML = relative.hasSuffix(".yaml") || relative.hasSuffix(".yml")
                let node = try isYAML ? YAMLReader.parse(file) : JSONParser.parse(bytes)
                parsed[relative] = (file, node)
                return (file, node)
            } catch {
                diagnostics.append(
                    Diagnostic(code: .syntax, file: file.path, location: file.location(ofOffset: error.offset), message: error.message)
                )
                return nil
            }
        }

        let paths = files.keys.sorted()
        let componentPaths = paths.filter { $0.hasPrefix(componentsFolder + "/") }
        let screenPaths = paths.filter {
            !$0.hasPrefix(componentsFolder + "/") && !$0.hasPrefix(fixturesFolder + "/") && !$0.hasPrefix(Fragment.folder + "/")
                && !$0.hasPrefix(StringTable.folder + "/")
                && !actionsFiles.contains($0) && !linksFiles.contains($0)
        }

        // What the app knows: custom components and custom actions.
        var customComponents: [ComponentSchema] = []
        var componentFiles: [String: String] = [:]
        var componentLocations: [String: SourceLocation] = [:]
        var componentSince: [String: Version] = [:]
        for relative in componentPaths {
            guard let (file, node) = parse(relative) else { continue }
            let expectedName = relative.split(separator: "/").last.map { name in
                String(name.prefix { $0 != "." })
            }
            let (schema, since, found) = CatalogReader.readComponent(node, file: file, expectedName: expectedName)
            diagnostics += found
            if let schema, let since { componentSince[schema.name] = since }
            guard let schema else { continue }
            if let other = componentFiles[schema.name] {
                diagnostics.append(
                    Diagnostic(code: .invalidName, file: file.path, message: "component \"\(schema.name)\" is also declared in \(other); keep one")
                )
                continue
            }
            componentFiles[schema.name] = file.path
            componentLocations[schema.name] = file.location(ofOffset: (node["name"] ?? node).offset)
            customComponents.append(schema)
        }
        var customActions: Set<String> = []
        for actionsFile in actionsFiles where files[actionsFile] != nil {
            guard let (file, node) = parse(actionsFile) else { continue }
            let (actions, found) = CatalogReader.readActions(node, file: file)
            diagnostics += found
            customActions.formUnion(actions)
        }

        // Every screen's name first, so navigation targets can be checked across the set.
        var screenFiles: [(name: String, file: SourceFile, node: JSONNode)] = []
        for relative in screenPaths {
            guard let (file, node) = parse(relative) else { continue }
            guard let nameNode = node["name"], let name = nameNode.stringValue else {
                let message =
                    node.members == nil
                    ? "a screen file holds one object, {\"name\": ..., \"components\": [...]}, found \(node.typeName)"
                    : node["name"] == nil
                        ? "a screen needs a \"name\", the name clients ask for (like \"home\"); add it"
                        : "the screen's \"name\" must be a string"
                diagnostics.append(
                    Diagnostic(
                        code: node["name"] == nil ? .missingKey : .wrongType, file: file.path,
                        location: file.location(ofOffset: (node["name"] ?? node).offset),
                        path: node.members == nil ? .root : JSONPath.root.appending("name"), message: message
                    )
                )
                continue
            }
            if let problem = ScreenName.problem(with: name) {
                diagnostics.append(
                    Diagnostic(
                        code: .invalidName, file: file.path, location: file.location(ofOffset: nameNode.offset),
                        path: JSONPath.root.appending("name"), message: "\"\(name)\" is not a valid screen name: \(problem)"
                    )
                )
                continue
            }
            screenFiles.append((name, file, node))
        }
        if screenPaths.isEmpty {
            diagnostics.append(
                Diagnostic(code: .noScreens, file: root, message: "no screen files were found; add one, like \(root)/home.json")
            )
        }

        // Every screen's path shape next, so navigation targets can be checked across the set.
        var patterns: [ScreenPattern] = []
        var patternFiles: [String: (pattern: ScreenPattern, file: String)] = [:]
        for (name, file, node) in screenFiles {
            var reader = DefinitionReader(file: file)
            let pattern = readPattern(name: name, node: node, reader: &reader)
            diagnostics += reader.diagnostics
            patterns.append(pattern)
            if let first = patternFiles[name] {
                if first.pattern != pattern {
                    diagnostics.append(
                        Diagnostic(
                            code: .invalidName, file: file.path, location: file.location(ofOffset: (node["parameters"] ?? node["name"] ?? node).offset),
                            path: JSONPath.root.appending(node["parameters"] == nil ? "name" : "parameters"),
                            message: "every variant of screen \"\(name)\" declares the same path parameters, since they serve the same paths; \(first.file) declares them otherwise"
                        )
                    )
                }
            } else {
                patternFiles[name] = (pattern, file.path)
            }
        }
        let routes = ScreenRoutes(patterns)
        for (first, second) in routes.overlaps {
            guard let firstFile = patternFiles[first.name]?.file, let (_, file, node) = screenFiles.first(where: { $0.name == second.name }) else {
                continue
            }
            let example = zip(first.segments, second.segments).map { pair -> String in
                if case .literal(let text) = pair.0 { return text }
                if case .literal(let text) = pair.1 { return text }
                return "x"
            }.joined(separator: "/")
            diagnostics.append(
                Diagnostic(
                    code: .ambiguousScreens, file: file.path, location: file.location(ofOffset: (node["name"] ?? node).offset),
                    path: JSONPath.root.appending("name"),
                    message: "screens \(first.name) (\(firstFile)) and \(second.name) can both match a path like \(example); give one of them a literal segment where the other has a parameter, or different ones"
                )
            )
        }

        let catalog = ComponentCatalog(
            customComponents: customComponents, customActions: customActions, navigationTargets: routes.navigationTargets
        )
        var links: [DeepLink] = []
        for linksFile in linksFiles where files[linksFile] != nil {
            guard let (file, node) = parse(linksFile) else { continue }
            var reader = DefinitionReader(file: file)
            links += reader.deepLinks(node, routes: routes)
            diagnostics += reader.diagnostics
        }
        let (localization, localizationFindings) = Localization.read(files: paths, parse: parse, root: root)
        diagnostics += localizationFindings
        var textsUsed: Set<String> = []
        var fragments: [String: Fragment] = [:]
        for relative in paths where relative.hasPrefix(Fragment.folder + "/") {
            guard let (file, node) = parse(relative) else { continue }
            let name = Fragment.name(ofFile: relative)
            var reader = DefinitionReader(file: file)
            if let other = fragments[name] {
                reader.report(.invalidName, at: node, path: .root, "fragment \"\(name)\" is also declared in \(other.file.path); keep one")
            } else if let fragment = reader.readFragment(node, name: name, catalog: catalog) {
                fragments[name] = fragment
            }
            diagnostics += reader.diagnostics
        }
        var usedFragments: Set<String> = []
        // Each screen file as compiled, with its fragments expanded, for the warnings below.
        var expandedFiles = screenFiles

        var compiled: [(screen: CompiledScreen, root: JSONNode, file: SourceFile)] = []
        var fixtureCache: [String: JSONValue] = [:]
        // "name#alternative" of files with errors, so grouping does not report them missing as well.
        var failedAlternatives: Set<String> = []
        for (index, ((name, file, node), pattern)) in zip(screenFiles, patterns).enumerated() {
            func makeCompiler(locale: String?) -> ScreenCompiler {
                ScreenCompiler(
                    pattern: pattern, routes: routes, file: file, catalog: catalog, componentSince: componentSince, upstreams: upstreams,
                    fragments: fragments, localization: localization, locale: locale
                ) {
                    reference, referenceNode, path, reader in
                    guard let relative = normalizedRelativePath(reference) else {
                        reader.report(
                            .invalidSource, at: referenceNode, path: path,
                            "\"\(reference)\" must be a relative path inside the screens directory, like fixtures/home.json"
                        )
                        return nil
                    }
                    if let cached = fixtureCache[relative] { return cached }
                    guard files[relative] != nil else {
                        reader.report(
                            .invalidSource, at: referenceNode, path: path,
                            "fixture file \(root)/\(relative) does not exist; paths are relative to the screens directory"
                                + NameSuggestion.hint(for: relative, among: paths)
                        )
                        return nil
                    }
                    guard let (_, fixture) = parse(relative) else {
                        reader.report(.invalidSource, at: referenceNode, path: path, "fixture file \(root)/\(relative) is not valid JSON (see its own error)")
                        return nil
                    }
                    fixtureCache[relative] = fixture.value
                    return fixture.value
                }
            }
            var compiler = makeCompiler(locale: nil)
            var screen = compiler.compile(node)
            diagnostics += compiler.reader.diagnostics
            usedFragments.formUnion(compiler.reader.fragmentsUsed)
            if let expanded = compiler.expandedComponents {
                // The components as written too: a use that failed to expand still names its types.
                expandedFiles[index].node = node.replacing("components", with: (node["components"]?.elements ?? []) + expanded)
            }
            textsUsed.formUnion(compiler.textsUsed)
            if screen != nil, let localization, !compiler.textsUsed.isEmpty {
                // A screen with localized text is compiled in each locale; the default's diagnostics stand for all.
                screen?.locale = localization.defaultLocale
                for locale in localization.locales where locale != localization.defaultLocale {
                    var translation = makeCompiler(locale: locale)
                    if let translated = translation.compile(node) {
                        var translated = translated
                        translated.locale = locale
                        screen?.translations[locale] = translated
                    }
                    diagnostics += translation.reader.diagnostics.filter { !compiler.reader.diagnostics.contains($0) }
                }
            }
            if var screen {
                var dependencies: Set<String> = [file.path]
                if screen.locale != nil, let localization { dependencies.formUnion(localization.files) }
                dependencies.formUnion(compiler.reader.fragmentsUsed.compactMap { fragments[$0]?.file.path })
                dependencies.formUnion(compiler.fixturesRead.map { "\(root)/\($0)" })
                for component in compiler.expandedComponents ?? [] {
                    dependencies.formUnion(ScreenCompiler.componentTypes(in: component, at: .root).compactMap { componentFiles[$0.0] })
                }
                screen.dependencies = dependencies.sorted()
                compiled.append((screen, node, file))
            } else {
                failedAlternatives.insert("\(name)#\(node["alternative"]?.stringValue ?? CompiledScreen.defaultAlternative)")
            }
        }
        let (screens, found) = VariantGrouping.group(compiled, failedAlternatives: failedAlternatives)
        diagnostics += found
        for (name, fragment) in fragments.sorted(by: { $0.key < $1.key }) where !usedFragments.contains(name) {
            diagnostics.append(
                Diagnostic(
                    severity: .warning, code: .unusedFragment, file: fragment.file.path, location: SourceLocation(line: 1, column: 1),
                    message: "fragment \"\(name)\" is not used by any screen; use it ({$fragment: \(name)}) or remove the file"
                )
            )
        }
        if let localization, let table = localization.tables[localization.defaultLocale] {
            var reader = DefinitionReader(file: table.file)
            for key in table.keys where !textsUsed.contains(key) {
                reader.report(
                    .unusedText, offset: table.keyOffsets[key] ?? 0, path: JSONPath.root.appending(key),
                    "message \"\(key)\" is not used by any screen; use it ({$text: \(key)}) or remove it from every locale", severity: .warning
                )
            }
            diagnostics += reader.diagnostics
        }
        diagnostics += reachabilityWarnings(
            screenFiles: expandedFiles, routes: routes, links: links, componentFiles: componentFiles, componentLocations: componentLocations
        )

        let warnings = diagnostics.filter { $0.severity == .warning }
        let screenSet =
            diagnostics.containsErrors
            ? nil
            : ScreenSet(
                screens: screens, routes: routes, links: DeepLinks(links), catalog: catalog, warnings: warnings, version: contentVersion(of: files),
                localization: localization
            )
        return ScreenSetLoad(screenSet: screenSet, diagnostics: diagnostics, catalog: catalog)
    }

    /// A screen's path shape: its name's segments, with the types its `parameters` declare (a
    /// parameter not declared is a string).
    private static func readPattern(name: String, node: JSONNode, reader: inout DefinitionReader) -> ScreenPattern {
        let names = ScreenPattern(name: name).parameterNames
        var declared: [String: RequestParameter] = [:]
        guard let parametersNode = node["parameters"] else { return ScreenPattern(name: name) }
        let path = JSONPath.root.appending("parameters")
        guard let members = parametersNode.members else {
            reader.report(.wrongType, at: parametersNode, path: path, "parameters must be an object of the path parameters in the screen's name, like {network: {type: string}}")
            return ScreenPattern(name: name)
        }
        for member in members {
            guard names.contains(member.key) else {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: path.appending(member.key),
                    "\"\(member.key)\" is not a parameter of the screen's name \(name); "
                        + (names.isEmpty ? "add {\(member.key)} to the name, or declare query parameters under a request source" : "its parameters are \(names.joined(separator: ", "))")
                        + NameSuggestion.hint(for: member.key, among: names)
                )
                continue
            }
            if let parameter = reader.parameter(member.value, at: path.appending(member.key), place: .path) {
                declared[member.key] = parameter
            }
        }
        return ScreenPattern(name: name, declared: declared)
    }

    /// Warnings for what nothing uses: custom component types no screen uses, and screens no other
    /// screen navigates to unless they are marked `"entry": true` (a screen the app opens itself).
    private static func reachabilityWarnings(
        screenFiles: [(name: String, file: SourceFile, node: JSONNode)], routes: ScreenRoutes, links: [DeepLink],
        componentFiles: [String: String],
        componentLocations: [String: SourceLocation]
    ) -> [Diagnostic] {
        var usedTypes: Set<String> = []
        var targets: [String: Set<String>] = [:]
        for (name, _, node) in screenFiles {
            for (index, component) in (node["components"]?.elements ?? []).enumerated() {
                let path = JSONPath.root.appending("components").appending(index)
                usedTypes.formUnion(ScreenCompiler.componentTypes(in: component, at: path).map(\.0))
            }
            targets[name, default: []].formUnion(navigationTargets(in: node, routes: routes))
        }
        // A screen a deep link opens is reached from outside the app.
        for link in links {
            targets["", default: []].insert(link.target.name)
        }
        var warnings: [Diagnostic] = []
        for (type, path) in componentFiles.sorted(by: { $0.key < $1.key }) where !usedTypes.contains(type) {
            warnings.append(
                Diagnostic(
                    severity: .warning, code: .unusedComponent, file: path, location: componentLocations[type],
                    path: componentLocations[type] == nil ? nil : JSONPath.root.appending("name"),
                    message: "component \"\(type)\" is not used by any screen; use it or remove the file"
                )
            )
        }
        let reached = targets.reduce(into: Set<String>()) { reached, entry in
            reached.formUnion(entry.value.subtracting([entry.key]))
        }
        var warned: Set<String> = []
        for (name, file, node) in screenFiles where !reached.contains(name) && warned.insert(name).inserted {
            let isEntry = screenFiles.contains { $0.name == name && $0.node["entry"]?.value == .bool(true) }
            guard !isEntry else { continue }
            warnings.append(
                Diagnostic(
                    severity: .warning, code: .unreachableScreen, file: file.path,
                    location: file.location(ofOffset: (node["name"] ?? node).offset), path: JSONPath.root.appending("name"),
                    message: "no other screen navigates to \"\(name)\"; add \"entry\": true if the app opens it directly"
                )
            )
        }
        return warnings
    }

    /// The screens that navigation actions in a document open: literal targets
    /// (`bikes/stations/velib` opens `bikes/stations/{network}`) and `$template` ones.
    private static func navigationTargets(in node: JSONNode, routes: ScreenRoutes) -> Set<String> {
        var targets: Set<String> = []
        func search(_ node: JSONNode) {
            switch node.kind {
            case .object(let members):
                if node["identifier"]?.stringValue == "navigation", let target = node["content"]?["interface_identifier"] {
                    if let literal = target.stringValue, let match = routes.match(literal[...]) {
                        targets.insert(match.pattern.name)
                    } else if let template = target["$template"]?.stringValue {
                        let shape = template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                            segment.contains("{") ? ScreenRoutes.TargetSegment.value : .text(String(segment))
                        }
                        if case .opens(let only) = routes.resolve(shape) { targets.insert(only.name) }
                    }
                }
                members.forEach { search($0.value) }
            case .array(let elements):
                elements.forEach(search)
            default:
                break
            }
        }
        search(node)
        return targets
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
