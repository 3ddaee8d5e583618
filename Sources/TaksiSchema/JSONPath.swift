/// Where a value sits inside a JSON document, written the way authors read it:
/// `components[2].content.action`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step into a document: an object member or an array element.
    public enum Segment: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The steps from the document's root.
    public var segments: [Segment]

    /// The document's root.
    public static let root = JSONPath(segments: [])

    public init(segments: [Segment]) {
        self.segments = segments
    }

    /// This path with an object member appended.
    public func appending(_ key: String) -> JSONPath {
        JSONPath(segments: segments + [.key(key)])
    }

    /// This path with an array element appended.
    public func appending(_ index: Int) -> JSONPath {
        JSONPath(segments: segments + [.index(index)])
    }

    /// This path followed by `other`.
    public func appending(_ other: JSONPath) -> JSONPath {
        JSONPath(segments: segments + other.segments)
    }

    /// `components[2].content.action`; keys that are not plain names are quoted: `labels["first name"]`.
    /// The root is written `$`.
    public var description: String {
        if segments.isEmpty { return "$" }
        var text = ""
        for segment in segments {
            switch segment {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if Self.isPlainName(key) {
                    text += text.isEmpty ? key : ".\(key)"
                } else {
                    text += "[\(JSONWriter.string(.string(key)))]"
                }
            }
        }
        return text
    }

    private static func isPlainName(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return key.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}
