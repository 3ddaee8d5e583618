/// Finds the known name an author most likely meant, for "did you mean" hints.
public enum NameSuggestion {
    /// The candidate closest to `name` by edit distance, when it is close enough to be a typo
    /// (at most a third of the name's length, and at least one edit allowed).
    public static func closest<Candidates: Sequence<String>>(to name: String, among candidates: Candidates) -> String? {
        let limit = max(1, name.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let distance = editDistance(name.lowercased(), candidate.lowercased())
            if distance <= limit, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// ` (did you mean "x"?)`, or nothing when no candidate is close.
    public static func hint<Candidates: Sequence<String>>(for name: String, among candidates: Candidates) -> String {
        guard let match = closest(to: name, among: candidates) else { return "" }
        return " (did you mean \"\(match)\"?)"
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.unicodeScalars)
        let b = Array(rhs.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
