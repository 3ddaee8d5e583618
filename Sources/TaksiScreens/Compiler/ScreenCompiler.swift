import TaksiSchema

/// Turns one screen file into a ``ScreenVariant``: checks every component against the catalog,
/// every binding against the screen's sources and every field's dynamic-ness, then builds the
/// skeleton (typed placeholders, `requires_data` exactly where data will come) and the data plan.
///
/// ``compile(_:file:pattern:locale:in:)`` takes an immutable ``Context`` (what every screen of a
/// set is compiled against) and returns a ``Compilation`` (the screen, every diagnostic, what it
/// read). Its sub-compilers (``SourcesReader``, ``FragmentExpander``, ``TextCompiler``) take what
/// they read and the reader to report into, and return what they made.
struct ScreenCompiler {
    /// The keys a screen file may have at its top level.
    static let screenKeys = [
        "name", "description", "entry", "parameters", "version", "alternative", "experiment", "sources", "components", "actions",
    ]
    /// The source a screen's path parameters are bound as: `{$bind: path.network}`.
    static let pathSourceName = "path"
    static let bindingKeys = ["$bind", "$template", "$each", "$text", "$when", "$fragment", "$param"]

    /// What every screen of a set is compiled against; nothing in it changes while one compiles.
    struct Context {
        /// Every screen's path shape, for navigation targets.
        let routes: ScreenRoutes
        /// What the app decodes (each field's newest declaration).
        let catalog: ComponentCatalog
        /// Which app versions decode each component type, field, enum value and custom action that says.
        let catalogVersions: CatalogVersions
        /// The configured upstreams, when known.
        let upstreams: ConfiguredUpstreams?
        /// Component types whose declaring file has errors (reported there): a use is not reported again.
        let brokenComponents: Set<String>
        /// The executables the app runs itself (`actions.json`): any other `executable` must be one
        /// of the screen's actions.
        let executables: Set<String>
        /// The screen set's fragments by name.
        let fragments: [String: Fragment]
        /// The screen set's string tables.
        let localization: Localization?
        /// Reads a fixture file named in a `fixture` source; reports its own diagnostics.
        let loadFixture: (_ relativePath: String, _ reference: JSONNode, _ path: JSONPath, _ reader: inout DefinitionReader) -> JSONValue?

        init(
            routes: ScreenRoutes, catalog: ComponentCatalog, catalogVersions: CatalogVersions = CatalogVersions(),
            upstreams: ConfiguredUpstreams? = nil, brokenComponents: Set<String> = [], executables: Set<String> = [],
            fragments: [String: Fragment] = [:], localization: Localization? = nil,
            loadFixture: @escaping (String, JSONNode, JSONPath, inout DefinitionReader) -> JSONValue?
        ) {
            self.routes = routes
            self.catalog = catalog
            self.catalogVersions = catalogVersions
            self.upstreams = upstreams
            self.brokenComponents = brokenComponents
            self.executables = executables
            self.fragments = fragments
            self.localization = localization
            self.loadFixture = loadFixture
        }
    }

    /// What compiling one screen file made: the screen (nil when the file has errors), every
    /// diagnostic, and what it read, for the set's dependencies and warnings.
    struct Compilation {
        var screen: ScreenVariant?
        var diagnostics: [Diagnostic]
        /// The fragments its components used (or named).
        var fragmentsUsed: Set<String> = []
        /// The message ids `$text` used.
        var textsUsed: Set<String> = []
        /// Whether a value is written in a format of the locale (`| currency EUR`): then the screen
        /// is compiled in every locale, as one with `$text` is.
        var formatsUsed = false
        /// The fixture files its sources read, relative to the screens directory.
        var fixturesRead: Set<String> = []
        /// The components after fragments were expanded, for what reads the screen's components
        /// outside the compiler; nil when the file did not get that far.
        var expandedComponents: [JSONNode]?
    }

    // What the screen is compiled with: fixed before its components are read.
    let context: Context
    /// The screen's path shape and parameter types (read before compiling, with every screen's).
    let pattern: ScreenPattern
    /// The locale this compilation is for.
    let locale: String?
    /// The app versions this variant reaches (its `version` requirement).
    let reach: VersionCheck.Reach
    /// What the app decodes in those versions: where a field's type differs by app version, the
    /// newest declaration the variant reaches.
    let catalog: ComponentCatalog

    // What the compilation makes as it goes (returned in a ``Compilation``).
    /// Where every diagnostic is reported (and how a node copied from a fragment is located).
    var reader: DefinitionReader
    /// What bindings may name (the screen's sources, or an action's values while it is read) and
    /// what they used.
    var sourceTable = SourceTable()
    /// The components left out as it went.
    var leftOut = LeftOut()
    /// What it read so far (texts, formats, fixtures), returned with the screen and the diagnostics.
    var made = Compilation(screen: nil, diagnostics: [])
    /// Static fields built from the path parameters, made per URL (``ScreenVariant/pathFields``).
    var pathFields: [ScreenVariant.PathField] = []

    /// The components a compilation left out, and why.
    struct LeftOut {
        /// Whether one was of a broken type: its error is in another file.
        var brokenType = false
        /// The identifiers of those that failed to compile (their errors reported): a patch
        /// naming one is not a second mistake.
        var failed: Set<String> = []
    }

    var name: String { pattern.name }
    /// What the versions the variant reaches cannot decode.
    var versionCheck: VersionCheck { VersionCheck(versions: context.catalogVersions, reach: reach, catalog: catalog) }

    private init(context: Context, pattern: ScreenPattern, locale: String?, requirement: VersionRequirement?, reader: DefinitionReader) {
        self.context = context
        self.pattern = pattern
        self.locale = locale ?? context.localization?.defaultLocale
        self.reach = VersionCheck.Reach(requirement)
        self.catalog = context.catalogVersions.compileCatalog(context.catalog, reach: reach.versions)
        self.reader = reader
    }

    /// Compiles the screen file `root` (of `file`, whose path shape is `pattern`) in `locale` (nil:
    /// the default one) against `context`.
    static func compile(
        _ root: JSONNode, file: SourceFile, pattern: ScreenPattern, locale: String?, in context: Context
    ) -> Compilation {
        var reader = DefinitionReader(file: file)
        let path = JSONPath.root
        guard
            let members = reader.object(
                root, at: path, what: "a screen", allowed: Self.screenKeys, required: ["name", "components"]
            )
        else { return Compilation(screen: nil, diagnostics: reader.diagnostics) }
        let member = { (key: String) in members.first { $0.key == key }?.value }
        _ = reader.string(member("description"), at: path.appending("description"), what: "description")
        _ = reader.bool(member("entry"), at: path.appending("entry"), what: "entry")
        // The requirement first: it decides what everything else is checked against.
        let requirement = member("version").flatMap { readRequirement($0, at: path.appending("version"), reader: &reader) }
        let alternative =
            member("alternative").map { readAlternative($0, at: path.appending("alternative"), reader: &reader) }
            ?? ScreenVariant.defaultAlternative
        let experiment = member("experiment").flatMap {
            readExperiment($0, at: path.appending("experiment"), alternative: alternative, reader: &reader)
        }
        var compiler = ScreenCompiler(context: context, pattern: pattern, locale: locale, requirement: requirement, reader: reader)
        let screen = compiler.compile(root, members: members, requirement: requirement, alternative: alternative, experiment: experiment)
        var compilation = compiler.made
        compilation.screen = screen
        compilation.diagnostics = compiler.reader.diagnostics
        compilation.fragmentsUsed = compiler.reader.fragmentsUsed
        return compilation
    }

    private mutating func compile(
        _ root: JSONNode, members: [JSONNode.Member], requirement: VersionRequirement?, alternative: String, experiment: Experiment?
    ) -> ScreenVariant? {
        let path = JSONPath.root
        let member = { (key: String) in members.first { $0.key == key }?.value }
        if pattern.hasParameters { sourceTable.declare([Self.pathSourceName: .path(pattern.parameters)]) }
        if let sourcesNode = member("sources") {
            readSources(sourcesNode, at: path.appending("sources"))
        }
        guard let componentsNode = member("components") else { return nil }
        let componentsPath = path.appending("components")
        guard var componentNodes = componentsNode.elements else {
            reader.report(.wrongType, at: componentsNode, path: componentsPath, "components must be an array of components")
            return nil
        }
        let usesFragments = FragmentExpander.usesFragments(componentsNode)
        if usesFragments {
            let expansion = FragmentExpander.expand(
                componentNodes, root: root, screenName: name, fragments: context.fragments, catalog: catalog, sources: sourceTable,
                reporting: &reader)
            componentNodes = expansion.components
            sourceTable.markUsed(expansion.sourcesUsed)
        }
        made.expandedComponents = componentNodes

        let (components, entries, componentIndices) = compileComponents(componentNodes, at: componentsPath, usesFragments: usesFragments)

        let actions = member("actions").map { readActions($0, at: path.appending("actions"), components: components) } ?? []
        let actionNames = member("actions").map { $0.members?.map(\.key) } ?? []
        checkExecutableNames(
            in: componentsNode, at: componentsPath, actions: actionNames ?? [],
            judgesUndeclared: actionNames?.allSatisfy(Self.isActionName) ?? false)
        let answers = member("sources").map { readSourceAnswers($0, at: path.appending("sources"), components: components) } ?? [:]

        warnUnusedSources(root)
        reader.report(versionCheck.findings(in: componentNodes, at: componentsPath))
        var plan = DataPlan(
            sources: sourceTable.declared.filter { sourceTable.used.contains($0.key) }, entries: entries,
            answers: answers.filter { sourceTable.used.contains($0.key) })
        plan.pagedLists = pagedLists(sourcesNode: member("sources"), entries: entries)
        let staticData =
            plan.isStatic ? buildStaticData(plan, componentNodes: componentNodes, indices: componentIndices, at: componentsPath) : nil
        checkFixtureVersions(plan, componentNodes: componentNodes, indices: componentIndices, at: componentsPath)
        guard !reader.diagnostics.containsErrors else { return nil }
        return ScreenVariant(
            name: name, pattern: pattern, file: reader.file.path, requirement: requirement, alternative: alternative,
            experiment: experiment,
            skeleton: Skeleton(components: components),
            dataPlan: plan.isStatic || context.catalogVersions.typeVaries(within: reach.versions)
                ? plan : plan.compilingTemplates(catalog: catalog),
            staticData: staticData, actions: actions, pathFields: pathFields
        )
    }

    /// Every component (fragments expanded), with the data plan's entries of the dynamic ones and
    /// each identifier's index; identifiers must be unique.
    private mutating func compileComponents(
        _ componentNodes: [JSONNode], at componentsPath: JSONPath, usesFragments: Bool
    ) -> (components: [Component], entries: [DataPlan.Entry], indices: [String: Int]) {
        var components: [Component] = []
        var entries: [DataPlan.Entry] = []
        var identifiers: [String: (JSONPath, JSONNode)] = [:]
        var componentIndices: [String: Int] = [:]
        for (index, node) in componentNodes.enumerated() {
            let componentPath = componentsPath.appending(index)
            guard let (component, entry) = compileComponent(node, index: index, at: componentPath) else {
                // Its own error is reported; the sources it names are not "never used" on top of it,
                // nor is a patch naming it "no component of this screen".
                sourceTable.markUsed(Self.sourcesNamed(in: node))
                if let identifier = node["identifier"]?.stringValue { leftOut.failed.insert(identifier) }
                // Never left out in silence: a component that fails with no error in its file (one
                // bound to a broken source reports nothing more) would be missing from a set that
                // validates. (No known case; this is the guard.)
                if reader.errorCount == 0, !leftOut.brokenType {
                    reader.report(
                        .uncompiledComponent, at: node, path: componentPath,
                        "this component could not be compiled and no reason was found; this is a bug in taksi-server, please report it with this file"
                    )
                }
                continue
            }
            if let (firstPath, firstNode) = identifiers[component.identifier] {
                let first = usesFragments ? "the component at \(reader.place(of: firstNode))" : "\(firstPath)"
                reader.report(
                    .duplicateIdentifier, at: node["identifier"] ?? node, path: componentPath.appending("identifier"),
                    "identifier \"\(component.identifier)\" is already used by \(first); identifiers must be unique within a screen (two dynamic components with one identifier crash the app)"
                        + (usesFragments
                            ? "; a fragment used more than once takes its identifiers as parameters: identifier: {$param: id}" : "")
                )
            }
            identifiers[component.identifier] = (componentPath, node["identifier"] ?? node)
            componentIndices[component.identifier] = index
            components.append(component)
            if let entry { entries.append(entry) }
        }
        return (components, entries, componentIndices)
    }

    /// Warns of each declared source no field binds.
    private mutating func warnUnusedSources(_ root: JSONNode) {
        let path = JSONPath.root
        for (sourceName, source) in sourceTable.declared where !sourceTable.used.contains(sourceName) {
            if case .path = source { continue }
            let sourcePath = path.appending("sources").appending(sourceName)
            reader.report(
                .unknownSource, at: root.closestNode(at: sourcePath), path: sourcePath,
                "source \"\(sourceName)\" is never used; bind a field to it or remove it", severity: .warning
            )
        }
    }

    // MARK: Static data

    /// For a screen whose sources are all fixtures, builds the data once now; anything it would
    /// leave out is an error, since no request could ever do better.
    private mutating func buildStaticData(
        _ plan: DataPlan, componentNodes: [JSONNode], indices: [String: Int], at path: JSONPath
    ) -> InterfaceData? {
        guard !reader.diagnostics.containsErrors else { return nil }
        let (data, problems) = plan.build(values: plan.staticValues, catalog: catalog)
        for entry in plan.entries {
            let forEntry = problems.filter { $0.identifier == entry.identifier }
            guard forEntry.contains(where: \.isLoss) else { continue }
            guard let index = indices[entry.identifier] else { continue }
            reader.report(
                .unresolvedData, at: componentNodes[index], path: path.appending(index),
                "its data cannot be built from the screen's fixtures: "
                    + forEntry.map(\.message).joined(separator: "; ") + "; fix the binding or the fixture"
            )
        }
        return data
    }

    /// Fixtures are data the team writes: what the app versions this variant reaches cannot
    /// decode of the entries made from them alone (an enum value newer than some of those
    /// versions) is an error here, not a value left out at run time.
    private mutating func checkFixtureVersions(_ plan: DataPlan, componentNodes: [JSONNode], indices: [String: Int], at path: JSONPath) {
        guard !context.catalogVersions.isEmpty, !reader.diagnostics.containsErrors else { return }
        let staticValues = plan.staticValues
        let fixed = Set(
            plan.entries.filter { entry in entry.fields.values.allSatisfy { $0.sourceNames.isSubset(of: staticValues.keys) } }.map(
                \.identifier))
        guard !fixed.isEmpty else { return }
        let fixedPlan = plan.restricted(to: fixed)
        let (_, anyway) = fixedPlan.build(values: staticValues, catalog: catalog)
        var reported: Set<String> = []
        for epoch in context.catalogVersions.epochs {
            guard let served = reach.served(epoch) else { continue }
            let (_, problems) = fixedPlan.build(values: staticValues, catalog: context.catalogVersions.catalog(catalog, for: epoch))
            for entry in fixedPlan.entries {
                let lost = problems.filter { problem in
                    problem.identifier == entry.identifier && problem.isLoss && !anyway.contains { $0.message == problem.message }
                }
                guard !lost.isEmpty, let index = indices[entry.identifier], reported.insert(entry.identifier).inserted else { continue }
                reader.report(
                    .notDecoded, at: componentNodes[index], path: path.appending(index),
                    "its data from the screen's fixtures does not decode in every app version the variant reaches (\(served)): "
                        + lost.map(\.message).joined(separator: "; ") + "; raise the requirement, or change the fixture"
                )
            }
        }
    }

    // MARK: Helpers

    /// Collapses a structure without bindings into one literal.
    static func normalized(_ expression: ContentExpression) -> ContentExpression {
        switch expression {
        case .object(let members):
            var values: [String: JSONValue] = [:]
            for (key, member) in members {
                guard case .literal(let value) = member else { return expression }
                values[key] = value
            }
            return .literal(.object(values))
        case .array(let elements):
            var values: [JSONValue] = []
            for element in elements {
                guard case .literal(let value) = element else { return expression }
                values.append(value)
            }
            return .literal(.array(values))
        default:
            return expression
        }
    }

    /// The first object under `node` that looks like a binding (a `$` key), with its path.
    static func firstBinding(in node: JSONNode, at path: JSONPath) -> (relative: JSONPath, absolute: JSONPath)? {
        func search(_ node: JSONNode, _ relative: JSONPath) -> JSONPath? {
            switch node.kind {
            case .object(let members):
                if members.contains(where: { $0.key.hasPrefix("$") }) { return relative }
                for member in members {
                    if let found = search(member.value, relative.appending(member.key)) { return found }
                }
                return nil
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    if let found = search(element, relative.appending(index)) { return found }
                }
                return nil
            default:
                return nil
            }
        }
        return search(node, .root).map { ($0, path.appending($0)) }
    }

}
