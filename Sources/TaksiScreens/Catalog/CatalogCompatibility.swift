import TaksiSchema

/// What changed in the catalog between a base (the screens an app build already out was made
/// against) and the working tree, and whether each change can break an app build that is already
/// out (`taksi-server compat`).
///
/// The catalog describes what app builds decode. A build in the field keeps decoding what it was
/// built with, so a change to what the catalog says about its versions is a break: a component,
/// field, enum value or custom action removed, retyped or added for them, a field made required or
/// optional, static or dynamic. New facts are said with `since` and `until`: a change confined to
/// versions at or above a bound the base did not have (a new `since "2.3"`, a new `until`) is the
/// author's statement about builds still to come, so it is compatible, unless `released` says a
/// version that far is already out.
public struct CatalogChange: Sendable, Hashable, CustomStringConvertible {
    /// Whether an app build already out can fail (or lose what it showed) because of it.
    public var isBreaking: Bool
    /// `file:line:column` of the change: the working tree's file, or the base's for a removal.
    public var location: String
    /// `restaurant_component.kind`, `custom action share`.
    public var subject: String
    public var message: String

    public var description: String { "\(location): \(isBreaking ? "breaking" : "compatible"): \(subject): \(message)" }
}

public enum CatalogCompatibility {
    /// The catalog changes from `base` to `head`, breaking ones first, each once.
    /// - Parameters:
    ///   - base, head: the files of each screens directory (paths relative to it), and the name
    ///     each is shown by in locations (`HEAD~1:Screens`, `Screens`).
    ///   - released: the newest app version already out, when known: a change for it or an older
    ///     version is breaking even where a new `since` or `until` says it.
    public static func changes(
        base: (files: [String: [UInt8]], root: String), head: (files: [String: [UInt8]], root: String), released: Version? = nil
    ) -> [CatalogChange] {
        let before = Side(files: base.files, root: base.root)
        let after = Side(files: head.files, root: head.root)
        // Versions the base did not name, which only the working tree's since/until do: changes
        // from the lowest of them on are about builds still to come.
        let baseBounds = Set(before.versions.starts.map(\.version))
        let newBounds = Set(after.versions.starts.map(\.version)).subtracting(baseBounds)
        let unguarded: VersionSet = newBounds.min().map { .below($0) } ?? .all
        let protected = released.map { VersionSet(lower: nil, upper: ($0, true)) } ?? unguarded
        let epochs = CatalogVersions.epochs(starting: before.versions.starts + after.versions.starts)
        var found: [Difference: [Int]] = [:]
        var order: [Difference] = []
        for (index, epoch) in epochs.enumerated() {
            let old = before.versions.catalog(before.catalog, for: epoch)
            let new = after.versions.catalog(after.catalog, for: epoch)
            for difference in Self.differences(old, new) {
                if found[difference] == nil { order.append(difference) }
                found[difference, default: []].append(index)
            }
        }
        let changes = order.map { difference in
            let where_ = found[difference] ?? []
            let breaking = difference.canBreak && where_.contains { !epochs[$0].intersection(protected).isEmpty }
            let everywhere = where_.count == epochs.count
            let range = everywhere ? nil : Self.describe(where_.map { epochs[$0] })
            // Said with a new since or until, and breaking only because --released says that far is out.
            let saidWithBounds = !where_.contains { !epochs[$0].intersection(unguarded).isEmpty }
            if breaking, saidWithBounds, let range, let released {
                var change = difference.change(breaking: false, range: range, before: before, after: after)
                change.isBreaking = true
                change.message +=
                    ", but --released \(released) says apps \(range) may already be out; name a version after \(released) instead"
                return change
            }
            return difference.change(breaking: breaking, range: range, before: before, after: after)
        }
        return changes.filter(\.isBreaking) + changes.filter { !$0.isBreaking }
    }

    /// `since 2.3`, `until 2.1`, `from 2.0 through 2.2` for consecutive epochs (their union).
    static func describe(_ epochs: [VersionSet]) -> String {
        let lower = epochs.first?.intervals.first?.lower
        let upper = epochs.last?.intervals.last?.upper
        switch (lower, upper) {
        case (let lower?, let upper?):
            return "\(lower.inclusive ? "from" : "after") \(lower.version) \(upper.inclusive ? "through" : "before") \(upper.version)"
        case (let lower?, nil): return lower.inclusive ? "since \(lower.version)" : "after \(lower.version)"
        case (nil, let upper?): return upper.inclusive ? "until \(upper.version)" : "before \(upper.version)"
        case (nil, nil): return "in every version"
        }
    }

    // MARK: - One side

    /// A screens directory's catalog, its versions, and where each declaration is.
    struct Side {
        var catalog: ComponentCatalog
        var versions: CatalogVersions
        /// `file:line:column` by declaration: `card`, `card.kind`, `card.kind=fine_dining`, `action share`.
        var locations: [String: String] = [:]
        var root: String

        init(files: [String: [UInt8]], root: String) {
            let load = ScreenSetLoader.load(files: files, root: root)
            catalog = load.catalog
            versions = load.catalogVersions
            self.root = root
            let definitions = DefinitionFiles(files, root: root)
            for relative in files.keys.sorted() where relative.hasPrefix(ScreenSetLoader.componentsFolder + "/") {
                guard let (file, node) = definitions.parse(relative), let name = node["name"]?.stringValue else { continue }
                locations[name] = Self.place(file, node["name"] ?? node)
                if let fields = node["fields"] { index(fields, prefix: name + ".", file: file) }
            }
            for relative in ScreenSetLoader.actionsFiles where files[relative] != nil {
                guard let (file, node) = definitions.parse(relative) else { continue }
                for element in node["custom_actions"]?.elements ?? [] {
                    if let identifier = element["identifier"]?.stringValue { locations["action " + identifier] = Self.place(file, element) }
                }
            }
        }

        private mutating func index(_ fields: JSONNode, prefix: String, file: SourceFile) {
            for field in fields.elements ?? [] {
                guard let name = field["name"]?.stringValue else { continue }
                let key = prefix + name
                locations[key] = Self.place(file, field)
                for value in field["values"]?.elements ?? [] {
                    if let text = value.stringValue ?? value["value"]?.stringValue { locations[key + "=" + text] = Self.place(file, value) }
                }
                if let nested = field["fields"] { index(nested, prefix: key + ".", file: file) }
            }
        }

        static func place(_ file: SourceFile, _ node: JSONNode) -> String {
            "\(file.path):\(file.location(ofOffset: node.offset))"
        }

        /// Where a declaration is, or its component's file, or the directory.
        func place(_ key: String) -> String {
            var key = key
            while true {
                if let found = locations[key] { return found }
                guard let cut = key.lastIndex(where: { $0 == "." || $0 == "=" }) else { return root }
                key = String(key[..<cut])
            }
        }
    }

    // MARK: - Differences

    /// One difference between two catalogs of the same versions.
    enum Difference: Hashable {
        case componentRemoved(String)
        case componentAdded(String)
        case fieldRemoved(component: String, path: String)
        case fieldAdded(component: String, path: String, required: Bool)
        case fieldRetyped(component: String, path: String, from: String, to: String)
        case requiredChanged(component: String, path: String, nowRequired: Bool)
        case dynamicChanged(component: String, path: String, nowDynamic: Bool)
        case enumValueRemoved(component: String, path: String, value: String)
        case enumValueAdded(component: String, path: String, value: String)
        case actionRemoved(String)
        case actionAdded(String)

        /// A field added is ignored by the apps that do not know it (and sent to them if
        /// required): no build already out can fail on it.
        var canBreak: Bool {
            if case .fieldAdded = self { return false }
            return true
        }

        func change(breaking: Bool, range: String?, before: Side, after: Side) -> CatalogChange {
            let scope = range.map { " (for apps \($0))" } ?? ""
            let out = range.map { "apps \($0) already out" } ?? "apps already out"
            switch self {
            case .componentRemoved(let name):
                return CatalogChange(
                    isBreaking: breaking, location: before.place(name), subject: name,
                    message: breaking
                        ? "component removed\(scope), but \(out) decode it; to stop using it in new builds, keep it with \"until\": \"<the last version that decodes it>\" (if you renamed it, give the new name \"since\" too: apps already out do not know it)"
                        : "component removed\(scope)")
            case .componentAdded(let name):
                return CatalogChange(
                    isBreaking: breaking, location: after.place(name), subject: name,
                    message: breaking
                        ? "component added\(scope), so screens may send it to \(out), which do not know it and fail; give it \"since\": \"<the first version that decodes it>\""
                        : "component added\(scope)")
            case .fieldRemoved(let component, let path):
                return CatalogChange(
                    isBreaking: breaking, location: before.place("\(component).\(path)"), subject: "\(component).\(path)",
                    message: breaking
                        ? "field removed\(scope), but \(out) decode it (and fail without it where it is required); keep it with \"until\": \"<the last version that decodes it>\""
                        : "field removed\(scope)")
            case .fieldAdded(let component, let path, let required):
                return CatalogChange(
                    isBreaking: breaking, location: after.place("\(component).\(path)"), subject: "\(component).\(path)",
                    message: "\(required ? "required " : "")field added\(scope) (apps that do not know it ignore it)")
            case .fieldRetyped(let component, let path, let from, let to):
                return CatalogChange(
                    isBreaking: breaking, location: after.place("\(component).\(path)"), subject: "\(component).\(path)",
                    message: breaking
                        ? "type changed from \(from) to \(to)\(scope), but \(out) decode \(from) and fail on anything else; add a new field with \"since\", and give this one \"until\""
                        : "type changed from \(from) to \(to)\(scope)")
            case .requiredChanged(let component, let path, let nowRequired):
                let message =
                    nowRequired
                    ? (breaking
                        ? "now required\(scope), but \(out) were built with it optional; use \"required_since\": \"<the first version that requires it>\""
                        : "now required\(scope)")
                    : (breaking
                        ? "no longer required\(scope), so screens may leave it out, and \(out) fail without it; keep it required for them"
                        : "no longer required\(scope)")
                return CatalogChange(
                    isBreaking: breaking, location: after.place("\(component).\(path)"), subject: "\(component).\(path)", message: message)
            case .dynamicChanged(let component, let path, let nowDynamic):
                return CatalogChange(
                    isBreaking: breaking, location: after.place("\(component).\(path)"), subject: "\(component).\(path)",
                    message: "now \(nowDynamic ? "dynamic" : "static")\(scope)"
                        + (breaking
                            ? ", but \(out) read it as \(nowDynamic ? "static: data never updates it there" : "dynamic: their data entries decode it"); add a new field with \"since\" instead"
                            : ""))
            case .enumValueRemoved(let component, let path, let value):
                return CatalogChange(
                    isBreaking: breaking, location: before.place("\(component).\(path)=\(value)"), subject: "\(component).\(path)",
                    message: breaking
                        ? "enum value \"\(value)\" removed\(scope), but \(out) decode it; to stop sending it to new builds only, keep it with \"until\": \"<the last version that decodes it>\""
                        : "enum value \"\(value)\" removed\(scope)")
            case .enumValueAdded(let component, let path, let value):
                return CatalogChange(
                    isBreaking: breaking, location: after.place("\(component).\(path)=\(value)"), subject: "\(component).\(path)",
                    message: breaking
                        ? "enum value \"\(value)\" added\(scope), so it may be sent to \(out), which fail on a value they do not know; give it \"since\": \"<the first version that decodes it>\""
                        : "enum value \"\(value)\" added\(scope)")
            case .actionRemoved(let identifier):
                return CatalogChange(
                    isBreaking: breaking, location: before.place("action " + identifier), subject: "custom action \(identifier)",
                    message: breaking
                        ? "removed\(scope), but \(out) decode it; keep it with \"until\": \"<the last version that decodes it>\""
                        : "removed\(scope)")
            case .actionAdded(let identifier):
                return CatalogChange(
                    isBreaking: breaking, location: after.place("action " + identifier), subject: "custom action \(identifier)",
                    message: breaking
                        ? "added\(scope), so screens may send it to \(out), which fail on an action they do not know; give it \"since\": \"<the first version that decodes it>\""
                        : "added\(scope)")
            }
        }
    }

    /// What differs between two catalogs of the same app versions, custom components and actions only.
    static func differences(_ old: ComponentCatalog, _ new: ComponentCatalog) -> [Difference] {
        let builtIns = Set(ComponentSchema.builtIns.map(\.name))
        let oldNames = Set(old.schemas.keys).subtracting(builtIns)
        let newNames = Set(new.schemas.keys).subtracting(builtIns)
        var found: [Difference] = []
        for name in oldNames.subtracting(newNames).sorted() { found.append(.componentRemoved(name)) }
        for name in newNames.subtracting(oldNames).sorted() { found.append(.componentAdded(name)) }
        for name in oldNames.intersection(newNames).sorted() {
            guard let before = old.schema(named: name), let after = new.schema(named: name) else { continue }
            found += fieldDifferences(before.fields, after.fields, component: name, prefix: "")
        }
        for identifier in old.customActions.subtracting(new.customActions).sorted() { found.append(.actionRemoved(identifier)) }
        for identifier in new.customActions.subtracting(old.customActions).sorted() { found.append(.actionAdded(identifier)) }
        return found
    }

    private static func fieldDifferences(_ old: [FieldSchema], _ new: [FieldSchema], component: String, prefix: String) -> [Difference] {
        var found: [Difference] = []
        for field in old where !new.contains(where: { $0.name == field.name }) {
            found.append(.fieldRemoved(component: component, path: prefix + field.name))
        }
        for field in new {
            let path = prefix + field.name
            guard let before = old.first(where: { $0.name == field.name }) else {
                found.append(.fieldAdded(component: component, path: path, required: field.isRequired))
                continue
            }
            if before.isRequired != field.isRequired {
                found.append(.requiredChanged(component: component, path: path, nowRequired: field.isRequired))
            }
            if before.isDynamic != field.isDynamic {
                found.append(.dynamicChanged(component: component, path: path, nowDynamic: field.isDynamic))
            }
            found += typeDifferences(before.type, field.type, component: component, path: path)
        }
        return found
    }

    private static func typeDifferences(_ old: FieldType, _ new: FieldType, component: String, path: String) -> [Difference] {
        switch (old, new) {
        case (.enumeration(let before), .enumeration(let after)):
            return before.filter { !after.contains($0) }.map { .enumValueRemoved(component: component, path: path, value: $0) }
                + after.filter { !before.contains($0) }.map { .enumValueAdded(component: component, path: path, value: $0) }
        case (.object(let before?), .object(let after?)):
            return fieldDifferences(before, after, component: component, prefix: path + ".")
        case (.array(let before?), .array(let after?)):
            return typeDifferences(before, after, component: component, path: path + "[]")
        default:
            return old.name == new.name && (old == new || !Self.isStructured(old))
                ? [] : [.fieldRetyped(component: component, path: path, from: Self.describe(old), to: Self.describe(new))]
        }
    }

    private static func isStructured(_ type: FieldType) -> Bool {
        switch type {
        case .object, .array, .enumeration: true
        default: false
        }
    }

    private static func describe(_ type: FieldType) -> String {
        switch type {
        case .array(let items?): "array of \(describe(items))"
        case .object(let fields?): "object {\(fields.map(\.name).joined(separator: ", "))}"
        default: type.name
        }
    }
}
