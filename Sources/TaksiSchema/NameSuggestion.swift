/// Finds the known name an author most likely meant, for "did you mean" hints.
public enum NameSuggestion {
    /// The candidate closest to `name` by edit distance, when it is close enough to be a typo
    /// (at most a third of the name's length, and at least one edit allowed).
    ///
    /// Each candidate costs about its length times that bound, and one whose length alone puts it
    /// past the bound (or past the best found so far) costs a count of its characters: a caller
    /// asking for many names among many candidates still does work per pair, so it bounds how
    /// many names it asks for (see the string tables' check).
    public static func closest<Candidates: Sequence<String>>(to name: String, among candidates: Candidates) -> String? {
        let target = Array(name.lowercased().unicodeScalars)
        let limit = max(1, name.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            // Only a candidate closer than the best so far can change the answer.
            let bound = min(limit, (best?.distance ?? .max) - 1)
            if bound < 0 { break }
            let other = Array(candidate.lowercased().unicodeScalars)
            guard abs(other.count - target.count) <= bound, let distance = editDistance(target, other, atMost: bound) else { continue }
            best = (candidate, distance)
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
        let (a, b) = (Array(lhs.unicodeScalars), Array(rhs.unicodeScalars))
        return editDistance(a, b, atMost: max(a.count, b.count)) ?? max(a.count, b.count)
    }

    /// The edit distance of `a` and `b` when it is at most `bound`, else nil: only cells within
    /// `bound` of the diagonal are filled (a path leaving that band costs more), and the work stops
    /// at the first row whose every cell is past `bound`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost bound: Int) -> Int? {
        guard abs(a.count - b.count) <= bound else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let outside = bound + 1
        // Rows i - 2, i - 1 and i of the table, each b.count + 1 wide.
        var older = [Int](repeating: outside, count: b.count + 1)
        var previous = (0...b.count).map { min($0, outside) }
        var current = [Int](repeating: outside, count: b.count + 1)
        for i in 1...a.count {
            let low = max(1, i - bound)
            let high = min(b.count, i + bound)
            current = [Int](repeating: outside, count: b.count + 1)
            current[0] = min(i, outside)
            var rowMinimum = current[0]
            if low <= high {
                for j in low...high {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    var cell = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { cell = min(cell, older[j - 2] + 1) }
                    current[j] = min(cell, outside)
                    rowMinimum = min(rowMinimum, current[j])
                }
            }
            if rowMinimum > bound { return nil }
            (older, previous) = (previous, current)
        }
        let distance = previous[b.count]
        return distance <= bound ? distance : nil
    }
}
