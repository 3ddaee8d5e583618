public import TaksiSchema

/// A reference to a value inside a data source: the source's name, then keys and array indices.
///
/// Written `user.name`, `restaurants.items[0].title`, `query.city`. Inside a collection's
/// item template the loop variable (`item` by default) is a root as well: `item.title`.
public struct ValuePath: Sendable, Hashable, CustomStringConvertible {
    /// The source (or loop variable) the path starts from.
    public var root: String
    /// The steps into the source's value.
    public var steps: JSONPath

    public init(root: String, steps: JSONPath = .root) {
        self.root = root
        self.steps = steps
    }

    /// Parses `source.key[0].key`; nil when the text is not of that form.
    public init?(parsing text: String) {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func name() -> String? {
            var result = String.UnicodeScalarView()
            while index < scalars.count, Self.isNameScalar(scalars[index]) {
                result.append(scalars[index])
                index += 1
            }
            return result.isEmpty ? nil : String(result)
        }
        guard let root = name() else { return nil }
        var segments: [JSONPath.Segment] = []
        while index < scalars.count {
            if scalars[index] == "." {
                index += 1
                guard let key = name() else { return nil }
                segments.append(.key(key))
            } else if scalars[index] == "[" {
                index += 1
                var digits = ""
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    digits.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard index < scalars.count, scalars[index] == "]", let position = Int(digits) else { return nil }
                index += 1
                segments.append(.index(position))
            } else {
                return nil
            }
        }
        self.root = root
        self.steps = JSONPath(segments: segments)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "-", "$": true
        default: false
        }
    }

    public var description: String {
        var text = root
        for segment in steps.segments {
            switch segment {
            case .key(let key): text += ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// The value at this path's steps inside `value`; nil where a key or index is missing.
    public func lookup(in value: JSONValue) -> JSONValue? {
        var current = value
        for segment in steps.segments {
            switch segment {
            case .key(let key):
                guard let next = current[key] else { return nil }
                current = next
            case .index(let index):
                guard let elements = current.arrayValue, elements.indices.contains(index) else { return nil }
                current = elements[index]
            }
        }
        return current
    }
}
