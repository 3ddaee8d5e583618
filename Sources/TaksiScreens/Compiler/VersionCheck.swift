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

/// Checks what a variant writes against the app versions it reaches, and returns what those
/// versions cannot decode (``Finding``) for the compiler to report. Reads only the catalog's
/// versions and the variant's reach; keeps nothing.
struct VersionCheck {
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

    /// One thing some reached version cannot decode, where the file says it.
    struct Finding {
        enum Place {
            /// A node (a missing member is reported on its object).
            case node(JSONNode)
            /// A member's key.
            case key(SourceOffset)
        }

        let code: Diagnostic.Code
        let place: Place
        let path: JSONPath
        let message: String
        let severity: Diagnostic.Severity

        init(_ code: Diagnostic.Code, at node: JSONNode, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error) {
            self.init(code: code, place: .node(node), path: path, message: message, severity: severity)
        }

        init(_ code: Diagnostic.Code, offset: SourceOffset, path: JSONPath, _ message: String, severity: Diagnostic.Severity = .error) {
            self.init(code: code, place: .key(offset), path: path, message: message, severity: severity)
        }

        private init(code: Diagnostic.Code, place: Place, path: JSONPath, message: String, severity: Diagnostic.Severity) {
            self.code = code
            self.place = place
            self.path = path
            self.message = message
            self.severity = severity
        }
    }

    /// When each type, field, enum value and custom action is decoded.
    let versions: CatalogVersions
    /// The versions the variant reaches.
    let reach: Reach
    /// The catalog the variant was compiled against (the newest declaration it reaches).
    let catalog: ComponentCatalog

    /// What the components of the variant (fragments expanded) do not decode in the versions it reaches.
    func findings(in nodes: [JSONNode], at path: JSONPath) -> [Finding] {
        var findings: [Finding] = []
        for (index, node) in nodes.enumerated() {
            checkComponent(node, at: path.appending(index), into: &findings)
        }
        return findings
    }

    /// What the versions it reaches do not decode of a content (or of an object field's value).
    func findings(inContent node: JSONNode, fields: [FieldSchema], component: String, at path: JSONPath) -> [Finding] {
        var findings: [Finding] = []
        checkContent(node, fields: fields, component: component, prefix: "", at: path, into: &findings)
        return findings
    }

    private func checkComponent(_ node: JSONNode, at path: JSONPath, into findings: inout [Finding]) {
        guard let nameNode = node["name"], let name = nameNode.stringValue else { return }
        checkComponentType(name, node: nameNode, at: path.appending("name"), into: &findings)
        guard let schema = catalog.schema(named: name), let content = node["content"] else { return }
        checkContent(content, fields: schema.fields, component: name, prefix: "", at: path.appending("content"), into: &findings)
    }

    /// A component type some reached versions do not decode fails the whole screen there.
    private func checkComponentType(_ name: String, node: JSONNode, at path: JSONPath, into findings: inout [Finding]) {
        guard let availability = versions.components[name], let served = reach.served(availability.missing) else { return }
        if availability.isNever {
            findings.append(
                Finding(
                    .componentTooNew, at: node, path: path,
                    "no app version decodes \(name): the client releases client.yaml names lack it, and the whole screen would fail to decode; use another component, or link a newer client (see docs/versions.md)"
                ))
        } else if let since = availability.since, availability.until == nil {
            findings.append(
                Finding(
                    .componentTooNew, at: node, path: path,
                    "\(name) is only known to apps since \(since), but \(served), and an older app would fail to decode the whole screen; add \"version\": \">= \(since)\" (and a variant without this component for older apps)"
                ))
        } else {
            findings.append(
                Finding(
                    .componentTooNew, at: node, path: path,
                    "\(name) is decoded by apps \(availability) only, but \(served), and there the whole screen would fail to decode; narrow the requirement to \(availability) (and add a variant for the other versions)"
                ))
        }
    }

    /// The members of a content (or of an object field's value) against its fields' versions.
    private func checkContent(
        _ node: JSONNode, fields: [FieldSchema], component: String, prefix: String, at path: JSONPath, into findings: inout [Finding]
    ) {
        guard let members = node.members, !members.contains(where: { $0.key.hasPrefix("$") }) else { return }
        for member in members {
            guard let field = fields.first(where: { $0.name == member.key }) else { continue }
            let key = CatalogVersions.FieldKey(component: component, path: prefix + field.name)
            let memberPath = path.appending(member.key)
            if let availability = versions.fields[key], let served = reach.served(availability.missing) {
                findings.append(
                    Finding(
                        .ignoredField, offset: member.keyOffset, path: memberPath,
                        "field \"\(key.path)\" of \(component) is decoded by apps \(availability) only, but \(served): apps there ignore it, so their users will not see it; raise the requirement, or add a variant for those versions",
                        severity: .warning
                    ))
            }
            // A field declared once per version range: a literal value must fit each declaration
            // the variant reaches (it was compiled against the newest).
            if let declarations = versions.fieldDeclarations[key], ScreenCompiler.firstBinding(in: member.value, at: memberPath) == nil {
                for declaration in declarations {
                    guard let served = reach.served(declaration.availability.versions) else { continue }
                    let result = catalog.check(member.value.value, as: declaration.field.type, mode: .definition)
                    guard let violation = result.violations.first else { continue }
                    findings.append(
                        Finding(
                            .notDecoded, at: member.value, path: memberPath,
                            "field \"\(key.path)\" of \(component) is \(declaration.field.type.name.withArticle) for apps \(declaration.availability), and \(served), where this value does not decode (\(violation.message)); raise the requirement, or add a variant for those versions"
                        ))
                }
            }
            if case .componentContents(let nameField) = field.type {
                checkItems(member.value, itemType: members.first { $0.key == nameField }, at: memberPath, into: &findings)
            } else {
                checkValue(member.value, type: field.type, key: key, at: memberPath, into: &findings)
            }
        }
        for field in fields where !members.contains(where: { $0.key == field.name }) {
            let key = CatalogVersions.FieldKey(component: component, path: prefix + field.name)
            guard let since = versions.requiredSince[key], let served = reach.served(.from(since)) else { continue }
            findings.append(
                Finding(
                    .notDecoded, at: node, path: path,
                    "field \"\(key.path)\" of \(component) is required by apps since \(since), but \(served), and there the component fails to decode without it; supply \(field.name)"
                ))
        }
    }

    /// A collection's items: each the content of the `component_name` type, in a literal array or
    /// an `$each` template.
    private func checkItems(_ node: JSONNode, itemType nameMember: JSONNode.Member?, at path: JSONPath, into findings: inout [Finding]) {
        guard let nameMember, let itemType = nameMember.value.stringValue, let schema = catalog.schema(named: itemType) else { return }
        checkComponentType(
            itemType, node: nameMember.value, at: JSONPath(segments: Array(path.segments.dropLast())).appending(nameMember.key),
            into: &findings)
        if let elements = node.elements {
            for (index, element) in elements.enumerated() {
                checkContent(element, fields: schema.fields, component: itemType, prefix: "", at: path.appending(index), into: &findings)
            }
        } else if node["$each"] != nil, let template = node["template"] {
            checkContent(template, fields: schema.fields, component: itemType, prefix: "", at: path.appending("template"), into: &findings)
        }
    }

    private func checkValue(
        _ node: JSONNode, type: FieldType, key: CatalogVersions.FieldKey, at path: JSONPath, into findings: inout [Finding]
    ) {
        // Each value a $when may give is written here too.
        if let branches = node["$when"]?.elements {
            for (index, branch) in branches.enumerated() {
                if let then = branch["then"] {
                    checkValue(then, type: type, key: key, at: path.appending("$when").appending(index).appending("then"), into: &findings)
                }
            }
            if let otherwise = node["else"] { checkValue(otherwise, type: type, key: key, at: path.appending("else"), into: &findings) }
            return
        }
        switch type {
        case .enumeration:
            // A bound value is checked at run time, against the requesting app's catalog.
            guard let value = node.stringValue, let availability = versions.enumValues[key]?[value],
                let served = reach.served(availability.missing)
            else { return }
            findings.append(
                Finding(
                    .notDecoded, at: node, path: path,
                    "\"\(value)\" of \(key.component).\(key.path) is decoded by apps \(availability) only, but \(served), and there an unknown enum value fails the component; raise the requirement, or add a variant for those versions with another value"
                ))
        case .action:
            guard let identifier = node["identifier"]?.stringValue, let availability = versions.actions[identifier],
                let served = reach.served(availability.missing)
            else { return }
            findings.append(
                Finding(
                    .notDecoded, at: node["identifier"] ?? node, path: path.appending("identifier"),
                    "custom action \(identifier) is decoded by apps \(availability) only, but \(served), and there an unknown action fails the screen; raise the requirement, or add a variant for those versions"
                ))
        case .object(let fields?):
            checkContent(node, fields: fields, component: key.component, prefix: key.path + ".", at: path, into: &findings)
        case .array(let items?):
            for (index, element) in (node.elements ?? []).enumerated() {
                checkValue(
                    element, type: items, key: CatalogVersions.FieldKey(component: key.component, path: key.path + "[]"),
                    at: path.appending(index), into: &findings)
            }
        default:
            break
        }
    }
}

extension DefinitionReader {
    /// Reports what a ``VersionCheck`` found.
    mutating func report(_ findings: [VersionCheck.Finding]) {
        for finding in findings {
            switch finding.place {
            case .node(let node): report(finding.code, at: node, path: finding.path, finding.message, severity: finding.severity)
            case .key(let offset): report(finding.code, offset: offset, path: finding.path, finding.message, severity: finding.severity)
            }
        }
    }
}
