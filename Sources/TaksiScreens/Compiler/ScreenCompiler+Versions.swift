import TaksiSchema

// What some app version a variant reaches cannot decode. The catalog says when each component
// type, field, enum value and custom action is decoded (`since`, `until`) and from when a field is
// required (`required_since`); a variant reaches the versions its requirement admits (every
// version without one). The client's decoding rules decide what is fatal there: a component type,
// an enum value or a custom action it does not know fails the component (or the item, or the
// screen), and so does a missing required field; a field it does not know is ignored.
//
// Only what is written in the definition is checked here. A value that arrives at run time (an
// upstream's enum value) is checked against the catalog of the requesting app's version, like any
// other value that does not fit (ScreenSet.catalog(for:)).

extension ScreenCompiler {
    /// How a variant reaching `versions` is described in messages: `its version requirement ">= 2.0" admits 2.0`.
    struct Reach {
        var versions: VersionSet
        var requirement: VersionRequirement?

        init(_ requirement: VersionRequirement?) {
            self.requirement = requirement
            versions = requirement?.versions ?? .all
        }

        /// Why `missing` matters here, or nil when the variant reaches none of it.
        func served(_ missing: VersionSet) -> String? {
            guard let older = versions.intersection(missing).example else { return nil }
            return requirement.map { "its version requirement \"\($0)\" admits \(older)" }
                ?? "it has no version requirement, so it is served to every app version (\(older) among them)"
        }
    }

    /// Checks the components of the variant (fragments expanded) against the versions it reaches.
    mutating func checkVersions(_ nodes: [JSONNode], at path: JSONPath) {
        for (index, node) in nodes.enumerated() {
            checkComponentVersions(node, at: path.appending(index))
        }
    }

    private mutating func checkComponentVersions(_ node: JSONNode, at path: JSONPath) {
        guard let nameNode = node["name"], let name = nameNode.stringValue else { return }
        checkComponentType(name, node: nameNode, at: path.appending("name"))
        guard let schema = catalog.schema(named: name), let content = node["content"] else { return }
        checkContentVersions(content, fields: schema.fields, component: name, prefix: "", at: path.appending("content"))
    }

    /// A component type some reached versions do not decode fails the whole screen there.
    private mutating func checkComponentType(_ name: String, node: JSONNode, at path: JSONPath) {
        guard let availability = context.catalogVersions.components[name], let served = reach.served(availability.missing) else { return }
        if availability.isNever {
            reader.report(
                .componentTooNew, at: node, path: path,
                "no app version decodes \(name): the client releases client.yaml names lack it, and the whole screen would fail to decode; use another component, or link a newer client (see docs/versions.md)"
            )
        } else if let since = availability.since, availability.until == nil {
            reader.report(
                .componentTooNew, at: node, path: path,
                "\(name) is only known to apps since \(since), but \(served), and an older app would fail to decode the whole screen; add \"version\": \">= \(since)\" (and a variant without this component for older apps)"
            )
        } else {
            reader.report(
                .componentTooNew, at: node, path: path,
                "\(name) is decoded by apps \(availability) only, but \(served), and there the whole screen would fail to decode; narrow the requirement to \(availability) (and add a variant for the other versions)"
            )
        }
    }

    /// The members of a content (or of an object field's value) against its fields' versions.
    mutating func checkContentVersions(_ node: JSONNode, fields: [FieldSchema], component: String, prefix: String, at path: JSONPath) {
        guard let members = node.members, !members.contains(where: { $0.key.hasPrefix("$") }) else { return }
        for member in members {
            guard let field = fields.first(where: { $0.name == member.key }) else { continue }
            let key = CatalogVersions.FieldKey(component: component, path: prefix + field.name)
            let memberPath = path.appending(member.key)
            if let availability = context.catalogVersions.fields[key], let served = reach.served(availability.missing) {
                reader.report(
                    .ignoredField, offset: member.keyOffset, path: memberPath,
                    "field \"\(key.path)\" of \(component) is decoded by apps \(availability) only, but \(served): apps there ignore it, so their users will not see it; raise the requirement, or add a variant for those versions",
                    severity: .warning
                )
            }
            // A field declared once per version range: a literal value must fit each declaration
            // the variant reaches (it was compiled against the newest).
            if let declarations = context.catalogVersions.fieldDeclarations[key], Self.firstBinding(in: member.value, at: memberPath) == nil
            {
                for declaration in declarations {
                    guard let served = reach.served(declaration.availability.versions) else { continue }
                    let result = catalog.check(member.value.value, as: declaration.field.type, mode: .definition)
                    guard let violation = result.violations.first else { continue }
                    reader.report(
                        .notDecoded, at: member.value, path: memberPath,
                        "field \"\(key.path)\" of \(component) is \(declaration.field.type.name.withArticle) for apps \(declaration.availability), and \(served), where this value does not decode (\(violation.message)); raise the requirement, or add a variant for those versions"
                    )
                }
            }
            if case .componentContents(let nameField) = field.type {
                checkItems(member.value, itemType: members.first { $0.key == nameField }, at: memberPath)
            } else {
                checkValueVersions(member.value, type: field.type, key: key, at: memberPath)
            }
        }
        for field in fields where !members.contains(where: { $0.key == field.name }) {
            let key = CatalogVersions.FieldKey(component: component, path: prefix + field.name)
            guard let since = context.catalogVersions.requiredSince[key], let served = reach.served(.from(since)) else { continue }
            reader.report(
                .notDecoded, at: node, path: path,
                "field \"\(key.path)\" of \(component) is required by apps since \(since), but \(served), and there the component fails to decode without it; supply \(field.name)"
            )
        }
    }

    /// A collection's items: each the content of the `component_name` type, in a literal array or
    /// an `$each` template.
    private mutating func checkItems(_ node: JSONNode, itemType nameMember: JSONNode.Member?, at path: JSONPath) {
        guard let nameMember, let itemType = nameMember.value.stringValue, let schema = catalog.schema(named: itemType) else { return }
        checkComponentType(
            itemType, node: nameMember.value, at: JSONPath(segments: Array(path.segments.dropLast())).appending(nameMember.key))
        if let elements = node.elements {
            for (index, element) in elements.enumerated() {
                checkContentVersions(element, fields: schema.fields, component: itemType, prefix: "", at: path.appending(index))
            }
        } else if node["$each"] != nil, let template = node["template"] {
            checkContentVersions(template, fields: schema.fields, component: itemType, prefix: "", at: path.appending("template"))
        }
    }

    private mutating func checkValueVersions(_ node: JSONNode, type: FieldType, key: CatalogVersions.FieldKey, at path: JSONPath) {
        // Each value a $when may give is written here too.
        if let branches = node["$when"]?.elements {
            for (index, branch) in branches.enumerated() {
                if let then = branch["then"] {
                    checkValueVersions(then, type: type, key: key, at: path.appending("$when").appending(index).appending("then"))
                }
            }
            if let otherwise = node["else"] { checkValueVersions(otherwise, type: type, key: key, at: path.appending("else")) }
            return
        }
        switch type {
        case .enumeration:
            // A bound value is checked at run time, against the requesting app's catalog.
            guard let value = node.stringValue, let availability = context.catalogVersions.enumValues[key]?[value],
                let served = reach.served(availability.missing)
            else { return }
            reader.report(
                .notDecoded, at: node, path: path,
                "\"\(value)\" of \(key.component).\(key.path) is decoded by apps \(availability) only, but \(served), and there an unknown enum value fails the component; raise the requirement, or add a variant for those versions with another value"
            )
        case .action:
            guard let identifier = node["identifier"]?.stringValue, let availability = context.catalogVersions.actions[identifier],
                let served = reach.served(availability.missing)
            else { return }
            reader.report(
                .notDecoded, at: node["identifier"] ?? node, path: path.appending("identifier"),
                "custom action \(identifier) is decoded by apps \(availability) only, but \(served), and there an unknown action fails the screen; raise the requirement, or add a variant for those versions"
            )
        case .object(let fields?):
            checkContentVersions(node, fields: fields, component: key.component, prefix: key.path + ".", at: path)
        case .array(let items?):
            for (index, element) in (node.elements ?? []).enumerated() {
                checkValueVersions(
                    element, type: items, key: CatalogVersions.FieldKey(component: key.component, path: key.path + "[]"),
                    at: path.appending(index))
            }
        default:
            break
        }
    }
}
