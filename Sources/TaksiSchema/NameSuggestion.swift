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

    /// Edit distance over Unicode scalars, counting a swap of two neighbours as one edit
    /// (optimal string alignment), since `titel` for `title` is the commonest typo.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.unicodeScalars)
        let b = Array(rhs.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
