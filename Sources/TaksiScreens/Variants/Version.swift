/// An app version: dot-separated numbers, compared segment by segment with missing segments as
/// zero, as RubyGems does (`1.2` equals `1.2.0`, `1.10` is after `1.9`).
public struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numeric segments, as written.
    public var segments: [Int]

    public init(_ segments: [Int]) {
        self.segments = segments
    }

    /// Parses `1`, `1.2`, `1.2.3` (up to 8 segments, each at most 9 digits); nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...8).contains(parts.count) else { return nil }
        var segments: [Int] = []
        for part in parts {
            guard (1...9).contains(part.count), part.allSatisfy(\.isASCIIDigit), let value = Int(part) else { return nil }
            segments.append(value)
        }
        self.segments = segments
    }

    public var description: String { segments.map(String.init).joined(separator: ".") }

    /// Segments without trailing zeros, so equal versions compare and hash equal.
    private var significant: ArraySlice<Int> {
        var end = segments.count
        while end > 1, segments[end - 1] == 0 { end -= 1 }
        return segments[..<end]
    }

    public static func == (lhs: Version, rhs: Version) -> Bool { lhs.significant == rhs.significant }
    public func hash(into hasher: inout Hasher) { hasher.combine(Array(significant)) }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        for index in 0..<max(lhs.segments.count, rhs.segments.count) {
            let left = index < lhs.segments.count ? lhs.segments[index] : 0
            let right = index < rhs.segments.count ? rhs.segments[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    /// The version `~>` stops below: `~> 1.2.3` allows up to (not including) `1.3`; `~> 1.2` and `~> 1` up to `2`.
    var pessimisticUpperBound: Version {
        var prefix = Array(segments.dropLast(segments.count > 1 ? 1 : 0))
        prefix[prefix.count - 1] += 1
        return Version(prefix)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
