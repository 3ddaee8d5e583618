import TaksiSchema

/// Builds a ``ScreenSet`` from a directory's files in phases, each a function from what the
/// phases before it found to a named value (as swift-argument-parser goes from split arguments to
/// an argument set to parsed values):
///
/// 1. ``readCustomComponents()`` and ``readCustomActions()``: what the app decodes;
/// 2. ``readScreenFiles()``: every screen file and its name;
/// 3. ``readRoutes(of:)``: every screen's path shape, and the routes over them;
/// 4. ``readLinks(routes:)``, ``readStrings()`` and ``readFragments(catalog:)``;
/// 5. ``compile(_:context:)``: every screen file, in each locale;
/// 6. ``VariantGrouping``: the variants of each screen name;
/// 7. ``unusedWarnings(_:context:)`` and ``reachabilityWarnings(screenFiles:context:links:)``.
///
/// Every phase runs whatever the ones before it found wrong, so one load reports every error.
struct ScreenSetBuilder {
    let files: DefinitionFiles
    /// The configured upstreams; nil skips the checks (validating without a configuration).
    let upstreams: ConfiguredUpstreams?

    /// A screen file whose name was read: what the later phases start from.
    struct NamedFile {
        let name: String
        let file: SourceFile
        var node: JSONNode
    }

    /// The custom components the app declares, and where.
    struct CustomComponents {
        var schemas: [ComponentSchema] = []
        /// The file declaring each type.
        var files: [String: String] = [:]
        /// Where each type's `name` is, for warnings.
        var locations: [String: SourceLocation] = [:]
        /// The app versions that decode each type, field, enum value and custom action that says.
        var versions = CatalogVersions()
        /// What `actions.json` says each custom action is.
        var actionSummaries: [String: String] = [:]
        /// The executables the app runs itself, as `actions.json` declares them.
        var executables: Set<String> = []
        /// Types whose file (`components/<type>.json`) failed to parse or to read: their error is
        /// reported there, so the screens that use them are not also told to declare them.
        var failed: Set<String> = []
    }

    /// Every screen's path shape (in the order of ``NamedFile``s), and the routes over them.
    struct Routing {
        var patterns: [ScreenPattern]
        var routes: ScreenRoutes
    }

    /// What compiling a screen file reads besides the file.
    struct CompileContext {
        let routes: ScreenRoutes
        let catalog: ComponentCatalog
        let components: CustomComponents
        let fragments: [String: Fragment]
        let localization: Localization?
    }

    /// A variant of a screen, by its name and alternative.
    struct AlternativeKey: Hashable {
        var name: String
        var alternative: String
    }

    /// What compiling every screen file produced.
    struct Compilation {
        var compiled: [VariantGrouping.Entry] = []
        /// Variants whose file has errors, so grouping does not report them missing as well.
        var failed: Set<AlternativeKey> = []
        /// Message ids and fragments some screen used.
        var textsUsed: Set<String> = []
        var fragmentsUsed: Set<String> = []
        /// Each screen file as compiled, its fragments expanded, for the reachability warnings.
        var expandedFiles: [NamedFile] = []
    }

    /// Whether a file of this path can use components, messages, fragments or screens (a screen,
    /// a fragment, the links): fixtures, component schemas and string tables cannot.
    static func mayUseOthers(_ relative: String) -> Bool {
        !["fixtures/", "components/", "strings/"].contains { relative.hasPrefix($0) }
    }

    func build() -> ScreenSetLoad {
        var components = readCustomComponents()
        let declared = readAppActions(versions: &components.versions, summaries: &components.actionSummaries)
        let actions = declared.customActions
        components.executables = declared.executables
        readClientReleases(versions: &components.versions)
        let (screenFiles, unread) = readScreenFiles()
        let routing = readRoutes(of: screenFiles)
        let catalog = ComponentCatalog(
            customComponents: components.schemas, customActions: actions,
            navigationTargets: Self.targets(of: routing.routes, excusing: unread)
        )
        let links = readLinks(routes: routing.routes)
        let localization = readStrings()
        let fragments = readFragments(catalog: catalog)
        let context = CompileContext(
            routes: routing.routes, catalog: catalog, components: components, fragments: fragments, localization: localization
        )
        let compilation = compile(zip(screenFiles, routing.patterns).map { $0 }, context: context)
        let (screens, found) = VariantGrouping.group(compilation.compiled, failed: compilation.failed)
        files.diagnostics += found
        // A screen, fragment or link file that could not be read may use what looks unused: its
        // syntax error is the finding, not a component, message or screen "nothing uses".
        if !files.unreadable.contains(where: Self.mayUseOthers) {
            files.diagnostics += unusedWarnings(compilation, context: context)
            files.diagnostics += reachabilityWarnings(screenFiles: compilation.expandedFiles, context: context, links: links)
        }

        let diagnostics = files.diagnostics
        let screenSet =
            diagnostics.containsErrors
            ? nil
            : ScreenSet(
                screens: screens, routes: routing.routes, links: DeepLinks(links), catalog: catalog,
                warnings: diagnostics.filter { $0.severity == .warning }, version: ScreenSetLoader.contentVersion(of: files.bytes),
                localization: localization, catalogVersions: components.versions
            )
        return ScreenSetLoad(
            screenSet: screenSet, diagnostics: diagnostics, catalog: catalog, catalogVersions: components.versions,
            actionSummaries: components.actionSummaries)
    }

    // MARK: What the app knows

    /// `components/<type>.json`: one custom component schema each.
    func readCustomComponents() -> CustomComponents {
        var components = CustomComponents()
        // Lowercased, as codegen swift names its classes and files: the component that took each.
        var typeNames: [String: String] = [:]
        for relative in files.paths where relative.hasPrefix(ScreenSetLoader.componentsFolder + "/") {
            let expectedName = relative.split(separator: "/").last.map { name in String(name.prefix { $0 != "." }) }
            guard let (file, node) = files.parse(relative) else {
                if let expectedName { components.failed.insert(expectedName) }
                continue
            }
            let (schema, found) = CatalogReader.readComponent(node, file: file, expectedName: expectedName, versions: &components.versions)
            files.diagnostics += found
            guard let schema else {
                if let expectedName { components.failed.insert(expectedName) }
                continue
            }
            if let other = components.files[schema.name] {
                files.diagnostics.append(
                    Diagnostic(
                        code: .invalidName, file: file.path, message: "component \"\(schema.name)\" is also declared in \(other); keep one")
                )
                continue
            }
            if let other = SwiftCodegen.typeClash(ofComponent: schema.name, with: &typeNames) {
                let type = SwiftCodegen.typeName(of: schema.name)
                let otherType = SwiftCodegen.typeName(of: other)
                files.diagnostics.append(
                    Diagnostic(
                        code: .invalidName, file: file.path, location: file.location(ofOffset: (node["name"] ?? node).offset),
                        path: JSONPath.root.appending("name"),
                        message: (type == otherType
                            ? "components \"\(other)\" (\(components.files[other] ?? "")) and \"\(schema.name)\" would both be the Swift class \(type)"
                            : "component \"\(schema.name)\" would be the Swift class \(type), and \"\(other)\" (\(components.files[other] ?? "")) \(otherType): files whose names differ only by case, one file on macOS and Windows,")
                            + " in the code codegen swift writes; rename one"
                    ))
                // Still declared: the screens that use it are not told it is unknown.
            }
            components.files[schema.name] = file.path
            components.locations[schema.name] = file.location(ofOffset: (node["name"] ?? node).offset)
            components.schemas.append(schema)
        }
        return components
    }

    /// `actions.json`: the custom action identifiers the app registered, and the executables it runs.
    func readAppActions(versions: inout CatalogVersions, summaries: inout [String: String]) -> CatalogReader.AppActions {
        var actions = CatalogReader.AppActions()
        for actionsFile in ScreenSetLoader.actionsFiles where files.contains(actionsFile) {
            guard let (file, node) = files.parse(actionsFile) else { continue }
            let (found, diagnostics) = CatalogReader.readActions(node, file: file, versions: &versions, summaries: &summaries)
            files.diagnostics += diagnostics
            actions.customActions.formUnion(found.customActions)
            actions.executables.formUnion(found.executables)
        }
        return actions
    }

    /// `client.yaml`: which client release each app version links, so the built-ins follow it.
    func readClientReleases(versions: inout CatalogVersions) {
        for clientFile in ClientReleases.files where files.contains(clientFile) {
            guard let (file, node) = files.parse(clientFile) else { continue }
            files.diagnostics += ClientReleases.read(node, file: file, versions: &versions)
        }
    }

    // MARK: Screens and their paths

    /// Every screen file with its name: read first, so navigation targets can be checked across the
    /// set. `unread`: the names screen files that failed to parse would most likely declare (the
    /// `name:` line found in the text, else the path), so a target naming one is not a second error.
    func readScreenFiles() -> (screens: [NamedFile], unread: [String]) {
        let folders = [ScreenSetLoader.componentsFolder, ScreenSetLoader.fixturesFolder, Fragment.folder, StringTable.folder].map {
            $0 + "/"
        }
        let screenPaths = files.paths.filter { path in
            !folders.contains { path.hasPrefix($0) } && !ScreenSetLoader.actionsFiles.contains(path)
                && !ScreenSetLoader.linksFiles.contains(path) && !ClientReleases.files.contains(path)
        }
        var screenFiles: [NamedFile] = []
        var unread: [String] = []
        for relative in screenPaths {
            guard let (file, node) = files.parse(relative) else {
                unread.append(Self.likelyName(of: files.bytes[relative] ?? [], path: relative))
                continue
            }
            if let name = screenName(of: node, in: file) { screenFiles.append(NamedFile(name: name, file: file, node: node)) }
        }
        if screenPaths.isEmpty {
            files.diagnostics.append(
                Diagnostic(code: .noScreens, file: files.root, message: "no screen files were found; add one, like \(files.root)/home.json")
            )
        }
        return (screenFiles, unread)
    }

    /// The name a screen file that does not parse most likely declares: its first `name:` (YAML)
    /// or `"name":` (JSON) at the start of a line, else its path without the extension.
    static func likelyName(of bytes: [UInt8], path: String) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var rest = line.drop { $0 == " " || $0 == "{" }
            if rest.hasPrefix("\"name\"") {
                rest = rest.dropFirst(6)
            } else if rest.hasPrefix("name") {
                rest = rest.dropFirst(4)
            } else {
                continue
            }
            rest = rest.drop { $0 == " " }
            guard rest.first == ":" else { continue }
            var value = rest.dropFirst().drop { $0 == " " || $0 == "\"" || $0 == "'" }.prefix { !" \"',#".contains($0) }
            // `{name: c}` in a flow mapping: its closing brace is no part of the name, a parameter's is.
            while value.last == "}", value.filter({ $0 == "}" }).count > value.filter({ $0 == "{" }).count { value = value.dropLast() }
            if !value.isEmpty { return String(value) }
        }
        return String(path.prefix { $0 != "." })
    }

    /// The routes' check of navigation targets, where a target a screen file that failed to parse
    /// would open is no problem (the file's own error says what is wrong).
    static func targets(of routes: ScreenRoutes, excusing unread: [String]) -> NavigationTargets {
        guard !unread.isEmpty else { return routes.navigationTargets }
        let unreadRoutes = ScreenRoutes(unread.map { ScreenPattern(name: $0) })
        return NavigationTargets(names: []) { target in
            guard let problem = routes.problem(withTarget: target) else { return nil }
            return unreadRoutes.problem(withTarget: target) == nil ? nil : problem
        }
    }

    /// The screen's `name`, or nil (reported) when it has none or an invalid one.
    private func screenName(of node: JSONNode, in file: SourceFile) -> String? {
        guard let nameNode = node["name"], let name = nameNode.stringValue else {
            let message =
                node.members == nil
                ? "a screen file holds one object, {\"name\": ..., \"components\": [...]}, found \(node.typeName)"
                : node["name"] == nil
                    ? "a screen needs a \"name\", the name clients ask for (like \"home\"); add it"
                    : "the screen's \"name\" must be a string"
            files.diagnostics.append(
                Diagnostic(
                    code: node["name"] == nil ? .missingKey : .wrongType, file: file.path,
                    location: file.location(ofOffset: (node["name"] ?? node).offset),
                    path: node.members == nil ? .root : JSONPath.root.appending("name"), message: message
                )
            )
            return nil
        }
        if let problem = ScreenName.problem(with: name) {
            files.diagnostics.append(
                Diagnostic(
                    code: .invalidName, file: file.path, location: file.location(ofOffset: nameNode.offset),
                    path: JSONPath.root.appending("name"),
                    message: "\"\(name)\" is not a valid screen name: \(problem)"
                )
            )
            return nil
        }
        return name
    }

    /// Every screen's path shape (all variants of a name declare the same), and the routes over them.
    func readRoutes(of screenFiles: [NamedFile]) -> Routing {
        var patterns: [ScreenPattern] = []
        var patternFiles: [String: (pattern: ScreenPattern, file: String)] = [:]
        for screen in screenFiles {
            var reader = DefinitionReader(file: screen.file)
            let pattern = Self.pattern(name: screen.name, node: screen.node, reader: &reader)
            files.diagnostics += reader.diagnostics
            patterns.append(pattern)
            guard let first = patternFiles[screen.name] else {
                patternFiles[screen.name] = (pattern, screen.file.path)
                continue
            }
            if first.pattern != pattern {
                let node = screen.node
                files.diagnostics.append(
                    Diagnostic(
                        code: .invalidName, file: screen.file.path,
                        location: screen.file.location(ofOffset: (node["parameters"] ?? node["name"] ?? node).offset),
                        path: JSONPath.root.appending(node["parameters"] == nil ? "name" : "parameters"),
                        message:
                            "every variant of screen \"\(screen.name)\" declares the same path parameters, since they serve the same paths; \(first.file) declares them otherwise"
                    )
                )
            }
        }
        let routes = ScreenRoutes(patterns)
        for (first, second) in routes.overlaps {
            guard let firstFile = patternFiles[first.name]?.file, let screen = screenFiles.first(where: { $0.name == second.name }) else {
                continue
            }
            let example = zip(first.segments, second.segments).map { pair -> String in
                if case .literal(let text) = pair.0 { return text }
                if case .literal(let text) = pair.1 { return text }
                return "x"
            }.joined(separator: "/")
            files.diagnostics.append(
                Diagnostic(
                    code: .ambiguousScreens, file: screen.file.path,
                    location: screen.file.location(ofOffset: (screen.node["name"] ?? screen.node).offset),
                    path: JSONPath.root.appending("name"),
                    message:
                        "screens \(first.name) (\(firstFile)) and \(second.name) can both match a path like \(example); give one of them a literal segment where the other has a parameter, or different ones"
                )
            )
        }
        return Routing(patterns: patterns, routes: routes)
    }

    /// A screen's path shape: its name's segments, with the types its `parameters` declare (a
    /// parameter not declared is a string).
    static func pattern(name: String, node: JSONNode, reader: inout DefinitionReader) -> ScreenPattern {
        let names = ScreenPattern(name: name).parameterNames
        var declared: [String: RequestParameter] = [:]
        guard let parametersNode = node["parameters"] else { return ScreenPattern(name: name) }
        let path = JSONPath.root.appending("parameters")
        guard let members = parametersNode.members else {
            reader.report(
                .wrongType, at: parametersNode, path: path,
                "parameters must be an object of the path parameters in the screen's name, like {network: {type: string}}")
            return ScreenPattern(name: name)
        }
        for member in members {
            guard names.contains(member.key) else {
                reader.report(
                    .invalidName, offset: member.keyOffset, path: path.appending(member.key),
                    "\"\(member.key)\" is not a parameter of the screen's name \(name); "
                        + (names.isEmpty
                            ? "add {\(member.key)} to the name, or declare query parameters under a request source"
                            : "its parameters are \(names.joined(separator: ", "))")
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

    // MARK: Links, strings, fragments

    /// `links.yaml`: deep links mapped to screens.
    func readLinks(routes: ScreenRoutes) -> [DeepLink] {
        var links: [DeepLink] = []
        for linksFile in ScreenSetLoader.linksFiles where files.contains(linksFile) {
            guard let (file, node) = files.parse(linksFile) else { continue }
            var reader = DefinitionReader(file: file)
            links += reader.deepLinks(node, routes: routes)
            files.diagnostics += reader.diagnostics
        }
        return links
    }

    /// `strings/<locale>.yaml`: localized messages.
    func readStrings() -> Localization? {
        let (localization, found) = Localization.read(files: files.paths, parse: files.parse, root: files.root)
        files.diagnostics += found
        return localization
    }

    /// `fragments/<name>.yaml`: reusable parts of screens, by name.
    func readFragments(catalog: ComponentCatalog) -> [String: Fragment] {
        var fragments: [String: Fragment] = [:]
        for relative in files.paths where relative.hasPrefix(Fragment.folder + "/") {
            guard let (file, node) = files.parse(relative) else { continue }
            let name = Fragment.name(ofFile: relative)
            var reader = DefinitionReader(file: file)
            if let other = fragments[name] {
                reader.report(.invalidName, at: node, path: .root, "fragment \"\(name)\" is also declared in \(other.file.path); keep one")
            } else if let fragment = reader.readFragment(node, name: name, catalog: catalog) {
                fragments[name] = fragment
            }
            files.diagnostics += reader.diagnostics
        }
        return fragments
    }

    // MARK: Compiling

    /// Compiles every screen file (in every locale, when it has localized text).
    func compile(_ screens: [(NamedFile, ScreenPattern)], context: CompileContext) -> Compilation {
        var compilation = Compilation()
        compilation.expandedFiles = screens.map(\.0)
        let compilerContext = ScreenCompiler.Context(
            routes: context.routes, catalog: context.catalog, catalogVersions: context.components.versions, upstreams: upstreams,
            brokenComponents: context.components.failed, executables: context.components.executables, fragments: context.fragments,
            localization: context.localization,
            loadFixture: { [files] reference, node, path, reader in files.fixture(reference, at: node, path: path, reader: &reader) }
        )
        for (index, (screen, pattern)) in screens.enumerated() {
            let made = compileInEveryLocale(screen, pattern: pattern, in: compilerContext)
            compilation.fragmentsUsed.formUnion(made.fragmentsUsed)
            compilation.textsUsed.formUnion(made.textsUsed)
            if let expanded = made.expandedComponents {
                // The components as written too: a use that failed to expand still names its types.
                let node = screen.node
                compilation.expandedFiles[index].node = node.replacing("components", with: (node["components"]?.elements ?? []) + expanded)
            }
            if var compiled = made.screen {
                compiled.dependencies = dependencies(of: compiled, made: made, file: screen.file, context: context)
                compiled.fragmentsUsed = made.fragmentsUsed.sorted()
                compiled.componentTypes = Set(
                    (made.expandedComponents ?? []).flatMap { ScreenCompiler.componentTypes(in: $0, at: .root).map(\.0) }
                ).filter { context.components.files[$0] != nil }.sorted()
                compilation.compiled.append(VariantGrouping.Entry(screen: compiled, root: screen.node, file: screen.file))
            } else {
                let alternative = screen.node["alternative"]?.stringValue ?? ScreenVariant.defaultAlternative
                compilation.failed.insert(AlternativeKey(name: screen.name, alternative: alternative))
            }
        }
        return compilation
    }

    /// A screen compiled in the default locale and, when it has localized text, in each other one
    /// (the default's diagnostics stand for all: a translation only adds its own).
    private func compileInEveryLocale(
        _ screen: NamedFile, pattern: ScreenPattern, in context: ScreenCompiler.Context
    ) -> ScreenCompiler.Compilation {
        var made = ScreenCompiler.compile(screen.node, file: screen.file, pattern: pattern, locale: nil, in: context)
        files.diagnostics += made.diagnostics
        guard made.screen != nil, let localization = context.localization, !made.textsUsed.isEmpty || made.formatsUsed else {
            return made
        }
        made.screen?.locale = localization.defaultLocale
        for locale in localization.locales where locale != localization.defaultLocale {
            let translation = ScreenCompiler.compile(screen.node, file: screen.file, pattern: pattern, locale: locale, in: context)
            if var translated = translation.screen {
                translated.locale = locale
                made.screen?.translations[locale] = translated
            }
            files.diagnostics += translation.diagnostics.filter { !made.diagnostics.contains($0) }
        }
        return made
    }

    /// The files a compiled screen was made from: a change to any of them changes the screen.
    private func dependencies(
        of screen: ScreenVariant, made: ScreenCompiler.Compilation, file: SourceFile, context: CompileContext
    ) -> [String] {
        var dependencies: Set<String> = [file.path]
        if screen.locale != nil, let localization = context.localization { dependencies.formUnion(localization.files) }
        dependencies.formUnion(made.fragmentsUsed.compactMap { context.fragments[$0]?.file.path })
        dependencies.formUnion(made.fixturesRead.map { "\(files.root)/\($0)" })
        for component in made.expandedComponents ?? [] {
            dependencies.formUnion(ScreenCompiler.componentTypes(in: component, at: .root).compactMap { context.components.files[$0.0] })
        }
        return dependencies.sorted()
    }
}

extension DefinitionFiles {
    /// The value of a fixture file a `fixture` source names, or nil (reported on `reader`).
    func fixture(_ reference: String, at node: JSONNode, path: JSONPath, reader: inout DefinitionReader) -> JSONValue? {
        guard let relative = ScreenSetLoader.normalizedRelativePath(reference) else {
            reader.report(
                .invalidSource, at: node, path: path,
                "\"\(reference)\" must be a relative path inside the screens directory, like fixtures/home.json")
            return nil
        }
        guard contains(relative) else {
            reader.report(
                .invalidSource, at: node, path: path,
                "fixture file \(root)/\(relative) does not exist; paths are relative to the screens directory"
                    + NameSuggestion.hint(for: relative, among: paths)
            )
            return nil
        }
        guard let value = value(of: relative) else {
            reader.report(.invalidSource, at: node, path: path, "fixture file \(root)/\(relative) is not valid JSON (see its own error)")
            return nil
        }
        return value
    }
}
