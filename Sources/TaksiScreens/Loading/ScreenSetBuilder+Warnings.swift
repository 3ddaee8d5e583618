import TaksiSchema

/// The warnings a load gives when it is done: what nothing uses.
extension ScreenSetBuilder {
    /// Fragments no screen uses, and messages of the default locale no screen uses.
    func unusedWarnings(_ compilation: Compilation, context: CompileContext) -> [Diagnostic] {
        var warnings: [Diagnostic] = []
        for (name, fragment) in context.fragments.sorted(by: { $0.key < $1.key }) where !compilation.fragmentsUsed.contains(name) {
            warnings.append(
                Diagnostic(
                    severity: .warning, code: .unusedFragment, file: fragment.file.path, location: SourceLocation(line: 1, column: 1),
                    message: "fragment \"\(name)\" is not used by any screen; use it ({$fragment: \(name)}) or remove the file"
                )
            )
        }
        if let localization = context.localization, let table = localization.tables[localization.defaultLocale] {
            // What the compiled screens read, and what any screen (or fragment it uses) names: a
            // component or source that failed compiled nothing, yet its message is not unused.
            var used = compilation.textsUsed
            for file in compilation.expandedFiles { Self.textKeys(in: file.node, into: &used) }
            for (name, fragment) in context.fragments where compilation.fragmentsUsed.contains(name) {
                Self.textKeys(in: fragment.root, into: &used)
            }
            var reader = DefinitionReader(file: table.file)
            for key in table.keys where !used.contains(key) {
                reader.report(
                    .unusedText, offset: table.keyOffsets[key] ?? 0, path: JSONPath.root.appending(key),
                    "message \"\(key)\" is not used by any screen; use it ({$text: \(key)}) or remove it from every locale",
                    severity: .warning
                )
            }
            warnings += reader.diagnostics
        }
        return warnings
    }

    /// The keys of every `{$text: key}` in `node`, as written (compiled or not).
    static func textKeys(in node: JSONNode, into keys: inout Set<String>) {
        switch node.kind {
        case .object(let members):
            for member in members {
                if member.key == "$text", let key = member.value.stringValue { keys.insert(key) }
                textKeys(in: member.value, into: &keys)
            }
        case .array(let elements):
            for element in elements { textKeys(in: element, into: &keys) }
        default:
            break
        }
    }

    /// Warnings for what nothing uses: custom component types no screen uses, and screens no other
    /// screen navigates to unless they are marked `"entry": true` (a screen the app opens itself).
    func reachabilityWarnings(screenFiles: [NamedFile], context: CompileContext, links: [DeepLink]) -> [Diagnostic] {
        let routes = context.routes
        let componentFiles = context.components.files
        let componentLocations = context.components.locations
        var usedTypes: Set<String> = []
        var targets: [String: Set<String>] = [:]
        for screen in screenFiles {
            for (index, component) in (screen.node["components"]?.elements ?? []).enumerated() {
                let path = JSONPath.root.appending("components").appending(index)
                usedTypes.formUnion(ScreenCompiler.componentTypes(in: component, at: path).map(\.0))
            }
            targets[screen.name, default: []].formUnion(Self.navigationTargets(in: screen.node, routes: routes))
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
        for screen in screenFiles where !reached.contains(screen.name) && warned.insert(screen.name).inserted {
            let (name, file, node) = (screen.name, screen.file, screen.node)
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
}
