/// An app version: dot-separated numbers, optionally with a Semantic Versioning pre-release and
/// build metadata (`2.1`, `2.1.0-beta.2`, `2.1.0+45`, `v2.1`).
///
/// Numbers compare segment by segment with missing segments as zero, as RubyGems does (`1.2`
/// equals `1.2.0`, `1.10` is after `1.9`). A pre-release comes before its release, as Semantic
/// Versioning 2.0 orders them (`2.0-alpha < 2.0-alpha.1 < 2.0-beta < 2.0-beta.2 < 2.0-beta.11 <
/// 2.0-rc.1 < 2.0`): identifiers compare one by one, numbers numerically, text in ASCII order,
/// a number before text, and a shorter list first when all else is equal. Build metadata
/// (`+45`) is accepted and ignored: `2.1.0+45` equals `2.1.0`. A leading `v` is dropped.
public struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numeric segments, as written.
    public var segments: [Int]
    /// The pre-release identifiers (`["beta", "2"]` for `-beta.2`); empty for a release.
    public var prerelease: [String]

    public init(_ segments: [Int], prerelease: [String] = []) {
        self.segments = segments
        self.prerelease = prerelease
    }

    /// Parses `1`, `1.2`, `1.2.3` (up to 8 segments, each at most 9 digits), each optionally
    /// followed by `-PRERELEASE` and `+BUILD` (dot-separated identifiers of ASCII letters, digits
    /// and `-`), and optionally preceded by `v`; nil otherwise.
    public init?(_ text: String) {
        var rest = Substring(text)
        if rest.first == "v" || rest.first == "V" { rest = rest.dropFirst() }
        if let plus = rest.firstIndex(of: "+") {
            guard Self.identifiers(rest[rest.index(after: plus)...]) != nil else { return nil }
            rest = rest[..<plus]
        }
        var prerelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            guard let identifiers = Self.identifiers(rest[rest.index(after: dash)...]) else { return nil }
            prerelease = identifiers
            rest = rest[..<dash]
        }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...8).contains(parts.count) else { return nil }
        var segments: [Int] = []
        for part in parts {
            guard (1...9).contains(part.count), part.allSatisfy(\.isASCIIDigit), let value = Int(part) else { return nil }
            segments.append(value)
        }
        self.segments = segments
        self.prerelease = prerelease
    }

    /// Dot-separated, non-empty identifiers of `[0-9A-Za-z-]`, at most 64 characters in all.
    private static func identifiers(_ text: Substring) -> [String]? {
        guard (1...64).contains(text.count) else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCIIDigit || $0.isASCIILetter || $0 == "-" } }) else {
            return nil
        }
        return parts.map(String.init)
    }

    public var description: String {
        segments.map(String.init).joined(separator: ".") + (prerelease.isEmpty ? "" : "-" + prerelease.joined(separator: "."))
    }

    /// Segments without trailing zeros, so equal versions compare and hash equal.
    private var significant: ArraySlice<Int> {
        var end = segments.count
        while end > 1, segments[end - 1] == 0 { end -= 1 }
        return segments[..<end]
    }

    public static func == (lhs: Version, rhs: Version) -> Bool {
        lhs.significant == rhs.significant && lhs.prerelease == rhs.prerelease
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(significant))
        hasher.combine(prerelease)
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        for index in 0..<max(lhs.segments.count, rhs.segments.count) {
            let left = index < lhs.segments.count ? lhs.segments[index] : 0
            let right = index < rhs.segments.count ? rhs.segments[index] : 0
            if left != right { return left < right }
        }
        // Same numbers: a pre-release is before the release, and pre-releases compare by identifier.
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        case (false, false): break
        }
        for (left, right) in zip(lhs.prerelease, rhs.prerelease) where left != right {
            switch (Self.number(left), Self.number(right)) {
            case let (l?, r?): return l < r
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
            }
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }

    /// A numeric identifier's value (digits only); compared as a number, and big ones still order.
    private static func number(_ identifier: String) -> Double? {
        identifier.allSatisfy(\.isASCIIDigit) ? Double(identifier) : nil
    }

    /// The version `~>` stops below: `~> 1.2.3` allows up to (not including) `1.3`; `~> 1.2` and
    /// `~> 1` up to `2`. The bound is the first pre-release of that version (`2.0-0`), so the
    /// pre-releases of the next version are outside it too.
    var pessimisticUpperBound: Version {
        var prefix = Array(segments.dropLast(segments.count > 1 ? 1 : 0))
        prefix[prefix.count - 1] += 1
        return Version(prefix, prerelease: ["0"])
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
