import TaksiSchema

/// Groups compiled screen files into each screen's variants and checks that the choice between
/// them is always unambiguous: no two files for the same name, version range and alternative; no
/// two version ranges that can both match one version; a default alternative in every range; an
/// experiment only over alternatives that exist.
enum VariantGrouping {
    /// A compiled screen file: the screen, the file's tree and the file.
    struct Entry {
        var screen: ScreenVariant
        var root: JSONNode
        var file: SourceFile
    }

    /// - Parameter failed: variants whose files have errors (reported there), so they are not
    ///   reported missing as well.
    static func group(
        _ compiled: [Entry], failed: Set<ScreenSetBuilder.AlternativeKey> = []
    ) -> (screens: [String: ScreenVariants], diagnostics: [Diagnostic]) {
        var grouping = Grouping(failed: failed)
        var screens: [String: ScreenVariants] = [:]
        let byName = Dictionary(grouping: compiled, by: \.screen.name)
        for name in byName.keys.sorted() {
            // File order (sorted paths) decides which of two clashing files is reported.
            let ranges = Self.ranges(of: byName[name] ?? [])
            grouping.checkOverlaps(ranges)
            var versions = ranges.compactMap { grouping.variantRange(name, range: $0) }
            // Versioned ranges from the oldest versions up (unbounded below first), the unversioned one last.
            func rank(_ screen: VariantRange) -> (Int, Version) {
                guard let requirement = screen.requirement else { return (2, Version([0])) }
                guard let lower = requirement.versions.lowestBound?.version else { return (0, Version([0])) }
                return (1, lower)
            }
            versions.sort { rank($0) < rank($1) }
            screens[name] = ScreenVariants(name: name, versions: versions)
        }
        grouping.checkLayers(compiled)
        return (screens, grouping.diagnostics)
    }

    /// The files of one version range of a screen.
    private struct Range {
        var requirement: VersionRequirement?
        var entries: [Entry]
    }

    /// A screen's files by version requirement, in file order.
    private static func ranges(of entries: [Entry]) -> [Range] {
        var ranges: [Range] = []
        for entry in entries {
            if let index = ranges.firstIndex(where: { $0.requirement?.description == entry.screen.requirement?.description }) {
                ranges[index].entries.append(entry)
            } else {
                ranges.append(Range(requirement: entry.screen.requirement, entries: [entry]))
            }
        }
        return ranges
    }

    /// The checks of one grouping, and what they found.
    private struct Grouping {
        let failed: Set<ScreenSetBuilder.AlternativeKey>
        var diagnostics: [Diagnostic] = []

        mutating func report(_ code: Diagnostic.Code, _ entry: Entry, key: String, _ message: String) {
            let node = entry.root[key] ?? entry.root["name"] ?? entry.root
            diagnostics.append(
                Diagnostic(
                    code: code, file: entry.file.path, location: entry.file.location(ofOffset: node.offset),
                    path: JSONPath.root.appending(key), message: message
                )
            )
        }

        /// No two version ranges of a screen may both match one version.
        mutating func checkOverlaps(_ ranges: [Range]) {
            for (first, second) in VariantGrouping.pairs(ranges.indices) {
                guard let a = ranges[first].requirement, let b = ranges[second].requirement else { continue }
                guard let shared = a.versions.intersection(b.versions).example else { continue }
                let other = ranges[first].entries[0]
                report(
                    .overlappingVersions, ranges[second].entries[0], key: "version",
                    "version requirement \"\(b)\" overlaps \"\(a)\" of \(other.file.path) (both match \(shared)); make the ranges disjoint so every app version gets one variant"
                )
            }
        }

        /// One version range's alternatives: each once, a default among them, and an experiment
        /// only over alternatives that exist. Nil when the range has no default.
        mutating func variantRange(_ name: String, range: Range) -> VariantRange? {
            var alternatives: [String: ScreenVariant] = [:]
            var files: [String: String] = [:]
            for entry in range.entries {
                let alternative = entry.screen.alternative
                if let other = files[alternative] {
                    let what = [
                        range.requirement.map { "version \"\($0)\"" },
                        alternative == ScreenVariant.defaultAlternative ? nil : "alternative \"\(alternative)\"",
                    ]
                    .compactMap { $0 }.joined(separator: " and ")
                    report(
                        .duplicateScreen, entry, key: "name",
                        "screen \"\(name)\"\(what.isEmpty ? "" : " with \(what)") is also defined in \(other); rename one of them or give it another \"version\" or \"alternative\""
                    )
                    continue
                }
                files[alternative] = entry.file.path
                alternatives[alternative] = entry.screen
            }
            guard let defaultScreen = alternatives[ScreenVariant.defaultAlternative] else {
                // A default whose own file has errors is reported there, not here as well.
                if failed.contains(.init(name: name, alternative: ScreenVariant.defaultAlternative)) { return nil }
                report(
                    .missingDefaultAlternative, range.entries[0], key: "alternative",
                    "screen \"\(name)\"\(range.requirement.map { " for version \"\($0)\"" } ?? "") has alternatives (\(alternatives.keys.sorted().joined(separator: ", "))) but no default; add a file without \"alternative\" for clients that ask for none"
                )
                return nil
            }
            if let experiment = defaultScreen.experiment {
                let entry = range.entries.first { $0.screen.alternative == ScreenVariant.defaultAlternative } ?? range.entries[0]
                for (alternative, _) in experiment.weights
                where alternatives[alternative] == nil && !failed.contains(.init(name: name, alternative: alternative)) {
                    report(
                        .invalidExperiment, entry, key: "experiment",
                        "experiment \"\(experiment.name)\" weighs alternative \"\(alternative)\", which this screen does not have; its alternatives are \(alternatives.keys.sorted().joined(separator: ", "))"
                            + NameSuggestion.hint(for: alternative, among: alternatives.keys)
                    )
                }
            }
            if let experiment = defaultScreen.experiment, case .winner(let winner) = experiment.decision, alternatives[winner] == nil,
                !failed.contains(.init(name: name, alternative: winner))
            {
                let entry = range.entries.first { $0.screen.alternative == ScreenVariant.defaultAlternative } ?? range.entries[0]
                let node = entry.root["experiment"]?["winner"] ?? entry.root
                diagnostics.append(
                    Diagnostic(
                        code: .invalidExperiment, file: entry.file.path, location: entry.file.location(ofOffset: node.offset),
                        path: JSONPath.root.appending("experiment").appending("winner"),
                        message:
                            "experiment \"\(experiment.name)\" names \"\(winner)\" its winner, which is not an alternative of this screen; its alternatives are \(alternatives.keys.sorted().joined(separator: ", "))"
                            + NameSuggestion.hint(for: winner, among: alternatives.keys)
                    )
                )
            }
            return VariantRange(requirement: range.requirement, alternatives: alternatives, experiment: defaultScreen.experiment)
        }

        /// Experiments that share a layer own ranges of it that do not overlap (one experiment
        /// may be declared in several files, for several version ranges, with the same range).
        mutating func checkLayers(_ compiled: [Entry]) {
            var owners: [String: [(experiment: String, buckets: Swift.Range<Int>, entry: Entry)]] = [:]
            for entry in compiled {
                guard let experiment = entry.screen.experiment, let layer = experiment.layer else { continue }
                for owner in owners[layer.name] ?? [] where owner.buckets.overlaps(layer.buckets) {
                    guard owner.experiment != experiment.name || owner.buckets != layer.buckets else { continue }
                    let node = entry.root["experiment"]?["layer"] ?? entry.root
                    func range(_ buckets: Swift.Range<Int>) -> String {
                        "\(ScreenCompiler.percentage(buckets.lowerBound)) to \(ScreenCompiler.percentage(buckets.upperBound))"
                    }
                    diagnostics.append(
                        Diagnostic(
                            code: .invalidExperiment, file: entry.file.path, location: entry.file.location(ofOffset: node.offset),
                            path: JSONPath.root.appending("experiment").appending("layer"),
                            message: owner.experiment == experiment.name
                                ? "experiment \"\(experiment.name)\" takes \(range(layer.buckets)) of layer \"\(layer.name)\" here and \(range(owner.buckets)) in \(owner.entry.file.path); give it one range"
                                : "experiment \"\(experiment.name)\" takes \(range(layer.buckets)) of layer \"\(layer.name)\", which overlaps the \(range(owner.buckets)) of experiment \"\(owner.experiment)\" in \(owner.entry.file.path); a layer's experiments never share a user, so give them ranges that do not overlap"
                        )
                    )
                }
                owners[layer.name, default: []].append((experiment.name, layer.buckets, entry))
            }
        }
    }

    fileprivate static func pairs(_ indices: Swift.Range<Int>) -> [(Int, Int)] {
        indices.flatMap { first in indices.filter { $0 > first }.map { (first, $0) } }
    }
}
