public import TaksiSchema

/// Where a node was written: a byte offset in a file, and which file. Nodes read from a screen's
/// file have origin 0; nodes copied in from a fragment keep their offsets in the fragment's file
/// and the number of that copy (``DefinitionReader`` knows the copies: the fragment, its file and
/// where it is used), so a problem inside a fragment is reported at both places.
public struct SourceOffset: Hashable, Sendable {
    /// The byte offset in the file the node was written in.
    public var byte: Int
    /// 0 for the file being read; `n` for the `n`th fragment copied into it.
    public var origin: Int

    public init(byte: Int, origin: Int = 0) {
        self.byte = byte
        self.origin = origin
    }
}

/// A parsed JSON value that remembers where it was written, so a diagnostic can point at the
/// line and column of the offending value. Object members keep the order of the file.
public struct JSONNode: Sendable {
    /// One member of an object, with where its key was written.
    public struct Member: Sendable {
        public var key: String
        public var keyOffset: SourceOffset
        public var value: JSONNode

        public init(key: String, keyOffset: SourceOffset, value: JSONNode) {
            self.key = key
            self.keyOffset = keyOffset
            self.value = value
        }

        /// A member of a file being read (origin 0).
        public init(key: String, keyOffset: Int, value: JSONNode) {
            self.init(key: key, keyOffset: SourceOffset(byte: keyOffset), value: value)
        }
    }

    public indirect enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONNode])
        case object([Member])
    }

    public var kind: Kind
    /// Where the value starts.
    public var offset: SourceOffset

    public init(kind: Kind, offset: SourceOffset) {
        self.kind = kind
        self.offset = offset
    }

    /// A value of a file being read (origin 0), starting at byte `offset`.
    public init(kind: Kind, offset: Int) {
        self.init(kind: kind, offset: SourceOffset(byte: offset))
    }

    /// The plain value, without locations.
    public var value: JSONValue {
        switch kind {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number): .number(number)
        case .string(let string): .string(string)
        case .array(let elements): .array(elements.map(\.value))
        case .object(let members):
            .object(Dictionary(members.map { ($0.key, $0.value.value) }, uniquingKeysWith: { _, last in last }))
        }
    }

    /// The members, when this is an object.
    public var members: [Member]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    /// The elements, when this is an array.
    public var elements: [JSONNode]? {
        if case .array(let elements) = kind { return elements }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let string) = kind { return string }
        return nil
    }

    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> JSONNode? {
        members?.first { $0.key == key }?.value
    }

    /// The JSON type's name, for messages.
    public var typeName: String { value.typeName }

    /// This object with the value of member `key` replaced (or the node itself if it has none).
    func replacing(_ key: String, with elements: [JSONNode]) -> JSONNode {
        guard case .object(let members) = kind else { return self }
        var copy = self
        copy.kind = .object(
            members.map { member in
                guard member.key == key else { return member }
                return Member(key: key, keyOffset: member.keyOffset, value: JSONNode(kind: .array(elements), offset: member.value.offset))
            })
        return copy
    }

    /// The deepest node along `path` that exists: the node itself, or the closest ancestor when a
    /// member is missing (a missing field is reported where its object starts).
    public func closestNode(at path: JSONPath) -> JSONNode {
        var node = self
        for segment in path.segments {
            switch segment {
            case .key(let key):
                guard let next = node[key] else { return node }
                node = next
            case .index(let index):
                guard let elements = node.elements, elements.indices.contains(index) else { return node }
                node = elements[index]
            }
        }
        return node
    }
}

extension JSONNode {
    /// A node for a value that has no place of its own in a file, reported at `offset`.
    init(_ value: JSONValue, offset: SourceOffset) {
        let kind: Kind =
            switch value {
            case .null: .null
            case .bool(let flag): .bool(flag)
            case .number(let number): .number(number)
            case .string(let string): .string(string)
            case .array(let elements): .array(elements.map { JSONNode($0, offset: offset) })
            case .object(let members):
                .object(
                    members.sorted { $0.key < $1.key }.map {
                        Member(key: $0.key, keyOffset: offset, value: JSONNode($0.value, offset: offset))
                    })
            }
        self.init(kind: kind, offset: offset)
    }
}
