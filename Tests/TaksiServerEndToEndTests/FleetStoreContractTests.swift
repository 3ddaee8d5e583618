import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import TaksiPostgres
import TaksiServer
import TaksiTestSupport
import Testing

/// What ``FleetStore`` promises, checked against each store that keeps it: ``MemoryFleetStore``
/// (one process) and PostgreSQL's (the fleet). One test per concern, run against both; a store
/// that passes them answers the server's code as the other does. Times are made to have passed
/// with negative durations (a lease that ran out a second ago), so no test waits.
@Suite("The fleet's store: one contract, in memory and in PostgreSQL")
struct FleetStoreContractTests {
    enum Kind: String, CustomTestStringConvertible, Sendable {
        case memory, postgres
        var testDescription: String { rawValue }
    }

    /// Memory always; PostgreSQL where it is installed (and always in CI, which installs it).
    static let kinds: [Kind] = PostgresServer.isAvailable ? [.memory, .postgres] : [.memory]

    /// Runs `body` with a new, empty store of `kind`, running until it returns.
    static func withStore(_ kind: Kind, _ body: (any FleetStore) async throws -> Void) async throws {
        switch kind {
        case .memory:
            try await body(MemoryFleetStore(window: .seconds(3600)))
        case .postgres:
            let database = try PostgresServer()
            defer { database.remove() }
            try await PublishedScreensTests.withStore(database) { try await body($0) }
        }
    }

    static func answer(_ text: String) -> SubmitAnswer {
        SubmitAnswer(status: .created, headers: [("Content-Type", "application/json"), ("X-Id", text)], body: Array(text.utf8))
    }

    static func claim(
        _ store: any FleetStore, _ key: String, _ request: String, lease: Duration = .seconds(60), window: Duration = .seconds(3600)
    ) async throws -> SubmitClaim {
        try await store.claimSubmit(key: key, fingerprint: Array(request.utf8), lease: lease, window: window)
    }

    @Test(
        "a key is claimed once; its answer is replayed to the same request and refused to another; a forgotten claim, one whose lease ran out and an answer past the window are claimed again",
        arguments: kinds)
    func submits(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            guard case .claimed(let token) = try await Self.claim(store, "K-1", "a") else { throw Failure("the first claim wins") }
            guard case .running = try await Self.claim(store, "K-1", "a") else { throw Failure("a claim not answered yet is running") }
            guard case .mismatch = try await Self.claim(store, "K-1", "b") else { throw Failure("another request is a mismatch") }
            #expect(try await store.finishSubmit(key: "K-1", token: UUID(), answer: Self.answer("1")) == false, "another claim's token")
            #expect(try await store.finishSubmit(key: "K-1", token: token, answer: Self.answer("1")))
            #expect(try await store.finishSubmit(key: "K-1", token: token, answer: Self.answer("1")), "recorded again: still this claim's")
            guard case .answered(let answer) = try await Self.claim(store, "K-1", "a") else { throw Failure("the answer is replayed") }
            #expect(answer.status == .created && answer.body == Array("1".utf8))
            #expect(answer.headers.map { "\($0.0): \($0.1)" } == ["Content-Type: application/json", "X-Id: 1"])
            guard case .mismatch = try await Self.claim(store, "K-1", "b") else { throw Failure("an answered key refuses another request") }

            // Forgotten (an answer that is not kept): claimed again.
            guard case .claimed(let forgotten) = try await Self.claim(store, "K-2", "a") else { throw Failure("claimed") }
            #expect(try await store.finishSubmit(key: "K-2", token: forgotten, answer: nil))
            guard case .claimed = try await Self.claim(store, "K-2", "a") else { throw Failure("a forgotten claim is claimed again") }

            // A lease that ran out (its replica died mid-submit): taken over by the same request only.
            guard case .claimed(let dead) = try await Self.claim(store, "K-3", "a", lease: .seconds(-1)) else { throw Failure("claimed") }
            guard case .mismatch = try await Self.claim(store, "K-3", "b") else { throw Failure("another request does not take it over") }
            guard case .claimed(let taken) = try await Self.claim(store, "K-3", "a") else {
                throw Failure("the same request takes it over")
            }
            #expect(taken != dead)
            #expect(try await store.finishSubmit(key: "K-3", token: dead, answer: Self.answer("3")) == false, "no longer the dead one's")

            // An answer past the window: any request claims the key anew.
            guard case .claimed(let old) = try await Self.claim(store, "K-4", "a") else { throw Failure("claimed") }
            #expect(try await store.finishSubmit(key: "K-4", token: old, answer: Self.answer("4")))
            guard case .claimed = try await Self.claim(store, "K-4", "b", window: .seconds(-1)) else {
                throw Failure("an answer past the window is claimed anew")
            }
        }
    }

    static func bundle(_ title: String) -> ScreenBundle {
        ScreenBundle(files: ["home.yaml": Array("name: home\nentry: true\ncomponents: []\n# \(title)\n".utf8)])
    }

    /// A name prefix no bundle of `names` has.
    static func unknownPrefix(_ names: [String]) -> String {
        let digit = "0123456789abcdef".first { digit in !names.contains { $0.hasPrefix(String(digit)) } }
        return String(digit ?? "0") + "0000000000000"
    }

    @Test(
        "bundles are named by their content; publishing the current one records nothing; a revision finds its latest bundle; rollbacks to the one before or by name; history newest first",
        arguments: kinds)
    func releases(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            #expect(try await store.currentRelease() == nil)
            #expect(try await store.history(limit: 10).isEmpty)
            await #expect(throws: (any Error).self) { try await store.rollback(to: nil, by: "bob") }

            let (a, b) = (Self.bundle("a"), Self.bundle("b"))
            let first = try await store.publish(a, screens: 2, revisions: ["r1", "r2"], by: "ada")
            let nameA = SHA256.hash(data: a.encoded).map { String(format: "%02x", $0) }.joined()
            #expect(first.isNew)
            #expect(first.release.number == 1 && first.release.bundle == nameA && first.release.kind == "publish")
            #expect(first.release.by == "ada" && first.release.screens == 2 && first.release.bytes == a.encoded.count)
            let again = try await store.publish(a, screens: 2, revisions: ["r1"], by: "ada")
            #expect(!again.isNew && again.release.number == 1, "the current bundle published again is no release")
            await #expect(throws: (any Error).self, "one bundle: nothing to roll back to") { try await store.rollback(to: nil, by: "bob") }

            let second = try await store.publish(b, screens: 1, revisions: ["r2", "r3"], by: "ada")
            let nameB = second.release.bundle
            #expect(second.isNew && second.release.number == 2 && nameB != nameA)
            #expect(try await store.currentRelease() == second.release)
            #expect(try await store.bundle(holdingRevision: "r1") == nameA)
            #expect(try await store.bundle(holdingRevision: "r2") == nameB, "the latest release holding it")
            #expect(try await store.bundle(holdingRevision: "r9") == nil)

            let found = try #require(try await store.bundle(named: String(nameA.prefix(12)).uppercased()))
            #expect(found.name == nameA && found.bundle == a)
            #expect(try await store.bundle(named: Self.unknownPrefix([nameA, nameB])) == nil)
            await #expect(throws: (any Error).self, "a prefix both names have") { try await store.bundle(named: "") }

            let back = try await store.rollback(to: nil, by: "bob")
            #expect(back.number == 3 && back.bundle == nameA && back.kind == "rollback" && back.by == "bob")
            #expect(try await store.currentRelease() == back)
            #expect(try await store.bundle(holdingRevision: "r2") == nameA, "released again last")
            await #expect(throws: (any Error).self, "already current") { try await store.rollback(to: String(nameA.prefix(8)), by: "bob") }
            await #expect(throws: (any Error).self, "no such bundle") {
                try await store.rollback(to: Self.unknownPrefix([nameA, nameB]), by: "bob")
            }
            let forward = try await store.rollback(to: String(nameB.prefix(8)), by: "cy")
            #expect(forward.number == 4 && forward.bundle == nameB)
            #expect(try await store.history(limit: 2).map(\.number) == [4, 3])
            #expect(try await store.history(limit: 10).map(\.number) == [4, 3, 2, 1])
        }
    }

    @Test("a listener is woken when it starts listening and on every release", arguments: kinds)
    func listening(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            let wakes = NIOLockedValueBox(0)
            let listener = Task { await store.listenForReleases { wakes.withLockedValue { $0 += 1 } } }
            defer { listener.cancel() }
            #expect(await eventually { wakes.withLockedValue { $0 } >= 1 })
            let before = wakes.withLockedValue { $0 }
            _ = try await store.publish(Self.bundle("a"), screens: 1, revisions: [], by: "ada")
            #expect(await eventually { wakes.withLockedValue { $0 } > before }, "a publish wakes it")
            let published = wakes.withLockedValue { $0 }
            _ = try await store.publish(Self.bundle("b"), screens: 1, revisions: [], by: "ada")
            _ = try await store.rollback(to: nil, by: "ada")
            #expect(await eventually { wakes.withLockedValue { $0 } >= published + 2 }, "a publish and a rollback wake it")
        }
    }

    @Test("replicas are listed by name with what they last reported, seen when the store took the report", arguments: kinds)
    func replicas(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            let long = Date(timeIntervalSince1970: 1_000_000_000)
            try await store.report(ReplicaReport(replica: "b", bundle: "x", since: long, refusedBundle: nil, refusal: nil, seen: long))
            try await store.report(
                ReplicaReport(replica: "a", bundle: nil, since: nil, refusedBundle: "y", refusal: "it did not load", seen: long))
            var live = try await store.replicas(seenWithin: .seconds(60))
            #expect(live.map(\.replica) == ["a", "b"])
            #expect(live.allSatisfy { $0.seen > long }, "seen is the store's time, not the report's")
            #expect(live[0].bundle == nil && live[0].refusedBundle == "y" && live[0].refusal == "it did not load")
            #expect(live[1].bundle == "x" && live[1].since == long)
            try await store.report(ReplicaReport(replica: "a", bundle: "z", since: long, refusedBundle: nil, refusal: nil, seen: long))
            live = try await store.replicas(seenWithin: .seconds(60))
            #expect(live.count == 2 && live[0].bundle == "z" && live[0].refusal == nil, "a report replaces the last")
            #expect(try await store.replicas(seenWithin: .seconds(-1)).isEmpty, "none seen within the future")
        }
    }

    @Test(
        "a purge recorded stays unsent until every screen recorded is sent; a screen added makes it unsent again; oldest first",
        arguments: kinds)
    func purges(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            // Recorded "at least a second ago" when `before` is a second in the future.
            func unsent() async throws -> [String] {
                try await store.unsentPurges(recordedWithin: .seconds(3600), before: .seconds(-1)).map { "\($0.bundle): \($0.screens)" }
            }
            try await store.recordPurge(bundle: "b1", screens: ["s2", "s1"])
            try await store.recordPurge(bundle: "b2", screens: ["s9"])
            #expect(try await unsent() == [#"b1: ["s1", "s2"]"#, #"b2: ["s9"]"#])
            #expect(try await store.unsentPurges(recordedWithin: .seconds(3600), before: .seconds(3600)).isEmpty, "not old enough")
            #expect(try await store.unsentPurges(recordedWithin: .seconds(-1), before: .seconds(-2)).isEmpty, "not within the window")
            try await store.purgeSent(bundle: "b1", screens: ["s1"])
            #expect(try await unsent().count == 2, "sent for some of its screens only")
            try await store.purgeSent(bundle: "b1", screens: ["s1", "s2", "s3"])
            #expect(try await unsent() == [#"b2: ["s9"]"#])
            try await store.recordPurge(bundle: "b1", screens: ["s1"])
            #expect(try await unsent() == [#"b2: ["s9"]"#], "what was sent already")
            try await store.recordPurge(bundle: "b1", screens: ["s4"])
            #expect(try await unsent() == [#"b1: ["s1", "s2", "s4"]"#, #"b2: ["s9"]"#])
        }
    }

    @Test(
        "a user's exposure to an experiment is kept once per window: the first of a batch, none within it, again past it", arguments: kinds)
    func exposures(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            func record(_ experiment: String, _ user: String, _ alternative: String) -> ExposureRecorder.Record {
                ExposureRecorder.Record(
                    experiment: experiment, alternative: alternative, user: user, screen: "landing", variant: "landing|*|\(alternative)",
                    time: 1_800_000_000_000, requestID: "\(experiment)-\(user)-\(alternative)")
            }
            let batch = [record("e1", "u1", "A"), record("e1", "u2", "B"), record("e1", "u1", "B"), record("e2", "u1", "A")]
            let kept = try await store.recordExposures(batch, window: .seconds(3600))
            #expect(kept.map(\.requestID) == ["e1-u1-A", "e1-u2-B", "e2-u1-A"], "the first of each user and experiment, in order")
            #expect(try await store.recordExposures(batch, window: .seconds(3600)).isEmpty, "within the window")
            let past = try await store.recordExposures([record("e1", "u1", "B")], window: .seconds(-1))
            #expect(past.map(\.requestID) == ["e1-u1-B"], "past the window")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
