import TaksiSchema
import Testing

@testable import TaksiScreens

@Suite("Versions and variants")
struct VariantTests {
    func requirement(_ text: String) throws -> VersionRequirement { try VersionRequirement(parsing: text) }
    func version(_ text: String) -> Version { Version(text)! }

    @Test("versions compare segment by segment, missing segments are zero")
    func ordering() {
        #expect(version("1.2") == version("1.2.0"))
        #expect(version("1.10") > version("1.9"))
        #expect(version("2") > version("1.99.99"))
        #expect(Version("1.x") == nil && Version("") == nil && Version("1..2") == nil && Version("-1") == nil)
    }

    @Test(
        "requirements in RubyGems style",
        arguments: [
            ("~> 1.2", ["1.2", "1.2.9", "1.9"], ["1.1.9", "2.0"]),
            ("~> 1.2.3", ["1.2.3", "1.2.99"], ["1.2.2", "1.3"]),
            (">= 1.0, < 2.0", ["1.0", "1.999"], ["0.9", "2.0"]),
            ("= 1.4.2", ["1.4.2", "1.4.2.0"], ["1.4.3"]),
            ("1.4.2", ["1.4.2"], ["1.4"]),
            ("!= 1.3.0", ["1.2", "1.3.1"], ["1.3"]),
            ("> 2", ["2.0.1", "3"], ["2", "1.9"]),
            ("<= 3", ["3.0", "0.1"], ["3.0.1"]),
        ])
    func satisfaction(_ text: String, _ matching: [String], _ other: [String]) throws {
        let parsed = try requirement(text)
        for candidate in matching { #expect(parsed.isSatisfied(by: version(candidate)), "\(text) should match \(candidate)") }
        for candidate in other { #expect(!parsed.isSatisfied(by: version(candidate)), "\(text) should not match \(candidate)") }
    }

    @Test("Semantic Versioning forms: pre-releases order before their release, build metadata is ignored, v is dropped")
    func semanticVersions() {
        #expect(version("v2.1") == version("2.1"))
        #expect(version("2.1.0+45") == version("2.1"))
        #expect(version("2.1.0-beta+exp.sha.5114f85") == version("2.1-beta"))
        // The order Semantic Versioning 2.0 gives as its example, with missing segments as zero.
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0",
            "1.0.1-0", "1.0.1",
        ]
        for (lower, higher) in zip(ordered, ordered.dropFirst()) { #expect(version(lower) < version(higher), "\(lower) < \(higher)") }
        #expect(!(version("1.0-beta") < version("1.0-beta")))
        #expect(version("2.1-beta").description == "2.1-beta")
        for bad in ["2.1-", "2.1+", "2.1-be ta", "2.1-beta..1", "2.1-é", "vv2", "2.1+a+b"] { #expect(Version(bad) == nil, "\(bad)") }
    }

    @Test(
        "requirements with pre-releases",
        arguments: [
            (">= 2.0", ["2.0", "2.1-beta", "3"], ["2.0-rc.1", "1.9"]),
            (">= 2.0-0", ["2.0-alpha", "2.0-rc.1", "2.0"], ["1.9.9"]),
            ("~> 1.2", ["1.2", "1.9.9-beta"], ["2.0-beta", "1.2-beta", "2.0"]),
            ("< 2.0", ["1.9", "2.0-beta"], ["2.0"]),
            ("= 2.1-beta.2", ["2.1.0-beta.2", "2.1-beta.2+9"], ["2.1-beta.3", "2.1"]),
        ])
    func prereleaseRequirements(_ text: String, _ matching: [String], _ other: [String]) throws {
        let parsed = try requirement(text)
        for candidate in matching { #expect(parsed.isSatisfied(by: version(candidate)), "\(text) should match \(candidate)") }
        for candidate in other { #expect(!parsed.isSatisfied(by: version(candidate)), "\(text) should not match \(candidate)") }
    }

    @Test("malformed requirements say why")
    func parseErrors() {
        #expect(throws: VersionRequirement.ParseError.self) { try VersionRequirement(parsing: "=> 1.0") }
        #expect(throws: VersionRequirement.ParseError.self) { try VersionRequirement(parsing: ">= 1.0,") }
        #expect(throws: VersionRequirement.ParseError.self) { try VersionRequirement(parsing: "~> one") }
    }

    @Test("overlap between requirements is found exactly")
    func overlaps() throws {
        func overlap(_ a: String, _ b: String) throws -> Bool {
            !(try requirement(a).versions.intersection(try requirement(b).versions).isEmpty)
        }
        #expect(try overlap("~> 1.0", ">= 1.5, < 3"))
        #expect(try !overlap("~> 1.0", ">= 2.0"))
        #expect(try !overlap("< 2.0", ">= 2.0"))
        #expect(try overlap("<= 2.0", ">= 2.0"))
        #expect(try !overlap("= 1.3", "!= 1.3"))
        #expect(try overlap("!= 1.3", "!= 1.4"))
        #expect(try !overlap("> 2, < 2.0.0", ">= 0"))
    }

    // MARK: Experiments

    let experiment = Experiment(name: "landing-call-to-action", weights: ["default": 50, "compact": 50])

    @Test(
        "10,000 simulated users split within 2 percentage points of the weights",
        arguments: [
            ["default": 50, "compact": 50], ["default": 90, "B": 10], ["A": 1, "B": 1, "C": 2],
        ])
    func proportions(_ weights: [String: Int]) {
        let experiment = Experiment(name: "split-\(weights.count)", weights: weights)
        var counts: [String: Int] = [:]
        for user in 0..<10_000 { counts[experiment.alternative(forUser: "user-\(user)"), default: 0] += 1 }
        let total = Double(weights.values.reduce(0, +))
        for (alternative, weight) in weights {
            let share = Double(counts[alternative] ?? 0) / 10_000
            #expect(abs(share - Double(weight) / total) < 0.02, "\(alternative): \(share)")
        }
    }

    @Test("assignment is a pure function of experiment and user: the same on every run and replica")
    func stability() {
        // Pinned values: if these change, every user of every experiment has been reshuffled.
        #expect(Experiment.stableHash("taksi") == PinnedAssignments.hashOfTaksi)
        let pinned = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"].map { experiment.alternative(forUser: $0) }
        #expect(pinned == PinnedAssignments.landing, "\(pinned)")
        let again = Experiment(name: "landing-call-to-action", weights: ["compact": 50, "default": 50])
        #expect(["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"].map { again.alternative(forUser: $0) } == pinned)
    }

    @Test("changing the weights moves only the users in the buckets that change hands")
    func weightChange() {
        let shifted = Experiment(name: experiment.name, weights: ["default": 40, "compact": 60])
        var moved = 0
        for user in 0..<10_000 {
            let before = experiment.alternative(forUser: "u\(user)")
            let after = shifted.alternative(forUser: "u\(user)")
            if before != after {
                moved += 1
                // Buckets are ordered by alternative name: compact first, so its range grows into default's.
                #expect(before == "default" && after == "compact")
            }
        }
        #expect(abs(Double(moved) / 10_000 - 0.10) < 0.02, "moved \(moved)")
        let renamed = Experiment(name: "landing-call-to-action-2", weights: ["default": 50, "compact": 50])
        let changed = (0..<1_000).filter { experiment.alternative(forUser: "u\($0)") != renamed.alternative(forUser: "u\($0)") }.count
        #expect(changed > 350 && changed < 650, "a new name reshuffles about half: \(changed)")
    }

    // MARK: Selection and validation

    static let files: [String: String] = [
        "old.json": #"{"name": "home", "version": "< 2.0", "components": [{"name": "label_component", "content": {"value": "old"}}]}"#,
        "new.json":
            #"{"name": "home", "version": ">= 2.0", "experiment": {"name": "cards", "weights": {"default": 1, "B": 1}}, "components": [{"name": "label_component", "content": {"value": "new"}}]}"#,
        "new-b.json":
            #"{"name": "home", "version": ">= 2.0", "alternative": "B", "components": [{"name": "label_component", "content": {"value": "new B"}}]}"#,
    ]

    func value(_ screen: ScreenVariant?) -> JSONValue? { screen?.skeleton.components.first?.content["value"] }

    func failure(_ result: Result<ScreenVariant, ScreenVariants.SelectionError>) -> ScreenVariants.SelectionError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    @Test("selection: version range, then explicit alternative, then the experiment, then the default")
    func selection() throws {
        let set = try #require(load(Self.files).screenSet)
        let home = try #require(set.screens["home"])
        func pick(
            _ version: String?, alternative: String? = nil, user: String? = nil
        ) -> Result<ScreenVariant, ScreenVariants.SelectionError> {
            home.select(.init(version: version.flatMap(Version.init), alternative: alternative, user: user))
        }
        #expect(value(try pick("1.5").get()) == "old")
        #expect(value(try pick("2.0").get()) == "new")
        #expect(value(try pick("2.0", alternative: "B").get()) == "new B")
        #expect(try pick("2.3", alternative: "B").get().variantID == "home|>= 2.0|B")
        let experiment = try #require(home.versions.first { $0.experiment != nil }?.experiment)
        let user = (0..<100).map { "user\($0)" }.first { experiment.alternative(forUser: $0) == "B" }!
        #expect(value(try pick("2.0", user: user).get()) == "new B")
        #expect(failure(pick(nil)) == (.versionNotFound(screen: "home", version: nil, requirements: ["< 2.0", ">= 2.0"])))
        // A forced alternative a range lacks gets its default, not a 404 (and not the experiment).
        #expect(value(try pick("1.0", alternative: "C").get()) == "old")
        #expect(value(try pick("2.0", alternative: "C", user: user).get()) == "new")
        #expect(home.isVersioned && home.hasAlternatives && home.hasExperiment)
    }

    @Test("a requirement that matches wins over the screen without one")
    func matchingWins() throws {
        var files = Self.files
        files["any.json"] = #"{"name": "home", "components": [{"name": "label_component", "content": {"value": "any"}}]}"#
        files["old.json"] = nil
        let home = try #require(load(files).screenSet?.screens["home"])
        #expect(value(try home.select(.init(version: Version("2.5"))).get()) == "new")
        #expect(value(try home.select(.init(version: Version("1.0"))).get()) == "any")
        #expect(value(try home.select(.init()).get()) == "any")
    }

    @Test("two requirements that can match one version are an error naming both files")
    func overlapIsError() {
        var files = Self.files
        files["middle.json"] = #"{"name": "home", "version": "~> 1.5", "components": []}"#
        let error = onlyError(load(files))
        #expect(error?.code == .overlappingVersions)
        #expect(
            error?.description.contains("Screens/old.json") == true && error?.description.contains("Screens/middle.json") == true,
            "\(String(describing: error))")
        #expect(error?.message.contains("both match 1.5") == true, "\(String(describing: error))")
    }

    @Test("alternatives need a default, experiments name existing alternatives")
    func alternativeRules() {
        let noDefault = load(["b.json": #"{"name": "home", "alternative": "B", "components": []}"#])
        #expect(onlyError(noDefault)?.code == .missingDefaultAlternative)
        var files = Self.files
        files["new.json"] = files["new.json"]!.replacingOccurrences(of: #""B": 1"#, with: #""b": 1"#)
        let typo = onlyError(load(files))
        #expect(
            typo?.message.contains(
                #"weighs alternative "b", which this screen does not have; its alternatives are B, default (did you mean "B"?)"#) == true,
            "\(String(describing: typo))")
        files = Self.files
        files["new-b.json"] = files["new-b.json"]!.replacingOccurrences(
            of: #""alternative": "B","#, with: #""alternative": "B", "experiment": {"name": "x", "weights": {"B": 1}},"#)
        #expect(onlyError(load(files))?.message.contains("declare the experiment in the default alternative's file") == true)
        // A default that has errors of its own is not also reported missing.
        let brokenDefault = load([
            "a.json": #"{"name": "home", "components": [{"name": "nope", "content": {}}]}"#,
            "b.json": #"{"name": "home", "alternative": "B", "components": []}"#,
        ])
        #expect(onlyError(brokenDefault)?.code == .unknownComponent)
    }

    @Test("a component newer than the app versions a screen serves is rejected at load")
    func componentSince() {
        let card = #"{"name": "card", "since": "2.3", "fields": [{"name": "title", "type": "string", "required": true}]}"#
        let cardUse = #""components": [{"name": "card", "content": {"title": "x"}}]"#
        let unversioned = onlyError(load(["components/card.json": card, "a.json": "{\"name\": \"a\", \(cardUse)}"]))
        #expect(unversioned?.code == .componentTooNew)
        #expect(
            unversioned?.message.contains("card is only known to apps since 2.3, but it has no version requirement") == true,
            "\(String(describing: unversioned))")
        let tooWide = onlyError(load(["components/card.json": card, "a.json": "{\"name\": \"a\", \"version\": \"~> 2.0\", \(cardUse)}"]))
        #expect(tooWide?.message.contains(#"its version requirement "~> 2.0" admits 2.0"#) == true, "\(String(describing: tooWide))")
        let inCollection = onlyError(
            load([
                "components/card.json": card,
                "a.json":
                    #"{"name": "a", "version": ">= 2.2", "components": [{"name": "collection_component", "content": {"component_name": "card", "values": []}}]}"#,
            ]))
        #expect(inCollection?.path?.description == "components[0].content.component_name")
        let fine = load(["components/card.json": card, "a.json": "{\"name\": \"a\", \"version\": \">= 2.3\", \(cardUse)}"])
        #expect(fine.screenSet != nil, "\(fine.diagnostics.report)")
    }
}

/// The assignments of eight users in the example experiment, computed once and pinned.
enum PinnedAssignments {
    // Computed by an independent reimplementation of the hash (FNV-1a 64 + SplitMix64 finaliser).
    static let landing = ["compact", "default", "default", "default", "compact", "compact", "compact", "compact"]
    static let hashOfTaksi: UInt64 = 16_677_028_388_282_348_714
}
