/// A version requirement in RubyGems style: constraints joined by commas, all of which must hold.
///
/// `~> 1.2` (at least 1.2, below 2), `>= 1.0, < 2.0`, `= 1.4.2` (or just `1.4.2`), `!= 1.3.0`, `> 2`, `<= 3`.
///
/// ```swift
/// let requirement = try VersionRequirement(parsing: ">= 1.0, < 2.0")
/// requirement.isSatisfied(by: Version("1.4")!) // true
/// ```
public struct VersionRequirement: Sendable, Hashable, CustomStringConvertible {
    /// One constraint: an operator and a version.
    public struct Constraint: Sendable, Hashable, CustomStringConvertible {
        public enum Operator: String, Sendable, Hashable, CaseIterable {
            case equal = "="
            case notEqual = "!="
            case greater = ">"
            case less = "<"
            case greaterOrEqual = ">="
            case lessOrEqual = "<="
            case pessimistic = "~>"
        }

        public var op: Operator
        public var version: Version
        public var description: String { "\(op.rawValue) \(version)" }

        func isSatisfied(by candidate: Version) -> Bool {
            switch op {
            case .equal: candidate == version
            case .notEqual: candidate != version
            case .greater: candidate > version
            case .less: candidate < version
            case .greaterOrEqual: candidate >= version
            case .lessOrEqual: candidate <= version
            case .pessimistic: candidate >= version && candidate < version.pessimisticUpperBound
            }
        }

        /// The versions the constraint admits, as intervals.
        var versions: VersionSet {
            switch op {
            case .equal: VersionSet(lower: (version, true), upper: (version, true))
            case .notEqual:
                VersionSet(intervals: [
                    .init(lower: nil, upper: (version, false)), .init(lower: (version, false), upper: nil),
                ])
            case .greater: VersionSet(lower: (version, false), upper: nil)
            case .less: VersionSet(lower: nil, upper: (version, false))
            case .greaterOrEqual: VersionSet(lower: (version, true), upper: nil)
            case .lessOrEqual: VersionSet(lower: nil, upper: (version, true))
            case .pessimistic: VersionSet(lower: (version, true), upper: (version.pessimisticUpperBound, false))
            }
        }
    }

    public var constraints: [Constraint]

    /// Why a requirement does not parse: what was found and what to write.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses a requirement such as `~> 1.2` or `>= 1.0, < 2.0`.
    public init(parsing text: String) throws(ParseError) {
        var constraints: [Constraint] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = String(part).trimmingSpaces
            guard !trimmed.isEmpty else {
                throw ParseError(message: "an empty constraint; write constraints like \">= 1.0, < 2.0\"")
            }
            let operatorText = String(trimmed.prefix { "<>=!~".contains($0) })
            let versionText = String(trimmed.dropFirst(operatorText.count)).trimmingSpaces
            guard let op = operatorText.isEmpty ? .equal : Constraint.Operator(rawValue: operatorText) else {
                throw ParseError(
                    message: "unknown operator \"\(operatorText)\"; use one of =, !=, >, <, >=, <=, ~>"
                )
            }
            guard let version = Version(versionText) else {
                throw ParseError(message: "\"\(versionText)\" is not a version; write numbers separated by dots, like 1.2.3")
            }
            constraints.append(Constraint(op: op, version: version))
        }
        self.constraints = constraints
    }

    /// Whether `version` meets every constraint.
    public func isSatisfied(by version: Version) -> Bool {
        constraints.allSatisfy { $0.isSatisfied(by: version) }
    }

    /// The versions that meet every constraint.
    public var versions: VersionSet {
        constraints.reduce(VersionSet.all) { $0.intersection($1.versions) }
    }

    /// `>= 1.0, < 2.0`: the constraints in a canonical spelling.
    public var description: String { constraints.map(\.description).joined(separator: ", ") }
}

/// A set of versions as disjoint intervals, for questions about whole requirements: can two
/// requirements match one version, does a requirement admit anything older than a version.
/// Versions are dense (between any two there is another, e.g. `1.2 < 1.2.0.1 < 1.3`), so an open
/// interval with distinct ends is never empty.
public struct VersionSet: Sendable, Equatable {
    struct Interval: Sendable, Equatable {
        var lower: (version: Version, inclusive: Bool)?
        var upper: (version: Version, inclusive: Bool)?

        static func == (lhs: Interval, rhs: Interval) -> Bool {
            lhs.lower?.version == rhs.lower?.version && lhs.lower?.inclusive == rhs.lower?.inclusive
                && lhs.upper?.version == rhs.upper?.version && lhs.upper?.inclusive == rhs.upper?.inclusive
        }

        var isEmpty: Bool {
            guard let lower, let upper else { return false }
            if lower.version < upper.version { return false }
            return !(lower.version == upper.version && lower.inclusive && upper.inclusive)
        }

        func intersection(_ other: Interval) -> Interval {
            var result = self
            if let bound = other.lower {
                if let current = result.lower {
                    if bound.version > current.version || (bound.version == current.version && !bound.inclusive) {
                        result.lower = bound
                    }
                } else {
                    result.lower = bound
                }
            }
            if let bound = other.upper {
                if let current = result.upper {
                    if bound.version < current.version || (bound.version == current.version && !bound.inclusive) {
                        result.upper = bound
                    }
                } else {
                    result.upper = bound
                }
            }
            return result
        }
    }

    var intervals: [Interval]

    init(intervals: [Interval]) {
        self.intervals = intervals.filter { !$0.isEmpty }
    }

    init(lower: (Version, Bool)?, upper: (Version, Bool)?) {
        self.init(intervals: [Interval(lower: lower.map { ($0.0, $0.1) }, upper: upper.map { ($0.0, $0.1) })])
    }

    /// Every version.
    public static let all = VersionSet(intervals: [Interval(lower: nil, upper: nil)])

    /// Every version below `version`.
    public static func below(_ version: Version) -> VersionSet {
        VersionSet(lower: nil, upper: (version, false))
    }

    /// Every version above `version` (exclusive).
    public static func above(_ version: Version) -> VersionSet {
        VersionSet(lower: (version, false), upper: nil)
    }

    /// Just `version`.
    public static func only(_ version: Version) -> VersionSet {
        VersionSet(lower: (version, true), upper: (version, true))
    }

    /// `version` and every version after it.
    public static func from(_ version: Version) -> VersionSet {
        VersionSet(lower: (version, true), upper: nil)
    }

    public var isEmpty: Bool { intervals.isEmpty }

    /// Whether `version` is in the set.
    public func contains(_ version: Version) -> Bool {
        intervals.contains { interval in
            if let lower = interval.lower, lower.inclusive ? version < lower.version : version <= lower.version { return false }
            if let upper = interval.upper, upper.inclusive ? version > upper.version : version >= upper.version { return false }
            return true
        }
    }

    /// The versions in either set (the intervals side by side; overlapping ones are not merged).
    public func union(_ other: VersionSet) -> VersionSet {
        VersionSet(intervals: intervals + other.intervals)
    }

    /// The lowest version the set starts at (`version` nil when it has no lower bound), for ordering
    /// ranges from old to new; nil for an empty set.
    var lowestBound: (version: Version?, inclusive: Bool)? {
        guard !intervals.isEmpty else { return nil }
        let lowers = intervals.map(\.lower)
        if lowers.contains(where: { $0 == nil }) { return (nil, true) }
        return lowers.compactMap { $0 }.min { $0.version < $1.version }.map { ($0.version, $0.inclusive) }
    }

    public func intersection(_ other: VersionSet) -> VersionSet {
        VersionSet(intervals: intervals.flatMap { mine in other.intervals.map { mine.intersection($0) } })
    }

    /// A short description of a version in the set, for messages: `1.0`, `above 1.2`, `any version`.
    public var example: String? {
        guard let first = intervals.first else { return nil }
        if let lower = first.lower {
            return lower.inclusive ? lower.version.description : "versions just above \(lower.version)"
        }
        if let upper = first.upper {
            return upper.inclusive ? upper.version.description : "versions below \(upper.version)"
        }
        return "any version"
    }
}
