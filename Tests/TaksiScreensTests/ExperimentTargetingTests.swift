import TaksiSchema
import Testing

@testable import TaksiScreens

/// Who is in an experiment (audience, holdout, rollout, layer) and how one is decided (winner,
/// stopped): read from the screen file, checked, and applied by selection.
@Suite("Experiments: who is in, and deciding")
struct ExperimentTargetingTests {
    let users = (0..<10_000).map { "user-\($0)" }

    func experiment(_ configure: (inout Experiment) -> Void = { _ in }) -> Experiment {
        var experiment = Experiment(name: "checkout-button", weights: ["default": 50, "B": 50])
        configure(&experiment)
        return experiment
    }

    @Test("a holdout never sees an alternative; the rollout is the share after it, and raising it only adds users")
    func holdoutAndRollout() {
        let held = experiment {
            $0.holdout = 500
            $0.rollout = 2_000
        }
        var counts: [String: Int] = [:]
        for user in users {
            switch held.assignment(for: .init(user: user)) {
            case .exposed(let alternative): counts[alternative, default: 0] += 1
            case .outside(let why): counts[why.rawValue, default: 0] += 1
            case .decided: Issue.record("a running experiment decided \(user)")
            }
        }
        #expect(abs(Double(counts["holdout"] ?? 0) / 10_000 - 0.05) < 0.01, "\(counts)")
        #expect(abs(Double(counts["rollout"] ?? 0) / 10_000 - 0.75) < 0.02, "\(counts)")
        #expect(abs(Double((counts["default"] ?? 0) + (counts["B"] ?? 0)) / 10_000 - 0.20) < 0.02, "\(counts)")
        let wider = experiment {
            $0.holdout = 500
            $0.rollout = 5_000
        }
        let everyone = experiment()
        for user in users {
            let before = held.assignment(for: .init(user: user))
            let after = wider.assignment(for: .init(user: user))
            // In before, in after with the same alternative; held out before, held out after.
            if case .exposed = before { #expect(after == before, "\(user)") }
            if before == .outside(.holdout) { #expect(after == .outside(.holdout)) }
            // The alternative of a user in is the one the experiment without limits gives.
            if case .exposed(let alternative) = after { #expect(alternative == everyone.alternative(forUser: user)) }
        }
    }

    @Test("the audience: versions, platforms and the most preferred language; a request without one is outside")
    func audience() throws {
        let targeted = experiment {
            $0.audience = .init(versions: try? VersionRequirement(parsing: ">= 2.0"), platforms: ["ios"], locales: ["de", "pt-BR"])
        }
        let user = "someone"
        func assignment(_ version: String?, _ platform: String?, _ language: String?) -> Experiment.Assignment {
            targeted.assignment(for: .init(user: user, version: version.flatMap(Version.init), platform: platform, language: language))
        }
        #expect(assignment("2.1", "ios", "de") == .exposed(targeted.alternative(forUser: user)))
        #expect(assignment("2.1", "iOS", "de-CH") != .outside(.audience), "platforms compare in lower case; de-CH is in de")
        #expect(assignment("2.1", "ios", "pt") != .outside(.audience), "pt is in pt-BR")
        #expect(assignment("1.9", "ios", "de") == .outside(.audience))
        #expect(assignment(nil, "ios", "de") == .outside(.audience))
        #expect(assignment("2.1", "android", "de") == .outside(.audience))
        #expect(assignment("2.1", nil, "de") == .outside(.audience))
        #expect(assignment("2.1", "ios", "fr") == .outside(.audience))
        #expect(assignment("2.1", "ios", nil) == .outside(.audience))
        #expect(targeted.assignment(for: .init(user: nil, version: Version("2.1"), platform: "ios", language: "de")) == .outside(.noUser))
        #expect(Localization.languageRanges("fr;q=0.5, de-CH, en;q=0") == ["de-CH", "fr"])
    }

    @Test("two experiments in one layer with ranges that do not overlap never share a user")
    func layers() {
        let first = experiment {
            $0.name = "first"
            $0.layer = .init(name: "checkout", buckets: 0..<3_000)
        }
        let second = experiment {
            $0.name = "second"
            $0.layer = .init(name: "checkout", buckets: 3_000..<10_000)
        }
        var inFirst = 0
        for user in users {
            let a = first.assignment(for: .init(user: user))
            let b = second.assignment(for: .init(user: user))
            if case .exposed = a { inFirst += 1 }
            // Exactly one of them has the user.
            #expect((a == .outside(.layer)) != (b == .outside(.layer)), "\(user): \(a), \(b)")
        }
        #expect(abs(Double(inFirst) / 10_000 - 0.3) < 0.02, "\(inFirst)")
    }

    @Test("a winner is everyone's and a stopped experiment gives default, with or without a user id; neither exposes anyone")
    func decisions() {
        let won = experiment { $0.decision = .winner("B") }
        let stopped = experiment { $0.decision = .stopped }
        for user in users.prefix(1_000) + [""] {
            #expect(won.assignment(for: .init(user: user)) == .decided("B"))
            #expect(stopped.assignment(for: .init(user: user)) == .decided("default"))
        }
        #expect(!won.dependsOnUser && won.audienceHeaders.isEmpty)
    }

    static let defaultFile = "landing.yaml"

    func files(experiment: String) -> [String: String] {
        [
            Self.defaultFile: """
            name: landing
            experiment:
            \(experiment.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n"))
            components:
              - name: label_component
                content: {value: default}
            """,
            "landing-b.yaml": """
            name: landing
            alternative: B
            components:
              - name: label_component
                content: {value: B}
            """,
        ]
    }

    @Test("the screen file declares who is in and the decision; selection applies them and names the exposure")
    func readAndSelected() throws {
        let load = load(
            files(
                experiment: """
                    name: checkout-button
                    weights: {default: 50, B: 50}
                    audience: {versions: ">= 2.0", platforms: [ios, android], locales: [de]}
                    holdout: 5
                    rollout: 20.5
                    layer: {name: checkout, from: 10, to: 60}
                    """))
        let screen = try #require(load.screenSet?.screens["landing"], "\(load.diagnostics)")
        let declared = try #require(screen.versions.first?.experiment)
        #expect(declared.holdout == 500 && declared.rollout == 2_050 && declared.layer == .init(name: "checkout", buckets: 1_000..<6_000))
        #expect(declared.audience.platforms == ["ios", "android"] && declared.audience.locales == ["de"])
        #expect(screen.experimentHeaders == ["X-Taksi-User", "X-Taksi-Version", "X-Taksi-Platform", "Accept-Language"])
        var exposed = 0
        for user in users.prefix(2_000) {
            let request = ScreenVariants.Request(version: Version("2.0"), user: user, platform: "ios", language: "de")
            let selection = try screen.selection(request).get()
            #expect(
                selection.assignment
                    == declared.assignment(for: .init(user: user, version: Version("2.0"), platform: "ios", language: "de")))
            if let exposure = selection.exposure {
                exposed += 1
                #expect(exposure.alternative == selection.variant.alternative && exposure.experiment.name == "checkout-button")
            } else {
                #expect(selection.variant.alternative == "default")
            }
            // A forced alternative is no exposure, nor a request outside the audience.
            #expect(
                try screen.selection(.init(version: Version("2.0"), alternative: "B", user: user, platform: "ios", language: "de")).get()
                    .exposure == nil)
            #expect(try screen.selection(.init(version: Version("2.0"), user: user, platform: "web", language: "de")).get().exposure == nil)
        }
        #expect(exposed > 0 && exposed < 400, "about 20.5% of the 50% of the layer: \(exposed)")
    }

    @Test("a winner and a stop are read from the file; a decided experiment no longer varies by user")
    func decidedInFile() throws {
        let won = try #require(load(files(experiment: "name: x\nweights: {default: 1, B: 1}\nwinner: B")).screenSet?.screens["landing"])
        #expect(try won.select(.init()).get().alternative == "B")
        #expect(try won.select(.init(alternative: "default")).get().alternative == "default", "QA can still force one")
        #expect(won.experimentHeaders.isEmpty)
        let stopped = try #require(
            load(files(experiment: "name: x\nweights: {default: 1, B: 1}\nstopped: true")).screenSet?.screens["landing"])
        #expect(try stopped.select(.init(user: "anyone")).get().alternative == "default")
    }

    @Test(
        "what is wrong in who is in or in a decision is an error naming the place and the fix",
        arguments: [
            ("winner: C", "experiment.winner", "names \"C\" its winner, which is not an alternative of this screen"),
            ("winner: B\nstopped: true", "experiment.stopped", "either stopped"),
            ("holdout: 101", "experiment.holdout", "percentage of the audience from 0 to 100"),
            ("rollout: 0.001", "experiment.rollout", "in steps of 0.01"),
            ("holdout: 60\nrollout: 50", "experiment.rollout", "the rollout can be at most 40%"),
            ("audience: {platforms: [iOS]}", "experiment.audience.platforms[0]", "lower-case name"),
            ("audience: {platforms: []}", "experiment.audience.platforms", "non-empty list"),
            ("audience: {locales: [\"en US\"]}", "experiment.audience.locales[0]", "language tag"),
            ("audience: {versions: \">= two\"}", "experiment.audience.versions", "is not a version requirement"),
            ("audience: {country: [de]}", "experiment.audience.country", "unknown key \"country\""),
            ("layer: {name: checkout, from: 50, to: 50}", "experiment.layer.to", "\"to\" must be above \"from\""),
            ("stoped: true", "experiment.stoped", "did you mean \"stopped\""),
        ])
    func invalid(_ addition: String, _ path: String, _ message: String) throws {
        let error = onlyError(load(files(experiment: "name: x\nweights: {default: 1, B: 1}\n" + addition)))
        #expect(error?.path?.description == path, "\(String(describing: error))")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
        #expect(error?.file == "Screens/" + Self.defaultFile, "\(String(describing: error))")
    }

    @Test("weights that do not add up to 100 get a warning naming each alternative's share; 100 gets none")
    func weightsNot100() throws {
        let uneven = load(files(experiment: "name: x\nweights: {default: 60, B: 60}"))
        #expect(uneven.screenSet != nil, "a warning, not an error: \(uneven.diagnostics.report)")
        let warnings = uneven.diagnostics.filter { $0.code == .experimentWeights }
        #expect(warnings.count == 1, "\(uneven.diagnostics.report)")
        #expect(warnings.first?.severity == .warning)
        #expect(warnings.first?.path?.description == "experiment.weights")
        #expect(
            warnings.first?.message
                == "the weights add up to 120, not 100, so each alternative gets its weight's share of 120: default 50%, B 50%; make them add up to 100 to read them as percentages",
            "\(String(describing: warnings.first))")
        let thirds = load(files(experiment: "name: x\nweights: {default: 1, B: 2}"))
        #expect(thirds.diagnostics.first { $0.code == .experimentWeights }?.message.contains("default 33.3%, B 66.7%") == true)
        let even = load(files(experiment: "name: x\nweights: {default: 70, B: 30}"))
        #expect(!even.diagnostics.contains { $0.code == .experimentWeights }, "\(even.diagnostics.report)")
    }

    @Test("experiments whose ranges of one layer overlap are an error naming both")
    func layerOverlap() {
        var set = files(experiment: "name: first\nweights: {default: 1, B: 1}\nlayer: {name: checkout, from: 0, to: 50}")
        set["other.yaml"] = """
            name: other
            experiment: {name: second, weights: {default: 1}, layer: {name: checkout, from: 40, to: 100}}
            components: []
            """
        let error = onlyError(load(set))
        #expect(error?.message.contains("overlaps the 0% to 50% of experiment \"first\"") == true, "\(String(describing: error))")
        set["other.yaml"] = set["other.yaml"]?.replacingOccurrences(of: "from: 40", with: "from: 50")
        #expect(load(set).screenSet != nil, "\(load(set).diagnostics)")
    }
}
