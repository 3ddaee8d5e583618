import TaksiSchema

/// Expands fragments: every `{$fragment: name, with: {...}}` in a screen's components is replaced
/// by a copy of the fragment with its parameters filled in, before the components are compiled, so
/// a use is checked like components written in place. The copies' offsets remember their fragment
/// (see ``DefinitionReader/relocated(_:fragment:file:paths:use:)``), so a problem inside one is
/// reported at the use, with the chain. A sub-compiler of ``ScreenCompiler``: it takes what it reads
/// and returns what it made (``Expansion``), reporting into the screen's reader (which learns where
/// the copies come from).
struct FragmentExpander {
    /// A screen's components with every fragment use expanded.
    struct Expansion {
        var components: [JSONNode]
        /// The screen's sources the uses' data arguments read.
        var sourcesUsed: Set<String>
    }

    /// The screen's reader, for the length of one ``expand(_:root:reporting:)``.
    private var reader: DefinitionReader
    /// The screen's name, for messages.
    private let screenName: String
    private let fragments: [String: Fragment]
    private let catalog: ComponentCatalog
    /// The screen's sources, which data arguments may read; records what they read.
    private var sources: SourceTable
    /// Bytes of JSON the expansion has produced so far (see ``ScreenSetLoader/maximumExpandedBytes``).
    private var expandedBytes = 0
    /// Fragment uses met so far, expanded or refused (see ``ScreenSetLoader/maximumFragmentUses``).
    private var uses = 0
    /// The expansion passed a limit (reported once, at the use that passed it): it stops there.
    private var stopped = false

    /// One use of a fragment being expanded.
    struct FragmentUse {
        var fragment: Fragment
        var arguments: [String: Argument]
        /// The fragments this use is inside, outermost first, then its own.
        var chain: [String]

        enum Argument {
            /// A binding path of the using screen (already in its terms) that replaces the
            /// parameter's name at the root of the fragment's bindings.
            case data(String)
            /// A value (a literal or a binding of the using screen) placed by `{$param: name}`,
            /// and its size in bytes of JSON, counted again at each place it goes.
            case value(JSONNode, bytes: Int)
        }
    }

    /// Whether `node` uses a fragment (or places a parameter, which only a fragment may) anywhere.
    static func usesFragments(_ node: JSONNode) -> Bool {
        switch node.kind {
        case .object(let members):
            members.contains { $0.key == Fragment.useKey || $0.key == Fragment.parameterKey || usesFragments($0.value) }
        case .array(let elements): elements.contains(where: usesFragments)
        default: false
        }
    }

    /// Expands the fragment uses in `components` (of the screen file `root`, named `screenName`,
    /// whose data arguments may read `sources`).
    static func expand(
        _ components: [JSONNode], root: JSONNode, screenName: String, fragments: [String: Fragment], catalog: ComponentCatalog,
        sources: SourceTable, reporting reader: inout DefinitionReader
    ) -> Expansion {
        var expander = FragmentExpander(reader: reader, screenName: screenName, fragments: fragments, catalog: catalog, sources: sources)
        expander.reader.trackPaths(of: root)
        let expanded = expander.expandList(components, in: nil)
        reader = expander.reader
        return Expansion(components: expanded, sourcesUsed: expander.sources.used)
    }

    private init(
        reader: DefinitionReader, screenName: String, fragments: [String: Fragment], catalog: ComponentCatalog,
        sources: SourceTable
    ) {
        self.reader = reader
        self.screenName = screenName
        self.fragments = fragments
        self.catalog = catalog
        self.sources = sources
    }

    /// Counts `bytes` more of expanded JSON; past ``ScreenSetLoader/maximumExpandedBytes`` it reports
    /// the use at `node` (with its chain of fragments) once, and says no.
    private mutating func grow(by bytes: Int, at node: JSONNode, in use: FragmentUse?) -> Bool {
        guard !stopped else { return false }
        expandedBytes += bytes
        guard expandedBytes > ScreenSetLoader.maximumExpandedBytes else { return true }
        stopExpansion(
            at: node, in: use, "passes \(ScreenSetLoader.maximumExpandedBytes) bytes of JSON here",
            fix: "move repeated content to data (a collection)"
        )
        return false
    }

    /// Reports the use that passed a limit of the expansion, with its chain of fragments, and
    /// stops the expansion there (nothing more is reported about it).
    private mutating func stopExpansion(at node: JSONNode, in use: FragmentUse?, _ problem: String, fix: String) {
        stopped = true
        reader.report(
            .fragmentTooLarge, at: node, path: .root,
            "with its fragments expanded, screen \(screenName) \(problem)"
                + (use.map { ", inside \($0.chain.joined(separator: " → "))" } ?? "")
                + "; a fragment used several times inside another that is used several times multiplies: use fewer, or \(fix)"
        )
    }

    /// A value's size in bytes of JSON, its children included.
    private static func bytes(of node: JSONNode) -> Int {
        switch node.kind {
        case .array(let elements): elements.reduce(ownBytes(of: node)) { $0 + bytes(of: $1) }
        case .object(let members): members.reduce(ownBytes(of: node)) { $0 + bytes(of: $1.value) }
        default: ownBytes(of: node)
        }
    }

    /// What a value adds to the expanded JSON, without its children: its own text and punctuation.
    private static func ownBytes(of node: JSONNode) -> Int {
        switch node.kind {
        case .null, .bool: 5
        case .number: 8
        case .string(let text): text.utf8.count + 2
        case .array(let elements): 2 + elements.count
        case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + 4 }
        }
    }

    /// A components list with the uses of component fragments replaced by their components.
    /// - Parameter use: the fragment whose file the list is in; nil for the screen's own.
    private mutating func expandList(_ elements: [JSONNode], in use: FragmentUse?) -> [JSONNode] {
        var expanded: [JSONNode] = []
        for element in elements {
            guard !stopped else { break }
            guard element[Fragment.useKey] != nil else {
                if let component = expand(element, in: use, scope: []) { expanded.append(component) }
                continue
            }
            guard let (inner, body) = beginUse(element, in: use, scope: [], expecting: .components) else { continue }
            guard grow(by: 2, at: element[Fragment.useKey] ?? element, in: inner) else { break }
            let added = expandList(body.elements ?? [], in: inner)
            if expanded.count + added.count > ScreenSetLoader.maximumExpandedComponents, !stopped {
                stopExpansion(
                    at: element[Fragment.useKey] ?? element, in: use,
                    "has more than \(ScreenSetLoader.maximumExpandedComponents) components from here",
                    fix: "show repeated items in a collection"
                )
            }
            expanded += added
        }
        return expanded
    }

    /// A value with its fragment uses expanded and, inside a fragment, its parameters filled in;
    /// nil (reported) when something in it cannot be.
    private mutating func expand(_ node: JSONNode, in use: FragmentUse?, scope: Set<String>) -> JSONNode? {
        var node = node
        // Uses and placed parameters count themselves (their body, their value) below.
        if node[Fragment.useKey] == nil, node[Fragment.parameterKey] == nil {
            guard grow(by: Self.ownBytes(of: node), at: node, in: use) else { return nil }
        }
        switch node.kind {
        case .array(let elements):
            var expanded: [JSONNode] = []
            for element in elements {
                guard let element = expand(element, in: use, scope: scope) else { return nil }
                expanded.append(element)
            }
            node.kind = .array(expanded)
            return node
        case .object(var members):
            switch members.first(where: { $0.key.hasPrefix("$") })?.key {
            case Fragment.useKey?:
                guard let (inner, body) = beginUse(node, in: use, scope: scope, expecting: .content) else { return nil }
                return expand(body, in: inner, scope: [])
            case Fragment.parameterKey?:
                return placeParameter(node, in: use)
            case let key? where use != nil && ["$bind", "$each", "$template"].contains(key):
                // A binding path's root is a data parameter (or a loop variable of the fragment).
                guard let index = members.firstIndex(where: { $0.key == key }) else { break }
                guard let text = members[index].value.stringValue else { break }
                let rewritten =
                    key == "$template"
                    ? rewriteTemplate(text, node: members[index].value, in: use!, scope: scope)
                    : rewritePath(text, node: members[index].value, in: use!, scope: scope)
                guard let rewritten else { return nil }
                members[index].value.kind = .string(rewritten)
            case ScreenCompiler.textKey? where use != nil:
                // A message's placeholders are binding paths too (numbers stay as they are).
                guard let index = members.firstIndex(where: { $0.key == Fragment.argumentsKey }),
                    case .object(var arguments) = members[index].value.kind
                else { break }
                for position in arguments.indices {
                    guard let text = arguments[position].value.stringValue else { continue }
                    guard let rewritten = rewritePath(text, node: arguments[position].value, in: use!, scope: scope) else { return nil }
                    arguments[position].value.kind = .string(rewritten)
                }
                members[index].value.kind = .object(arguments)
            default:
                break
            }
            // An $each's template sees its loop variable.
            let variable = node["$each"] != nil ? (node["as"]?.stringValue ?? "item") : nil
            for index in members.indices {
                let inner = members[index].key == "template" && variable != nil ? scope.union([variable!]) : scope
                guard let value = expand(members[index].value, in: use, scope: inner) else { return nil }
                members[index].value = value
            }
            node.kind = .object(members)
            return node
        default:
            return node
        }
    }

    /// Checks a use, reads its arguments in the terms of the screen, and copies the fragment in.
    /// - Returns: the use and the fragment's body (its components array or its content).
    private mutating func beginUse(
        _ node: JSONNode, in outer: FragmentUse?, scope: Set<String>, expecting kind: Fragment.Kind
    ) -> (FragmentUse, JSONNode)? {
        guard !stopped else { return nil }
        // Counted whether or not it can be expanded: a use refused everywhere it is copied to
        // would otherwise cost nothing while its copies multiply.
        uses += 1
        guard uses <= ScreenSetLoader.maximumFragmentUses else {
            stopExpansion(
                at: node[Fragment.useKey] ?? node, in: outer, "uses fragments more than \(ScreenSetLoader.maximumFragmentUses) times",
                fix: "show repeated items in a collection")
            return nil
        }
        guard
            let members = reader.object(
                node, at: .root, what: "a fragment use", allowed: [Fragment.useKey, Fragment.argumentsKey], required: [Fragment.useKey]),
            let nameNode = members.first(where: { $0.key == Fragment.useKey })?.value,
            let name = reader.string(nameNode, at: .root, what: "a fragment's name")
        else { return nil }
        guard let (fragment, chain) = lookUpFragment(name, at: nameNode, expecting: kind, in: outer) else { return nil }
        let argumentsNode = members.first(where: { $0.key == Fragment.argumentsKey })?.value
        guard let read = readArguments(argumentsNode, of: fragment, in: outer, scope: scope) else { return nil }
        var (arguments, valid) = (read.arguments, read.valid)
        let copy = reader.relocated(fragment.root, fragment: name, file: fragment.file, paths: fragment.paths, use: nameNode)
        for parameter in fragment.parameters where !read.given.contains(parameter.name) {
            let parameterPath = JSONPath.root.appending("parameters").appending(parameter.name)
            if parameter.defaultValue != nil, let defaultNode = copy.closestNode(at: parameterPath)["default"] {
                arguments[parameter.name] = .value(defaultNode, bytes: Self.bytes(of: defaultNode))
                continue
            }
            valid = false
            reader.report(
                .missingKey, at: node, path: .root,
                "fragment \(name) needs parameter \"\(parameter.name)\" (\(parameter.expectation)); add it under with"
            )
        }
        guard valid else { return nil }
        return (FragmentUse(fragment: fragment, arguments: arguments, chain: chain), copy.closestNode(at: fragment.bodyPath))
    }

    /// The fragment a use names, if it is of the kind the place takes and not nested in itself
    /// (or too deep); with the chain of uses that leads to it.
    private mutating func lookUpFragment(
        _ name: String, at nameNode: JSONNode, expecting kind: Fragment.Kind, in outer: FragmentUse?
    ) -> (Fragment, chain: [String])? {
        guard let fragment = fragments[name] else {
            let names = fragments.keys.sorted()
            reader.report(
                .unknownFragment, at: nameNode, path: .root,
                "fragment \"\(name)\" does not exist; it would be the file \(Fragment.folder)/\(name).yaml (or .json)"
                    + (names.isEmpty ? "" : " (fragments: \(names.joined(separator: ", ")))") + NameSuggestion.hint(for: name, among: names)
            )
            return nil
        }
        reader.noteUse(ofFragment: name)
        switch (kind, fragment.kind) {
        case (.components, .content):
            reader.report(
                .invalidFragment, at: nameNode, path: .root,
                "fragment \(name) is one value (its file has \"content\"); use it where a value goes, like content: {$fragment: \(name)}, not as a component"
            )
            return nil
        case (.content, .components):
            reader.report(
                .invalidFragment, at: nameNode, path: .root,
                "fragment \(name) is a run of components (its file has \"components\"); use it as an element of a components list"
            )
            return nil
        default:
            break
        }
        let chain = (outer?.chain ?? []) + [name]
        if outer?.chain.contains(name) == true {
            reader.report(
                .fragmentCycle, at: nameNode, path: .root,
                "fragment \(name) would contain itself (\(chain.joined(separator: " → "))); a fragment cannot use itself, directly or through others"
            )
            return nil
        }
        guard chain.count <= Fragment.maximumDepth else {
            reader.report(
                .fragmentCycle, at: nameNode, path: .root,
                "fragments are nested more than \(Fragment.maximumDepth) deep (\(chain.joined(separator: " → "))); flatten them")
            // Every other way down the same chain is as deep: the first says it.
            stopped = true
            return nil
        }
        return (fragment, chain)
    }

    /// A use's arguments (`with:`), each read in the terms of the screen: those read, the
    /// parameters given (read or not), and whether all were valid; nil when `with` is not an object.
    private mutating func readArguments(
        _ argumentsNode: JSONNode?, of fragment: Fragment, in outer: FragmentUse?, scope: Set<String>
    ) -> (arguments: [String: FragmentUse.Argument], given: Set<String>, valid: Bool)? {
        let name = fragment.name
        var arguments: [String: FragmentUse.Argument] = [:]
        var given: Set<String> = []
        var valid = true
        if let argumentsNode {
            guard let argumentMembers = argumentsNode.members else {
                reader.report(
                    .wrongType, at: argumentsNode, path: .root, "with must be an object of the fragment's parameters and their values")
                return nil
            }
            for argument in argumentMembers {
                guard let parameter = fragment.parameter(named: argument.key) else {
                    let names = fragment.parameters.map(\.name)
                    reader.report(
                        .invalidFragment, offset: argument.keyOffset, path: .root,
                        "fragment \(name) has no parameter \"\(argument.key)\""
                            + (names.isEmpty ? "; it takes none" : "; its parameters are \(names.joined(separator: ", "))")
                            + NameSuggestion.hint(for: argument.key, among: names)
                    )
                    valid = false
                    continue
                }
                given.insert(parameter.name)
                guard let value = readArgument(argument.value, for: parameter, of: name, in: outer, scope: scope) else {
                    valid = false
                    continue
                }
                arguments[parameter.name] = value
            }
        }
        return (arguments, given, valid)
    }

    /// An argument in the terms of the screen: a data argument's path rewritten through the outer
    /// fragment's parameters (or checked against the screen's sources), a value's fragments expanded.
    private mutating func readArgument(
        _ node: JSONNode, for parameter: Fragment.Parameter, of fragment: String, in outer: FragmentUse?, scope: Set<String>
    ) -> FragmentUse.Argument? {
        switch parameter.kind {
        case .data:
            guard let text = node.stringValue, let valuePath = ValuePath(parsing: text) else {
                reader.report(
                    .invalidFragment, at: node, path: .root,
                    "\"\(parameter.name)\" of fragment \(fragment) is data: give a binding path of this screen, like feed.restaurants or query.name"
                )
                return nil
            }
            if let outer { return rewritePath(text, node: node, in: outer, scope: scope).map(FragmentUse.Argument.data) }
            guard sources.check(valuePath, node: node, at: .root, scope: scope, reader: &reader) else { return nil }
            return .data(text)
        case .value(let type):
            // Counted where it is placed, as many times as it is placed.
            let before = expandedBytes
            guard let value = expand(node, in: outer, scope: scope) else { return nil }
            let bytes = expandedBytes - before
            expandedBytes = before
            // A binding is checked where the fragment places it, against that field.
            if !Self.containsBinding(value) {
                let result = catalog.check(value.value, as: type, mode: .definition)
                if !result.isValid {
                    for violation in result.violations {
                        reader.report(
                            .invalidFragment, at: value.closestNode(at: violation.path), path: .root,
                            "\"\(parameter.name)\" of fragment \(fragment) is \(parameter.expectation): \(violation.message)"
                        )
                    }
                    return nil
                }
            }
            return .value(value, bytes: bytes)
        }
    }

    /// `{$param: name}`: the argument, placed as it is.
    private mutating func placeParameter(_ node: JSONNode, in use: FragmentUse?) -> JSONNode? {
        guard let use else {
            reader.report(
                .invalidFragment, at: node, path: .root,
                "$param places a fragment's parameter; it is only used inside a file under \(Fragment.folder)/")
            return nil
        }
        guard let members = reader.object(node, at: .root, what: "a $param", allowed: [Fragment.parameterKey]),
            let nameNode = members.first?.value, let name = reader.string(nameNode, at: .root, what: "$param")
        else { return nil }
        let names = use.fragment.parameters.map(\.name)
        switch use.arguments[name] {
        case .value(let value, let bytes)?:
            return grow(by: bytes, at: nameNode, in: use) ? value : nil
        case .data?:
            reader.report(
                .invalidFragment, at: nameNode, path: .root,
                "\"\(name)\" is a data parameter: read it with a binding, like {$bind: \(name)} or {$template: \"{\(name)}\"}"
            )
            return nil
        case nil:
            // A declared parameter without an argument is already reported at the use.
            if use.fragment.parameter(named: name) == nil {
                reader.report(
                    .invalidFragment, at: nameNode, path: .root,
                    "\"\(name)\" is not a parameter of fragment \(use.fragment.name); declare it under parameters"
                        + (names.isEmpty ? "" : " (declared: \(names.joined(separator: ", ")))")
                        + NameSuggestion.hint(for: name, among: names)
                )
            }
            return nil
        }
    }

    /// A binding path inside a fragment in the terms of the using screen: a data parameter at its
    /// root is replaced by the argument's path; a loop variable of the fragment stays.
    private mutating func rewritePath(_ text: String, node: JSONNode, in use: FragmentUse, scope: Set<String>) -> String? {
        let trimmed = text.trimmingSpaces
        let root = String(trimmed.prefix { $0 != "." && $0 != "[" })
        if scope.contains(root) { return text }
        switch use.arguments[root] {
        case .data(let argument)?:
            return argument + trimmed.dropFirst(root.count)
        case .value?:
            reader.report(
                .invalidFragment, at: node, path: .root,
                "\"\(root)\" is a value parameter, placed whole with {$param: \(root)}; to read it in a binding, declare it {type: data}"
            )
            return nil
        case nil:
            if use.fragment.parameter(named: root) != nil { return nil }  // reported at the use
            let data = use.fragment.parameters.filter(\.isData).map(\.name) + scope.sorted()
            reader.report(
                .unknownSource, at: node, path: .root,
                "fragment \(use.fragment.name) reads \"\(root)\", which is not one of its data parameters; a fragment reads the using screen's values only through parameters: declare \(root): {type: data} and pass it, like with: {\(root): feed}"
                    + (data.isEmpty ? "" : " (readable here: \(data.joined(separator: ", ")))")
                    + NameSuggestion.hint(for: root, among: data)
            )
            return nil
        }
    }

    /// A `$template`'s text with each `{path}` rewritten (see ``rewritePath(_:node:in:scope:)``).
    /// Malformed text is left for the template reader to report.
    private mutating func rewriteTemplate(_ text: String, node: JSONNode, in use: FragmentUse, scope: Set<String>) -> String? {
        guard case .success(let pieces) = TemplateText.pieces(of: text) else { return text }
        var rewritten: [TemplateText.Piece] = []
        for piece in pieces {
            guard case .reference(let reference) = piece else {
                rewritten.append(piece)
                continue
            }
            guard let path = rewritePath(reference, node: node, in: use, scope: scope) else { return nil }
            rewritten.append(.reference(path))
        }
        return TemplateText.text(of: rewritten)
    }

    /// Whether any object under `node` is a binding.
    static func containsBinding(_ node: JSONNode) -> Bool {
        switch node.kind {
        case .object(let members): members.contains { $0.key.hasPrefix("$") || containsBinding($0.value) }
        case .array(let elements): elements.contains(where: containsBinding)
        default: false
        }
    }
}

extension Fragment.Parameter {
    /// What an argument must be, for messages: `data (a binding path)`, `a string`.
    var expectation: String {
        switch kind {
        case .data: "data: a binding path of the using screen"
        case .value(let type): "a value of type \(type.name)"
        }
    }
}
