import TaksiSchema
import TaksiScreens

/// What a skeleton's data must match to decode: for each dynamic component (the ones the client
/// asks data for), its identifier and type, the type's fields, and for a collection the type and
/// fields of its items. The client drops a whole data payload when one entry names an identifier
/// its skeleton lacks or does not decode as that component's type, so data is only ever answered
/// for the revision of the skeleton the app holds (`X-Taksi-Skeleton`).
///
/// A digest of the files' meaning, not of bytes or of a process: every replica that serves the
/// same files computes the same revision, and an edit that changes only what the data does not
/// depend on (copy, static fields, the order of components) keeps it.
///
/// It covers the screen's actions' inputs too (each action's name, and each input's name, type
/// and rules): a form built from a skeleton sends the fields that skeleton had, so a renamed or
/// retyped input makes a new revision, and a submit from the earlier skeleton is known as one.
struct SkeletonRevision {
    /// One dynamic component as the data sees it, for the digest and for the reload's log.
    struct Entry: Hashable {
        var identifier: String
        /// The component's type, with its collection's item type: `label_component`,
        /// `collection_component of restaurant_component`.
        var type: String
        /// The fields of the type (and of the item type), as the client decodes them.
        var fields: String
    }

    /// The entries in the skeleton's order.
    let entries: [Entry]
    /// Each action's inputs as a submit must send them, by action name: `email:string!{max 254}`.
    let inputs: [String: [String]]
    /// 16 hex digits.
    let digest: String

    init(skeleton: Skeleton, actions: [ScreenAction] = [], catalog: ComponentCatalog) {
        var entries: [Entry] = []
        for component in skeleton.components {
            guard let schema = catalog.schema(named: component.name), schema.isDynamic else { continue }
            var type = component.name
            var fields = Self.describe(schema.fields)
            // A field of other components' contents (a collection's values): their type is part of it.
            for field in schema.fields {
                guard case .componentContents(let nameField) = field.type, let item = component.content[nameField]?.stringValue else {
                    continue
                }
                type += " of " + item
                fields += " / " + (catalog.schema(named: item).map { Self.describe($0.fields) } ?? "unknown")
            }
            entries.append(Entry(identifier: component.identifier, type: type, fields: fields))
        }
        var hash = FNV1a()
        // Sorted: the order of components is not something the data depends on.
        for entry in entries.sorted(by: { $0.identifier < $1.identifier }) {
            for part in [entry.identifier, entry.type, entry.fields] {
                hash.combine(part.utf8)
                hash.combine(0)
            }
        }
        // Only a screen with actions adds to the digest: the revisions of the others stay as they were.
        let inputs = Dictionary(actions.map { ($0.name, $0.inputs.map(Self.describe).sorted()) }, uniquingKeysWith: { first, _ in first })
        for name in inputs.keys.sorted() {
            hash.combine("action \(name)".utf8)
            hash.combine(0)
            for input in inputs[name] ?? [] {
                hash.combine(input.utf8)
                hash.combine(0)
            }
        }
        self.entries = entries
        self.inputs = inputs
        self.digest = hash.hexDigest
    }

    /// Whether `text` has a revision's shape: 16 lowercase hex digits.
    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// An input as the revision sees it: its name, type, whether it is required, and its rules.
    static func describe(_ input: ScreenAction.Input) -> String {
        let rule = input.parameter
        var rules: [String] = []
        if let values = rule.allowedValues { rules.append("one of \(JSONWriter.string(.array(values)))") }
        if let pattern = rule.pattern { rules.append("pattern \(pattern)") }
        if let least = rule.minLength { rules.append("min \(least)") }
        if let most = rule.maxLength { rules.append("max \(most)") }
        return "\(input.name):\(rule.kind.rawValue)\(rule.isRequired ? "!" : "?"){\(rules.joined(separator: ","))}"
    }

    /// The fields as the client decodes them: name, type, required and dynamic; not the summaries.
    static func describe(_ fields: [FieldSchema]) -> String {
        fields.map { "\($0.name):\(describe($0.type))\($0.isRequired ? "!" : "?")\($0.isDynamic ? "*" : "")" }.joined(separator: ",")
    }

    private static func describe(_ type: FieldType) -> String {
        switch type {
        case .enumeration(let values): "enum(\(values.joined(separator: "|")))"
        case .object(let fields?): "object{\(describe(fields))}"
        case .array(let items?): "array[\(describe(items))]"
        case .componentContents(let nameField): "contents(\(nameField))"
        default: type.name
        }
    }

    /// What a reload changed of the data's shape, for the log: identifiers that appeared,
    /// disappeared, or changed type or fields.
    static func changes(from old: SkeletonRevision, to new: SkeletonRevision) -> [String] {
        let before = Dictionary(old.entries.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.entries.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [String] = []
        for entry in new.entries where before[entry.identifier] == nil { changes.append("\(entry.identifier) appeared (\(entry.type))") }
        for entry in old.entries where after[entry.identifier] == nil {
            changes.append("\(entry.identifier) disappeared (was \(entry.type))")
        }
        for entry in new.entries {
            guard let was = before[entry.identifier], was != entry else { continue }
            changes.append(
                was.type == entry.type
                    ? "\(entry.identifier) changed the fields of \(entry.type)"
                    : "\(entry.identifier) changed type from \(was.type) to \(entry.type)"
            )
        }
        for name in Set(old.inputs.keys).union(new.inputs.keys).sorted() where old.inputs[name] != new.inputs[name] {
            changes.append(
                old.inputs[name] == nil
                    ? "action \(name) appeared"
                    : new.inputs[name] == nil ? "action \(name) disappeared" : "action \(name) changed its inputs")
        }
        return changes
    }
}
