import TaksiSchema

/// What a value an upstream answers is known to look like: read from examples of it (the files of
/// a `file:` upstream, a source's `example`) or from a JSON Schema of it (a source's `schema`, the
/// success response of an operation in the upstream's OpenAPI document).
indirect enum AnswerShape: Sendable, Hashable {
    /// Nothing is known: every key and type is accepted.
    case unknown
    case null
    case bool
    case integer
    case number
    case string
    case array(of: AnswerShape)
    /// An object whose keys are known: a key not among them is a mistake. `required` is nil when
    /// the shape does not say which keys are always there (examples never do).
    case object([String: AnswerShape], required: Set<String>?)
    /// An object with keys the API chooses, each value of one shape (`additionalProperties`).
    case map(of: AnswerShape)
    /// One of several shapes (never nested, never fewer than two).
    case oneOf([AnswerShape])

    /// The shape of `values`, each an example of the same answer (one per file, per element).
    init(examples values: [JSONValue]) {
        self = .union(values.map(Self.init(example:)))
    }

    /// The shape of one example: its objects' keys are all the keys there are.
    init(example value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .number(let number): self = number.rounded() == number ? .integer : .number
        case .string: self = .string
        case .array(let elements): self = .array(of: elements.isEmpty ? .unknown : .init(examples: elements))
        case .object(let members): self = .object(members.mapValues(Self.init(example:)), required: nil)
        }
    }

    /// A shape that is any of `shapes`: objects merged into one (a key in any of them is known),
    /// arrays into one, an integer into a number.
    static func union(_ shapes: [AnswerShape]) -> AnswerShape {
        var flat: [AnswerShape] = []
        for shape in shapes {
            if case .oneOf(let inner) = shape { flat += inner } else { flat.append(shape) }
        }
        if flat.isEmpty || flat.contains(.unknown) { return .unknown }
        var objects: [String: [AnswerShape]] = [:]
        var objectCount = 0
        var requiredEverywhere: Set<String>?
        var knowsRequired = true
        var elements: [AnswerShape] = []
        var sawArray = false
        var maps: [AnswerShape] = []
        var scalars: [AnswerShape] = []
        for shape in flat {
            switch shape {
            case .object(let properties, let required):
                objectCount += 1
                for (key, value) in properties { objects[key, default: []].append(value) }
                if let required {
                    requiredEverywhere = requiredEverywhere.map { $0.intersection(required) } ?? required
                } else {
                    knowsRequired = false
                }
            case .array(let element):
                sawArray = true
                elements.append(element)
            case .map(let value):
                maps.append(value)
            default:
                if !scalars.contains(shape) { scalars.append(shape) }
            }
        }
        if scalars.contains(.number) { scalars.removeAll { $0 == .integer } }
        var merged: [AnswerShape] = scalars
        if objectCount > 0 {
            // A key only some of the objects have is not always there.
            let present = Set(objects.filter { $0.value.count == objectCount }.keys)
            let required = knowsRequired ? (requiredEverywhere ?? []).intersection(present) : nil
            merged.append(.object(objects.mapValues { union($0) }, required: required))
        }
        if !maps.isEmpty { merged.append(.map(of: union(maps))) }
        if sawArray { merged.append(.array(of: union(elements))) }
        return merged.count == 1 ? merged[0] : .oneOf(merged)
    }

    /// The shape without `null` (what a value is when it is there), and whether it may be null.
    var withoutNull: (shape: AnswerShape, nullable: Bool) {
        switch self {
        case .null: return (.unknown, true)
        case .oneOf(let shapes) where shapes.contains(.null):
            let rest = shapes.filter { $0 != .null }
            return (rest.count == 1 ? rest[0] : .oneOf(rest), true)
        default: return (self, false)
        }
    }

    /// The shapes a value of this one may be: a `oneOf`'s, else itself.
    var alternatives: [AnswerShape] {
        if case .oneOf(let shapes) = self { shapes } else { [self] }
    }

    /// How the shape reads in a message: `a string`, `an array`, `a string or null`.
    var described: String {
        switch self {
        case .unknown: "any value"
        case .null: "null"
        case .bool: "a Boolean"
        case .integer: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object, .map: "an object"
        case .oneOf(let shapes): shapes.map(\.described).joined(separator: " or ")
        }
    }
}

/// What a source (or a loop variable) is known to hold, and where that is known from: a
/// binding's path and the type of the field it fills are checked against it.
struct KnownAnswer: Sendable {
    var shape: AnswerShape
    /// Where the shape comes from, for messages: `upstreams/shop/products.json`, `openapi/shop.yaml
    /// (GET /products, 200)`.
    var origin: String
    /// What the origin is a record of, for the fix: "add it to that file", "check the API's document".
    var fix: String

    /// What the elements of the array at `steps` hold (what `$each` iterates); nil when unknown.
    func elements(at steps: JSONPath) -> KnownAnswer? {
        guard case .found(let found, _) = walk(steps) else { return nil }
        let elements = found.withoutNull.shape.alternatives.compactMap { if case .array(let element) = $0 { element } else { nil } }
        guard !elements.isEmpty else { return nil }
        return KnownAnswer(shape: .union(elements), origin: origin, fix: fix)
    }

    /// What walking `steps` finds.
    enum Walk: Equatable {
        /// The shape at the end; `optional` is the first value on the way that may be missing or
        /// null (a key the schema does not require), nil when every step is always there.
        case found(AnswerShape, optional: JSONPath?)
        /// No known object has `key` after `before` (the steps walked before it); `keys` are the ones there are.
        case missing(key: String, before: JSONPath, keys: [String])
        /// The value after `before` is `found`, which the next step cannot walk into.
        case mismatch(before: JSONPath, found: AnswerShape, step: JSONPath.Segment)
    }

    func walk(_ steps: JSONPath) -> Walk {
        var current = shape
        var walked: [JSONPath.Segment] = []
        var optional: JSONPath?
        for segment in steps.segments {
            let (shape, nullable) = current.withoutNull
            if nullable, optional == nil { optional = JSONPath(segments: walked) }
            var next: [AnswerShape] = []
            var keys: Set<String> = []
            var unknown = false
            for alternative in shape.alternatives {
                switch (segment, alternative) {
                case (_, .unknown): unknown = true
                case (.key(let key), .object(let properties, let required)):
                    keys.formUnion(properties.keys)
                    if let value = properties[key] {
                        next.append(value)
                        if let required, !required.contains(key), optional == nil {
                            optional = JSONPath(segments: walked + [segment])
                        }
                    }
                case (.key, .map(let value)): next.append(value)
                case (.index, .array(let element)): next.append(element)
                default: break
                }
            }
            if unknown { return .found(.unknown, optional: optional) }
            if next.isEmpty {
                if case .key(let key) = segment, !keys.isEmpty {
                    return .missing(key: key, before: JSONPath(segments: walked), keys: keys.sorted())
                }
                return .mismatch(before: JSONPath(segments: walked), found: shape, step: segment)
            }
            current = .union(next)
            walked.append(segment)
        }
        return .found(current, optional: optional)
    }
}

extension AnswerShape {
    /// Whether a value of this shape decodes as `type`: nil when it does (or may: some of its
    /// alternatives do), else what it is instead.
    func misfit(for type: FieldType) -> String? {
        let shape = withoutNull.shape
        return shape.alternatives.contains { $0.fits(type) } ? nil : shape.described
    }

    private func fits(_ type: FieldType) -> Bool {
        switch (self, type) {
        case (.unknown, _), (.null, _): true
        case (.string, .string), (.string, .url), (.string, .enumeration): true
        case (.integer, .number), (.number, .number), (.integer, .integer): true
        // A number schema may well hold whole numbers only; the client checks each value.
        case (.number, .integer): true
        case (.bool, .bool): true
        case (.object, .object), (.map, .object), (.object, .action): true
        case (.array, .array), (.array, .componentContents): true
        default: false
        }
    }

    /// Whether a value of this shape can be spliced into text (a string, a number or a Boolean).
    var isText: Bool {
        withoutNull.shape.alternatives.contains {
            switch $0 {
            case .unknown, .null, .bool, .integer, .number, .string: true
            default: false
            }
        }
    }
}
