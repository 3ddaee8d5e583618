import TaksiSchema

/// What each release of the Taksi client decodes of the built-in components and actions, read from
/// the client's own history (github.com/taksi-br/taksi-swift), and which release each app version
/// links (`client.yaml`):
///
/// ```yaml
/// releases:
///   - {app_version: "1.0", client: "1.0.0"}
///   - {app_version: "1.4", client: "3159c19"}
/// ```
///
/// An app version links the release of the last entry at or below it (the first entry's below
/// all of them). Built-in components, fields and actions that a linked release lacks become
/// `since` statements of the catalog, checked like a custom component's.
public enum ClientReleases {
    /// One release of the client, by the name `client.yaml` uses.
    public struct Release: Sendable {
        public var name: String
        /// What it is in the client's history.
        public var description: String
        /// Built-in component types it decodes, and of them the fields it does not.
        public var components: Set<String>
        public var missingFields: Set<String>
        /// Built-in action identifiers it decodes.
        public var actions: Set<String>
    }

    /// The releases, oldest first. Read from the client's sources at each revision:
    /// - `1.0.0`, the tag `v1.0.0` (fa3de26, 2023-07-14): `Sources/Component/Components` holds
    ///   `LabelComponent` (its content is `value` only) and `CollectionComponent`;
    ///   `ActionTypeIdentifier` knows `navigation` only.
    /// - `3159c19` (2025, the revision docs/client.md pins): `ButtonComponent`,
    ///   `TextFieldComponent` and `SpacerComponent` (added in 92f8e5a, 2023-07-17), the label's
    ///   `kind`, and the `executable` action.
    public static let known: [Release] = [
        Release(
            name: "1.0.0", description: "the tag v1.0.0 (fa3de26, 2023-07-14)",
            components: ["label_component", "collection_component"], missingFields: ["label_component.kind"],
            actions: ["navigation"]
        ),
        Release(
            name: "3159c19", description: "the revision docs/client.md pins (3159c19c7a96b5ae263c4df90fa4c91ef91dab41)",
            components: Set(ComponentSchema.builtIns.map(\.name)), missingFields: [], actions: ComponentCatalog.builtInActions
        ),
    ]

    /// The file that says which release each app version links.
    public static let files = ["client.yaml", "client.yml", "client.json"]

    /// Reads `client.yaml` and records, in `versions`, from which app version each built-in
    /// component, field and action is decoded.
    static func read(_ node: JSONNode, file: SourceFile, versions: inout CatalogVersions) -> [Diagnostic] {
        var reader = DefinitionReader(file: file)
        let path = JSONPath.root
        guard let members = reader.object(node, at: path, what: "the client file", allowed: ["releases"], required: ["releases"]),
            let list = members.first(where: { $0.key == "releases" })?.value
        else { return reader.diagnostics }
        let listPath = path.appending("releases")
        guard let elements = list.elements, !elements.isEmpty else {
            reader.report(
                .wrongType, at: list, path: listPath,
                "releases must be a non-empty array of {app_version: \"1.4\", client: \"3159c19\"}, oldest first")
            return reader.diagnostics
        }
        var links: [(version: Version, release: Release)] = []
        for (index, element) in elements.enumerated() {
            let elementPath = listPath.appending(index)
            guard
                let entry = reader.object(
                    element, at: elementPath, what: "a release", allowed: ["app_version", "client"], required: ["app_version", "client"]),
                let versionNode = entry.first(where: { $0.key == "app_version" })?.value,
                let versionText = reader.string(versionNode, at: elementPath.appending("app_version"), what: "app_version"),
                let clientNode = entry.first(where: { $0.key == "client" })?.value,
                let client = reader.string(clientNode, at: elementPath.appending("client"), what: "client")
            else { continue }
            guard let version = Version(versionText) else {
                reader.report(
                    .invalidVersion, at: versionNode, path: elementPath.appending("app_version"),
                    "\"\(versionText)\" is not a version; write the first app version that links this client, like \"1.4\"")
                continue
            }
            guard let release = known.first(where: { $0.name == client }) else {
                reader.report(
                    .invalidName, at: clientNode, path: elementPath.appending("client"),
                    "\"\(client)\" is not a client release taksi-server knows; use one of "
                        + known.map { "\($0.name) (\($0.description))" }.joined(separator: ", ")
                        + NameSuggestion.hint(for: client, among: known.map(\.name)))
                continue
            }
            if let last = links.last, version <= last.version {
                reader.report(
                    .invalidVersion, at: versionNode, path: elementPath.appending("app_version"),
                    "app versions go oldest first: \(version) is not after \(last.version)")
                continue
            }
            links.append((version, release))
        }
        guard !reader.diagnostics.containsErrors, !links.isEmpty else { return reader.diagnostics }
        // From the first app version whose linked release decodes each built-in thing: nothing
        // when the oldest does, never when none does.
        func availability(_ decodes: (Release) -> Bool) -> Availability? {
            guard let first = links.firstIndex(where: { decodes($0.release) }) else { return .never }
            return first == 0 ? nil : Availability(since: links[first].version)
        }
        for schema in ComponentSchema.builtIns {
            versions.components[schema.name] = availability { $0.components.contains(schema.name) }
            for field in schema.fields {
                let key = CatalogVersions.FieldKey(component: schema.name, path: field.name)
                versions.fields[key] = availability { !$0.missingFields.contains(key.component + "." + key.path) }
            }
        }
        for action in ComponentCatalog.builtInActions.sorted() {
            versions.actions[action] = availability { $0.actions.contains(action) }
        }
        return reader.diagnostics
    }
}
