public import TaksiSchema

/// One variant of a screen, compiled: its skeleton (ready to send) and the plan for its data.
/// A screen file is one variant: a screen name, optionally for a range of app versions and as a
/// named alternative.
public struct ScreenVariant: Sendable {
    /// The alternative's name when a file does not name one.
    public static let defaultAlternative = "default"

    /// The screen's name, as clients ask for it (`home`, `bikes/stations/{network}`).
    public var name: String
    /// The paths the screen serves and its path parameters' types (the same for every variant).
    public var pattern: ScreenPattern
    /// The file that defines it, as shown in diagnostics.
    public var file: String
    /// The app versions this variant is for; nil for any (and for requests without a version).
    public var requirement: VersionRequirement?
    /// The alternative's name (`default` when the file names none).
    public var alternative: String
    /// The A/B test over this version's alternatives; declared in the default alternative's file.
    public var experiment: Experiment?
    /// The layout with typed placeholders; `requires_data` set exactly on dynamic components.
    public var skeleton: Skeleton
    /// How to build the data response.
    public var dataPlan: DataPlan
    /// The data response, when every source is a fixture: computed and checked once at load.
    public var staticData: InterfaceData?
    /// The intents it accepts (`POST .../actions/<name>`), in the order the file declares them.
    public var actions: [ScreenAction] = []
    /// The files this variant's payloads are made from, as diagnostics name them (`Screens/home.yaml`):
    /// its own, the fragments it uses, the fixtures it reads, the component schemas of its types.
    public var dependencies: [String] = []
    /// The fragments it places (`help_button`), and the catalog's component types its skeleton
    /// uses (`product_row`), sorted: what a cache tag names (a translation shares them).
    public var fragmentsUsed: [String] = []
    public var componentTypes: [String] = []
    /// The locale of this compilation, for a screen with localized text (`$text`); nil otherwise.
    public var locale: String?
    /// The same variant compiled in each other locale, by tag.
    public var translations: [String: ScreenVariant] = [:]
    /// Static fields built from the screen's path parameters (a button opening
    /// `products/{path.id}/review`): the skeleton holds a placeholder there, and each URL's
    /// skeleton is made by ``skeleton(path:catalog:)``.
    public var pathFields: [PathField] = []

    /// A static field of a component whose value is built from path parameters.
    public struct PathField: Sendable {
        public var identifier: String
        public var field: String
        public var expression: ContentExpression
        public var type: FieldType
    }

    /// The skeleton of one URL of the screen: its path fields built from the path parameters'
    /// values, each checked to decode as its field's type.
    /// - Returns: the skeleton, or why a value cannot make one (a value that cannot be a segment
    ///   of a navigation target, or that does not fit the field).
    public func skeleton(path values: [String: JSONValue], catalog: ComponentCatalog) -> Result<Skeleton, PathFieldError> {
        guard !pathFields.isEmpty else { return .success(skeleton) }
        var components = skeleton.components
        let scope: [String: JSONValue] = [ScreenCompiler.pathSourceName: .object(values)]
        for field in pathFields {
            guard let index = components.firstIndex(where: { $0.identifier == field.identifier }),
                case .object(var content) = components[index].content
            else { continue }
            let result = field.expression.evaluate(scope)
            guard let value = result.value else {
                return .failure(
                    PathFieldError(identifier: field.identifier, field: field.field, problem: result.problems.first ?? "no value"))
            }
            let checked = catalog.check(value, as: field.type, mode: .data)
            guard checked.isValid else {
                return .failure(
                    PathFieldError(
                        identifier: field.identifier, field: field.field,
                        problem: checked.violations.first.map(\.description) ?? "it does not decode"))
            }
            content[field.field] = value
            components[index].content = .object(content)
        }
        return .success(Skeleton(components: components))
    }

    /// Why a URL's values cannot make its skeleton.
    public struct PathFieldError: Error, Sendable, Equatable, CustomStringConvertible {
        public var identifier: String
        public var field: String
        public var problem: String
        public var description: String { "\(field) of component \"\(identifier)\" cannot be made from this path: \(problem)" }
    }

    /// This variant in `locale`: itself for its own locale, a screen without text, or a locale it lacks.
    public func translated(to locale: String) -> ScreenVariant {
        translations[locale] ?? self
    }

    /// Whether the client will ask for data.
    public var requiresData: Bool { skeleton.requiresData }

    /// Names the variant in responses (`X-Taksi-Variant`) and logs: `home|>= 2.0|compact`, with
    /// `*` for no version requirement.
    public var variantID: String {
        "\(name)|\(requirement?.description ?? "*")|\(alternative)"
    }
}

/// The variants of one app-version range of a screen: its alternatives and the experiment over them.
public struct VariantRange: Sendable {
    /// The app versions served; nil for any.
    public var requirement: VersionRequirement?
    /// Alternatives by name; `default` is always present.
    public var alternatives: [String: ScreenVariant]
    /// How users without an explicit alternative are split; nil sends everyone the default.
    public var experiment: Experiment?
}

/// Every variant of one screen name.
public struct ScreenVariants: Sendable {
    public var name: String
    /// The version ranges: those with a requirement first, the one without (if any) last.
    public var versions: [VariantRange]

    /// The paths the screen serves (every variant declares the same).
    public var pattern: ScreenPattern { versions.first?.alternatives.values.first?.pattern ?? ScreenPattern(name: name) }

    /// Whether the client's version can change the answer.
    public var isVersioned: Bool { versions.contains { $0.requirement != nil } }
    /// Whether an alternative can be asked for.
    public var hasAlternatives: Bool { versions.contains { $0.alternatives.count > 1 } }
    /// Whether an experiment is declared (running or decided).
    public var hasExperiment: Bool { versions.contains { $0.experiment != nil } }
    /// The request headers a running experiment's answer depends on: `X-Taksi-User`, and its
    /// audience's (`X-Taksi-Version`, `X-Taksi-Platform`, `Accept-Language`).
    public var experimentHeaders: [String] {
        let running = versions.compactMap(\.experiment).filter(\.dependsOnUser)
        guard !running.isEmpty else { return [] }
        var headers = ["X-Taksi-User"]
        for header in running.flatMap(\.audienceHeaders) where !headers.contains(header) { headers.append(header) }
        return headers
    }

    /// Every variant, versioned ones first, alternatives by name.
    public var all: [ScreenVariant] {
        versions.flatMap { version in version.alternatives.keys.sorted().compactMap { version.alternatives[$0] } }
    }

    /// What a request says about the variant it wants.
    public struct Request: Sendable, Equatable {
        /// The app's version (`X-Taksi-Version` or `?version=`).
        public var version: Version?
        /// An explicit alternative (`X-Taksi-Alternative`).
        public var alternative: String?
        /// An opaque user id for experiments (`X-Taksi-User`).
        public var user: String?
        /// The app's platform (`X-Taksi-Platform`), for an experiment's audience.
        public var platform: String?
        /// The most preferred language range of `Accept-Language`, for an experiment's audience.
        public var language: String?

        public init(
            version: Version? = nil, alternative: String? = nil, user: String? = nil, platform: String? = nil, language: String? = nil
        ) {
            self.version = version
            self.alternative = alternative
            self.user = user
            self.platform = platform
            self.language = language
        }
    }

    /// A variant chosen for a request, and what its version range's experiment did with it (nil
    /// without an experiment, or when the request forced an alternative).
    public struct Selection: Sendable {
        public var variant: ScreenVariant
        public var experiment: Experiment? = nil
        public var assignment: Experiment.Assignment? = nil

        /// The experiment and alternative the request's user is exposed to, if any.
        public var exposure: (experiment: Experiment, alternative: String)? {
            Self.exposure(experiment: experiment, assignment: assignment)
        }

        /// The experiment and alternative a user is exposed to by `experiment`'s `assignment`, if any.
        public static func exposure(
            experiment: Experiment?, assignment: Experiment.Assignment?
        ) -> (experiment: Experiment, alternative: String)? {
            guard let experiment, case .exposed(let alternative)? = assignment else { return nil }
            return (experiment, alternative)
        }
    }

    /// Why no variant fits a request.
    public enum SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
        case versionNotFound(screen: String, version: Version?, requirements: [String])
        /// A version range without a default alternative, which validation refuses.
        case alternativeNotFound(screen: String, alternative: String, alternatives: [String])

        public var description: String {
            switch self {
            case .versionNotFound(let screen, let version?, let requirements):
                "screen \"\(screen)\" has no variant for app version \(version); it is served to versions \(requirements.joined(separator: "; "))"
            case .versionNotFound(let screen, nil, let requirements):
                "screen \"\(screen)\" is only served to app versions \(requirements.joined(separator: "; ")); send the app's version in X-Taksi-Version (or ?version=)"
            case .alternativeNotFound(let screen, let alternative, let alternatives):
                "screen \"\(screen)\" has no alternative \"\(alternative)\"; its alternatives are \(alternatives.joined(separator: ", "))"
            }
        }
    }

    /// The variant for a request. Deterministic: the version range whose requirement the version
    /// meets, else the one without a requirement; then the alternative asked for, else the
    /// experiment's assignment for the user, else the default. An alternative asked for that the
    /// range lacks gets the default: a QA build forcing `compact` everywhere sees `compact` where a
    /// screen has it and every other screen as usual, never a 404 (``ScreenVariant/variantID``,
    /// sent as `X-Taksi-Variant`, says which it got).
    public func select(_ request: Request) -> Result<ScreenVariant, SelectionError> {
        selection(request).map(\.variant)
    }

    /// The variant for a request (as ``select(_:)``), with the experiment's assignment.
    public func selection(_ request: Request) -> Result<Selection, SelectionError> {
        selection(request) { Selection(variant: $0, experiment: $1, assignment: $2) }
    }

    /// What `pick` takes of the variant for a request (as ``select(_:)``), its version range's
    /// experiment and the experiment's assignment (nil without an experiment, or when the request
    /// forced an alternative): a server that needs only the variant's file takes that, not a copy
    /// of the whole variant. Inlinable, so it is specialized in the server for its `pick`.
    @inlinable
    public func selection<Picked>(
        _ request: Request, _ pick: (ScreenVariant, Experiment?, Experiment.Assignment?) -> Picked
    ) -> Result<Picked, SelectionError> {
        // Searched in place: no array of the versioned ranges is made for a request.
        let matching =
            request.version.flatMap { version in versions.first { $0.requirement?.isSatisfied(by: version) == true } }
            ?? versions.first { $0.requirement == nil }
        guard let group = matching else {
            return .failure(
                .versionNotFound(screen: name, version: request.version, requirements: versions.compactMap { $0.requirement?.description })
            )
        }
        var assignment: Experiment.Assignment?
        if let alternative = request.alternative {
            if let screen = group.alternatives[alternative] { return .success(pick(screen, nil, nil)) }
        } else if let experiment = group.experiment {
            let assigned = experiment.assignment(
                for: .init(user: request.user, version: request.version, platform: request.platform, language: request.language))
            assignment = assigned
            // Validation guarantees a winner and every weighed alternative exist.
            if let screen = group.alternatives[assigned.alternative] { return .success(pick(screen, experiment, assigned)) }
        }
        // Validation guarantees every version range has a default alternative.
        return group.alternatives[ScreenVariant.defaultAlternative].map { .success(pick($0, group.experiment, assignment)) }
            ?? .failure(
                .alternativeNotFound(
                    screen: name, alternative: ScreenVariant.defaultAlternative, alternatives: group.alternatives.keys.sorted()))
    }
}

/// A whole validated screen set: every screen's variants compiled, plus what the app knows
/// (the catalog). Immutable; a reload builds a new one.
public struct ScreenSet: Sendable {
    /// Screens by name.
    public var screens: [String: ScreenVariants]
    /// Every screen's path shape: which screen a path or a navigation target opens.
    public var routes: ScreenRoutes
    /// Deep links to screens (`links.yaml`).
    public var links: DeepLinks
    /// The component types and custom actions the screens were checked against.
    public var catalog: ComponentCatalog
    /// Problems that do not stop the set from being served.
    public var warnings: [Diagnostic]
    /// A digest of the files the set was loaded from (16 hex digits): equal on every replica serving
    /// the same files, new on every edit. Responses carry it so a client can tell sets apart.
    public var version: String
    /// The string tables and locale negotiation, when the set has `strings/`.
    public var localization: Localization? = nil
    /// Which app versions decode what, below whole components.
    public let catalogVersions: CatalogVersions
    /// The app-version ranges with one catalog, oldest first, each with its catalog (one, the
    /// whole catalog, when the catalog says no versions).
    public let epochs: [(versions: VersionSet, catalog: ComponentCatalog)]

    init(
        screens: [String: ScreenVariants], routes: ScreenRoutes, links: DeepLinks, catalog: ComponentCatalog, warnings: [Diagnostic],
        version: String, localization: Localization?, catalogVersions: CatalogVersions
    ) {
        self.screens = screens
        self.routes = routes
        self.links = links
        self.catalog = catalog
        self.warnings = warnings
        self.version = version
        self.localization = localization
        self.catalogVersions = catalogVersions
        self.epochs = Self.epochs(of: catalogVersions, catalog: catalog)
    }

    /// The catalog the app version `version` decodes, and its epoch's index (part of a data
    /// response's memo key). A request with no version gets the oldest epoch's.
    public func catalog(for version: Version?) -> (epoch: Int, catalog: ComponentCatalog) {
        let epoch = epoch(for: version)
        return (epoch, withCatalog(epoch: epoch) { $0 })
    }

    /// The index of the epoch whose catalog the app version `version` decodes (``catalog(for:)``).
    public func epoch(for version: Version?) -> Int {
        guard epochs.count > 1, let version else { return 0 }
        return epochs.firstIndex { $0.versions.contains(version) } ?? 0
    }

    /// `body`'s answer for the catalog of epoch `epoch` (``epoch(for:)``), handed over where it lies:
    /// a data request renders with it, and a copy would retain each of its parts every time.
    public func withCatalog<T, E: Error>(epoch: Int, _ body: (ComponentCatalog) throws(E) -> T) throws(E) -> T {
        epochs.indices.contains(epoch) ? try body(epochs[epoch].catalog) : try body(catalog)
    }

    static func epochs(of versions: CatalogVersions, catalog: ComponentCatalog) -> [(versions: VersionSet, catalog: ComponentCatalog)] {
        guard !versions.isEmpty else { return [(.all, catalog)] }
        return versions.epochs.map { ($0, versions.catalog(catalog, for: $0)) }
    }

    /// The screen names in sorted order.
    public var names: [String] { screens.keys.sorted() }

    /// The variant a request with no version, alternative or user gets, if there is one (by the
    /// screen's name as written: `bikes/stations/{network}`).
    public subscript(name: String) -> ScreenVariant? {
        try? screens[name]?.select(ScreenVariants.Request()).get()
    }
}

extension ScreenSet {
    /// No screens at all: what a replica that serves from the store holds while it waits for a
    /// bundle it can load (nothing published yet, the current one refused here, the store away).
    /// Its `version` is empty; every screen, link and action is answered as not served yet.
    public static let none = ScreenSet(
        screens: [:], routes: ScreenRoutes(), links: DeepLinks(), catalog: ComponentCatalog(), warnings: [], version: "",
        localization: nil, catalogVersions: CatalogVersions())

    /// Whether this is ``none``: a set with no screens (a loaded one always has one).
    public var isNone: Bool { screens.isEmpty }
}

/// The outcome of loading a screen directory: a screen set when there are no errors, and every
/// diagnostic found (all at once, not just the first).
public struct ScreenSetLoad: Sendable {
    public var screenSet: ScreenSet?
    public var diagnostics: [Diagnostic]
    /// The built-in and the directory's valid custom component types, even when screens have errors
    /// (for the editor schema).
    public var catalog = ComponentCatalog()
    /// Which app versions decode what, as far as the catalog could be read.
    public var catalogVersions = CatalogVersions()
    /// What `actions.json` says each custom action is (for generated code's doc comments).
    public var actionSummaries: [String: String] = [:]
}

extension ScreenSetLoad {
    /// One line for the end of a report: `3 screens are valid (1 warning)` or `2 errors, 1 warning`.
    public var summary: String {
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.count - errors
        let warningText = warnings == 1 ? "1 warning" : "\(warnings) warnings"
        if let screenSet, errors == 0 {
            let count = screenSet.screens.count
            let variants = screenSet.screens.values.reduce(0) { $0 + $1.all.count }
            let screens = count == 1 ? "1 screen" : "\(count) screens"
            let variantText = variants > count ? " (\(variants) variants)" : ""
            return "\(screens)\(variantText) \(count == 1 ? "is" : "are") valid" + (warnings > 0 ? ", with \(warningText)" : "")
        }
        return (errors == 1 ? "1 error" : "\(errors) errors") + ", \(warningText); nothing can be served until the errors are fixed"
    }
}
