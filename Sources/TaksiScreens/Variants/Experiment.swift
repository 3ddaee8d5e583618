/// An A/B test over a screen's alternatives: a client identified by a user id is assigned an
/// alternative by a stable hash of the experiment's name and the user id, so the same user sees
/// the same alternative on every request, after restarts and on every replica.
///
/// The hash picks one of 10,000 buckets; the alternatives own consecutive ranges of buckets in
/// the order of their names, each range as wide as its share of the weights. Changing the weights
/// moves only the range boundaries, so only users in the buckets that change hands switch
/// alternative. Renaming the experiment reshuffles everyone.
///
/// ```json
/// "experiment": {"name": "home-cards-2026", "weights": {"default": 50, "compact": 50}}
/// ```
public struct Experiment: Sendable, Hashable {
    /// The number of buckets users are hashed into.
    public static let bucketCount = 10_000

    /// Part of the hash: a new name is a new, independent assignment.
    public var name: String
    /// Alternatives and their weights, sorted by alternative name (the bucket order).
    public var weights: [(alternative: String, weight: Int)]

    public init(name: String, weights: [String: Int]) {
        self.name = name
        self.weights = weights.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public static func == (lhs: Experiment, rhs: Experiment) -> Bool {
        lhs.name == rhs.name && lhs.weights.elementsEqual(rhs.weights, by: { $0 == $1 })
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        for (alternative, weight) in weights {
            hasher.combine(alternative)
            hasher.combine(weight)
        }
    }

    /// The user's bucket, 0 to 9,999.
    public func bucket(forUser user: String) -> Int {
        Int(Self.stableHash("\(name)\u{0}\(user)") % UInt64(Self.bucketCount))
    }

    /// The alternative assigned to `user`.
    public func alternative(forUser user: String) -> String {
        let total = weights.reduce(0) { $0 + $1.weight }
        let position = bucket(forUser: user)
        var end = 0
        var covered = 0
        for (alternative, weight) in weights {
            covered += weight
            // Integer arithmetic keeps range boundaries identical on every platform.
            end = covered * Self.bucketCount / total
            if position < end { return alternative }
        }
        return weights.last { $0.weight > 0 }?.alternative ?? weights[0].alternative
    }

    /// FNV-1a over UTF-8, then a SplitMix64 finaliser so short, similar ids spread evenly.
    /// Fixed forever: changing it would reassign every user of every experiment.
    static func stableHash(_ text: String) -> UInt64 {
        var digest = FNV1a()
        digest.combine(text.utf8)
        var hash = digest.value
        hash ^= hash >> 30
        hash = hash &* 0xBF58_476D_1CE4_E5B9
        hash ^= hash >> 27
        hash = hash &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 31
        return hash
    }
}
