/// An A/B test over a screen's alternatives: a client identified by a user id is assigned an
/// alternative by a stable hash of the experiment's name and the user id, so the same user sees
/// the same alternative on every request, after restarts and on every replica.
///
/// The hash picks one of 10,000 buckets; the alternatives own consecutive ranges of buckets in
/// the order of their names, each range as wide as its share of the weights. Changing the weights
/// moves only the range boundaries, so only users in the buckets that change hands switch
/// alternative. Renaming the experiment reshuffles everyone.
///
/// Who is in is decided before that, by hashes of their own (see ``assignment(for:)``): the
/// ``audience`` (app versions, platforms, languages), a ``holdout`` that never sees an
/// alternative, a ``rollout`` share, and a ``layer`` shared with other experiments. A ``decision``
/// ends it without a release: a winner for everyone, or everyone back on `default`.
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
    /// Who may be in: the requests outside it get `default` and are not exposed.
    public var audience = Audience()
    /// Buckets (of 10,000) of the audience held out: they never see an alternative (the first ones).
    public var holdout = 0
    /// Buckets (of 10,000) of the audience in the experiment, after the holdout's; nil for every
    /// user not held out.
    public var rollout: Int?
    /// The layer the experiment shares with others, each owning a range of it.
    public var layer: Layer?
    /// Whether it is still running, or decided.
    public var decision = Decision.running

    /// Who an experiment may include; nil members include everyone.
    public struct Audience: Sendable, Hashable {
        /// App versions (`X-Taksi-Version`); a request without a version is outside.
        public var versions: VersionRequirement?
        /// Platforms (`X-Taksi-Platform`, compared in lower case); a request without one is outside.
        public var platforms: [String]?
        /// Languages (the most preferred range of `Accept-Language`, matched as locale negotiation
        /// matches it: `de-CH` is in `de`, `pt` is in `pt-BR`); a request without one is outside.
        public var locales: [String]?

        public init(versions: VersionRequirement? = nil, platforms: [String]? = nil, locales: [String]? = nil) {
            self.versions = versions
            self.platforms = platforms
            self.locales = locales
        }

        public static func == (lhs: Audience, rhs: Audience) -> Bool {
            lhs.versions?.description == rhs.versions?.description && lhs.platforms == rhs.platforms && lhs.locales == rhs.locales
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(versions?.description)
            hasher.combine(platforms)
            hasher.combine(locales)
        }

        /// Whether everyone is in.
        public var isEveryone: Bool { versions == nil && platforms == nil && locales == nil }

        /// Whether a request with these inputs is in.
        public func includes(version: Version?, platform: String?, language: String?) -> Bool {
            if let versions {
                guard let version, versions.isSatisfied(by: version) else { return false }
            }
            if let platforms {
                guard let platform = platform?.lowercased(), platforms.contains(platform) else { return false }
            }
            if let locales {
                guard let language, Self.language(language, isIn: locales) else { return false }
            }
            return true
        }

        /// `de-CH` is in `de` (truncated as RFC 4647 lookup truncates), `pt` in `pt-BR` (a
        /// language listed only with a region).
        static func language(_ range: String, isIn locales: [String]) -> Bool {
            let candidates = Localization.truncations(of: range.lowercased())
            let listed = locales.map { $0.lowercased() }
            return candidates.contains { candidate in listed.contains { $0 == candidate || $0.hasPrefix(candidate + "-") } }
        }
    }

    /// A range of a layer: users hashed into the layer's 10,000 buckets (by the layer's name, not
    /// the experiment's) are in the experiment whose range holds their bucket, so experiments in
    /// one layer whose ranges do not overlap never share a user.
    public struct Layer: Sendable, Hashable {
        public var name: String
        /// Buckets `lower ..< upper` of 10,000.
        public var buckets: Range<Int>

        public init(name: String, buckets: Range<Int>) {
            self.name = name
            self.buckets = buckets
        }

        public func bucket(forUser user: String) -> Int {
            Int(Experiment.stableHash("layer\u{0}\(name)\u{0}\(user)") % UInt64(Experiment.bucketCount))
        }
    }

    /// Whether an experiment runs, or was decided in its file.
    public enum Decision: Sendable, Hashable {
        case running
        /// Everyone gets this alternative; nobody is exposed any more.
        case winner(String)
        /// Everyone gets `default`; nobody is exposed any more.
        case stopped
    }

    /// What an experiment does with a request.
    public enum Assignment: Sendable, Hashable {
        /// In the experiment: shown this alternative, and exposed to it.
        case exposed(String)
        /// Decided (a winner, or stopped): shown this alternative, not exposed.
        case decided(String)
        /// Not in the experiment: shown `default`, not exposed.
        case outside(Exclusion)

        /// The alternative shown.
        public var alternative: String {
            switch self {
            case .exposed(let alternative), .decided(let alternative): alternative
            case .outside: ScreenVariant.defaultAlternative
            }
        }
    }

    /// Why a request is not in an experiment.
    public enum Exclusion: String, Sendable, Hashable {
        /// No `X-Taksi-User`.
        case noUser = "no_user"
        /// Outside the audience (version, platform or language).
        case audience
        /// In the holdout.
        case holdout
        /// Past the rollout share.
        case rollout
        /// In the layer, but in another experiment's range.
        case layer
    }

    public init(name: String, weights: [String: Int]) {
        self.name = name
        self.weights = weights.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public static func == (lhs: Experiment, rhs: Experiment) -> Bool {
        lhs.name == rhs.name && lhs.weights.elementsEqual(rhs.weights, by: { $0 == $1 }) && lhs.audience == rhs.audience
            && lhs.holdout == rhs.holdout && lhs.rollout == rhs.rollout && lhs.layer == rhs.layer && lhs.decision == rhs.decision
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        for (alternative, weight) in weights {
            hasher.combine(alternative)
            hasher.combine(weight)
        }
        hasher.combine(audience)
        hasher.combine(holdout)
        hasher.combine(rollout)
        hasher.combine(layer)
        hasher.combine(decision)
    }

    /// What a request's inputs ask of an experiment.
    public struct Inputs: Sendable, Equatable {
        public var user: String?
        public var version: Version?
        public var platform: String?
        /// The most preferred language range of `Accept-Language`.
        public var language: String?

        public init(user: String? = nil, version: Version? = nil, platform: String? = nil, language: String? = nil) {
            self.user = user
            self.version = version
            self.platform = platform
            self.language = language
        }
    }

    /// What the experiment shows a request and whether it is exposed: a decision first (for
    /// everyone, with or without a user id), then the user id, the audience, the layer, the
    /// holdout and the rollout, then the weights.
    ///
    /// Holdout and rollout share one hash of the user (with the experiment's name and `in`, apart
    /// from the alternative's): the holdout is its first buckets, the rollout the ones after, so
    /// raising the rollout only adds users and never moves one between alternatives.
    public func assignment(for inputs: Inputs) -> Assignment {
        switch decision {
        case .winner(let alternative): return .decided(alternative)
        case .stopped: return .decided(ScreenVariant.defaultAlternative)
        case .running: break
        }
        guard let user = inputs.user, !user.isEmpty else { return .outside(.noUser) }
        guard audience.includes(version: inputs.version, platform: inputs.platform, language: inputs.language) else {
            return .outside(.audience)
        }
        if let layer, !layer.buckets.contains(layer.bucket(forUser: user)) { return .outside(.layer) }
        if holdout > 0 || rollout != nil {
            let share = Int(Self.stableHash("\(name)\u{0}in\u{0}\(user)") % UInt64(Self.bucketCount))
            if share < holdout { return .outside(.holdout) }
            if let rollout, share >= holdout + rollout { return .outside(.rollout) }
        }
        return .exposed(alternative(forUser: user))
    }

    /// Whether an answer depends on the user id: false once decided.
    public var dependsOnUser: Bool { decision == .running }

    /// The request headers an answer depends on, beyond the user id: the audience's.
    public var audienceHeaders: [String] {
        guard decision == .running else { return [] }
        return [
            audience.versions == nil ? nil : "X-Taksi-Version", audience.platforms == nil ? nil : "X-Taksi-Platform",
            audience.locales == nil ? nil : "Accept-Language",
        ].compactMap { $0 }
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
