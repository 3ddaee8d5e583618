public import TaksiSchema

/// Which app versions decode something of the catalog: from `since` (the first version that
/// decodes it) through `until` (the last one), either open.
public struct Availability: Sendable, Hashable, CustomStringConvertible {
    public var since: Version?
    public var until: Version?
    /// No version decodes it (a built-in no client release the app versions link has).
    public var isNever = false

    public init(since: Version? = nil, until: Version? = nil) {
        self.since = since
        self.until = until
    }

    /// Every version.
    public static let always = Availability()

    /// No version.
    public static let never: Availability = {
        var never = Availability()
        never.isNever = true
        return never
    }()

    public var isAlways: Bool { since == nil && until == nil && !isNever }

    /// The versions that decode it.
    public var versions: VersionSet {
        isNever ? VersionSet(intervals: []) : VersionSet(lower: since.map { ($0, true) }, upper: until.map { ($0, true) })
    }

    /// The versions that do not: before `since`, after `until`.
    public var missing: VersionSet {
        if isNever { return .all }
        var missing = VersionSet(intervals: [])
        if let since { missing = missing.union(.below(since)) }
        if let until { missing = missing.union(.above(until)) }
        return missing
    }

    /// `since 2.3`, `until 2.2`, `from 2.0 through 2.2`.
    public var description: String {
        if isNever { return "in no version" }
        return switch (since, until) {
        case (let since?, let until?): "from \(since) through \(until)"
        case (let since?, nil): "since \(since)"
        case (nil, let until?): "until \(until)"
        case (nil, nil): "in every version"
        }
    }
}

/// What the catalog says about app versions below whole components: when each component type,
/// field, enum value and custom action is decoded, and from which version a field is required.
/// Keys of fields are the component type and the field's path in its content (`restaurant_component`,
/// `kind`; `address.city` for a field of an object field).
///
/// The versions these mention cut every app version into **epochs**, ranges in which the catalog
/// is the same; ``catalog(for:)`` is the catalog of the epoch a version falls in, the one its
/// values are checked against at run time.
public struct CatalogVersions: Sendable {
    public struct FieldKey: Sendable, Hashable {
        public var component: String
        public var path: String

        public init(component: String, path: String) {
            self.component = component
            self.path = path
        }
    }

    public var components: [String: Availability] = [:]
    public var fields: [FieldKey: Availability] = [:]
    public var enumValues: [FieldKey: [String: Availability]] = [:]
    public var requiredSince: [FieldKey: Version] = [:]
    public var actions: [String: Availability] = [:]
    /// A component's field declared once per version range, each with its own type: every
    /// declaration with its versions, oldest first. (The schema holds the newest.)
    public var fieldDeclarations: [FieldKey: [(availability: Availability, field: FieldSchema)]] = [:]

    public init() {}

    /// Whether anything below whole components, or any `until`, says a version: when false, every
    /// app version decodes the same catalog (components' `since` aside, checked on their own).
    public var isEmpty: Bool {
        components.values.allSatisfy { $0.until == nil } && fields.isEmpty && enumValues.isEmpty && requiredSince.isEmpty
            && actions.isEmpty && fieldDeclarations.isEmpty
    }

    /// The ranges of app versions with one catalog, oldest first: one (every version) when nothing
    /// says a version.
    public var epochs: [VersionSet] { Self.epochs(starting: starts) }

    /// Where the catalog changes: each `since` (and `required_since`) starts a range at its
    /// version, each `until` just after its version.
    var starts: [(version: Version, inclusive: Bool)] {
        var starts: [(version: Version, inclusive: Bool)] = []
        func add(_ availability: Availability) {
            if let since = availability.since { starts.append((since, true)) }
            if let until = availability.until { starts.append((until, false)) }
        }
        components.values.forEach(add)
        fields.values.forEach(add)
        enumValues.values.forEach { $0.values.forEach(add) }
        actions.values.forEach(add)
        fieldDeclarations.values.forEach { $0.map(\.availability).forEach(add) }
        starts += requiredSince.values.map { ($0, true) }
        return starts
    }

    /// The ranges that `starts` cut every version into, oldest first.
    static func epochs(starting starts: [(version: Version, inclusive: Bool)]) -> [VersionSet] {
        // Sorted, each bound once: (2.3, inclusive) starts at 2.3; (2.2, exclusive) just after 2.2.
        var bounds: [(version: Version, inclusive: Bool)] = []
        for start in starts.sorted(by: { $0.version < $1.version || ($0.version == $1.version && $0.inclusive && !$1.inclusive) }) {
            if let last = bounds.last, last.version == start.version, last.inclusive == start.inclusive { continue }
            bounds.append(start)
        }
        var epochs: [VersionSet] = []
        var lower: (Version, Bool)? = nil
        for bound in bounds {
            let epoch = VersionSet(lower: lower, upper: (bound.version, !bound.inclusive))
            if !epoch.isEmpty { epochs.append(epoch) }
            lower = (bound.version, bound.inclusive)
        }
        epochs.append(VersionSet(lower: lower, upper: nil))
        return epochs
    }

    /// The catalog of `version`, or of the newest versions the catalog describes when nil (what
    /// code generated for an app is written against).
    public func catalog(_ full: ComponentCatalog, forAppVersion version: Version?) -> ComponentCatalog {
        catalog(full, for: version.map(VersionSet.only) ?? epochs.last ?? .all)
    }

    /// The catalog apps of `epoch` decode: components, fields, enum values and custom actions they
    /// know, fields required where they require them.
    public func catalog(_ full: ComponentCatalog, for epoch: VersionSet) -> ComponentCatalog {
        func known(_ availability: Availability?) -> Bool {
            guard let availability else { return true }
            return !availability.versions.intersection(epoch).isEmpty
        }
        var catalog = full
        catalog.customActions = full.customActions.filter { known(actions[$0]) }
        catalog.replaceSchemas { schema in
            guard known(components[schema.name]) else { return nil }
            var schema = schema
            schema.fields = restricted(schema.fields, component: schema.name, prefix: "", epoch: epoch)
            return schema
        }
        return catalog
    }

    private func restricted(_ fields: [FieldSchema], component: String, prefix: String, epoch: VersionSet) -> [FieldSchema] {
        fields.compactMap { field in
            let key = FieldKey(component: component, path: prefix + field.name)
            if let availability = self.fields[key], availability.versions.intersection(epoch).isEmpty { return nil }
            var field = field
            if let declarations = fieldDeclarations[key] {
                // The declaration for these versions, or none (a gap between two ranges).
                guard let declaration = declarations.last(where: { !$0.availability.versions.intersection(epoch).isEmpty }) else {
                    return nil
                }
                field = declaration.field
            }
            if let since = requiredSince[key], !VersionSet.from(since).intersection(epoch).isEmpty { field.isRequired = true }
            field.type = restricted(field.type, key: key, epoch: epoch)
            return field
        }
    }

    /// The catalog a variant reaching `reach` is compiled against: where a field's type differs by
    /// version, the newest declaration reach meets (each other one's is checked on its own).
    public func compileCatalog(_ full: ComponentCatalog, reach: VersionSet) -> ComponentCatalog {
        guard !fieldDeclarations.isEmpty else { return full }
        var catalog = full
        catalog.replaceSchemas { schema in
            var schema = schema
            schema.fields = schema.fields.map { field in
                let key = FieldKey(component: schema.name, path: field.name)
                return fieldDeclarations[key]?.last { !$0.availability.versions.intersection(reach).isEmpty }?.field ?? field
            }
            return schema
        }
        return catalog
    }

    /// Whether some field reach meets has more than one declaration there (then a data entry is
    /// written for each request's version, not from one template).
    public func typeVaries(within reach: VersionSet) -> Bool {
        fieldDeclarations.values.contains { declarations in
            declarations.filter { !$0.availability.versions.intersection(reach).isEmpty }.count > 1
        }
    }

    private func restricted(_ type: FieldType, key: FieldKey, epoch: VersionSet) -> FieldType {
        switch type {
        case .enumeration(let values):
            guard let availability = enumValues[key] else { return type }
            return .enumeration(values.filter { availability[$0].map { !$0.versions.intersection(epoch).isEmpty } ?? true })
        case .object(let fields?):
            return .object(fields: restricted(fields, component: key.component, prefix: key.path + ".", epoch: epoch))
        case .array(let items?):
            return .array(items: restricted(items, key: FieldKey(component: key.component, path: key.path + "[]"), epoch: epoch))
        default:
            return type
        }
    }
}
