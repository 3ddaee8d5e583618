public import Foundation
public import NIOHTTP1

/// What the replicas of a fleet share, kept in an existing engine (PostgreSQL: target
/// `TaksiPostgres`), so a guarantee holds across processes and not only in one's memory. The
/// server's code asks it questions ("claim this key") without knowing which engine answers.
///
/// Every call may throw when the store cannot be reached or does not answer within its timeout;
/// callers then refuse what needs the store (a keyed submit gets `503`) and go on with the rest.
///
/// It answers four concerns, each a protocol of its own that the code using it names: keyed
/// submits (``SubmitClaims``), published screens (``ReleaseStore``), the replicas' reports
/// (``ReplicaRegistry``), CDN purges that outlive their sender (``PurgeLedger``); and it is the
/// fleet's ``ExposureLedger``: a user's exposure is recorded once for every replica.
/// ``MemoryFleetStore`` keeps them in one process's memory; PostgreSQL's (`TaksiPostgres`) across
/// the fleet. Both pass the same contract tests.
public protocol FleetStore: SubmitClaims, ReleaseStore, ReplicaRegistry, PurgeLedger, ExposureLedger {
    /// Keeps the store's connections and housekeeping (pruning expired answers) going until
    /// cancelled or graceful shutdown; the application runs it as a service of its group.
    func run() async throws
}

/// Keyed submits answered once: the first replica to claim a key calls the upstream, the others
/// replay its answer.
public protocol SubmitClaims: Sendable {
    /// Claims the keyed submit `key` for this replica, in one atomic statement: the first claim
    /// wins, and so does a claim over an answer older than `window` or over a claim whose lease
    /// ran out (its replica died mid-submit) with the same `fingerprint`.
    /// - Parameters:
    ///   - fingerprint: what the submit sent (body, forwarded identity); a retry must match it.
    ///   - lease: how long the claim holds the key without an answer.
    ///   - window: how long an answer is replayed.
    func claimSubmit(key: String, fingerprint: [UInt8], lease: Duration, window: Duration) async throws -> SubmitClaim

    /// Records the answer of the submit claimed with `token` (nil forgets the claim: an answer
    /// that is not kept, 500 or more). False when the claim was no longer this replica's; true
    /// again for the same answer (a retry after a failure whose statement had committed), and
    /// always for a forget.
    func finishSubmit(key: String, token: UUID, answer: SubmitAnswer?) async throws -> Bool
}

/// Published screen sets: bundles stored by their content, and the releases that make one current.
public protocol ReleaseStore: Sendable {
    /// Stores `bundle` (once: it is named by its content) and makes it the current one, unless it
    /// already is (then `isNew` is false and no release is recorded). Racing publishes are
    /// serialized: the later one is current.
    /// - Throws: when the bundle is over ``ScreenBundle/maximumBytes``, or the store fails.
    /// - Parameter revisions: the skeleton revisions the bundle's screens have
    ///   (``PublishedScreens/revisions(of:)``), so any replica finds the bundle of a revision.
    func publish(_ bundle: ScreenBundle, screens: Int, revisions: [String], by: String) async throws -> (release: Release, isNew: Bool)

    /// The name of the most recently released bundle whose screens have skeleton revision
    /// `revision`; nil when none has.
    func bundle(holdingRevision revision: String) async throws -> String?

    /// The latest release: the bundle every replica should serve; nil before the first publish.
    func currentRelease() async throws -> Release?

    /// A stored bundle by its name (the whole name, or a prefix only it has).
    /// - Throws: ``BundleError`` when the stored bundle cannot be read here (a later format, bytes
    ///   that are not a bundle, content that does not match its name, more than
    ///   ``ScreenBundle/maximumBytes``): a bundle to refuse, not a store to wait for; anything else
    ///   when the store cannot be reached.
    func bundle(named name: String) async throws -> (name: String, bundle: ScreenBundle)?

    /// The latest releases, newest first.
    func history(limit: Int) async throws -> [Release]

    /// Makes an earlier bundle current again: `name` (or a prefix only it has), else the one
    /// current before the current one.
    /// - Throws: when there is no such bundle, or nothing to roll back to.
    func rollback(to name: String?, by: String) async throws -> Release

    /// Calls `wake` on every release (a publish or a rollback, told by the store as it happens),
    /// and once each time it starts listening (a release may have happened while it was not),
    /// until cancelled; it listens again after the store goes away and comes back.
    func listenForReleases(_ wake: @escaping @Sendable () -> Void) async
}

/// What each replica serves, and whether it is alive.
public protocol ReplicaRegistry: Sendable {
    /// Records what this replica serves, and that it is alive.
    func report(_ report: ReplicaReport) async throws

    /// Every replica that reported within `alive`, by name.
    func replicas(seenWithin alive: Duration) async throws -> [ReplicaReport]
}

/// CDN purges recorded before they are sent, so that one outlives the replica meant to send it.
public protocol PurgeLedger: Sendable {
    /// Records that the CDN is to be purged of `screens` now that the fleet moves to `bundle`
    /// (each replica that switches records what it found changed; the screens add up), so that
    /// the purge outlives the replica meant to send it.
    func recordPurge(bundle: String, screens: [String]) async throws

    /// The purges recorded within `window`, at least `age` ago, and not sent yet: oldest first,
    /// each with its screens sorted, once each.
    func unsentPurges(recordedWithin window: Duration, before age: Duration) async throws -> [(bundle: String, screens: [String])]

    /// Marks the purge of `bundle` sent, when `screens` holds every screen recorded for it.
    func purgeSent(bundle: String, screens: [String]) async throws
}

/// What the store says of a keyed submit.
/// The answer of a keyed submit, kept to be replayed to a retry with the same `Idempotency-Key`.
public struct SubmitAnswer: Sendable {
    public var status: HTTPResponseStatus
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: HTTPResponseStatus, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

public enum SubmitClaim: Sendable {
    /// This replica holds the key: call the upstream, then record the answer with this token.
    case claimed(token: UUID)
    /// Answered before with the same request: replay this.
    case answered(SubmitAnswer)
    /// Claimed by a replica (perhaps this one) that is still running it.
    case running
    /// Used before with another request (another body, another identity).
    case mismatch
}

/// The store failed or refused: what happened, in words safe to log.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// What every store refuses alike, in the same words whichever store it is.
extension StoreError {
    /// A bundle over ``ScreenBundle/maximumBytes`` to publish.
    public static func bundleTooLarge(_ bytes: Int) -> StoreError {
        StoreError(
            "the screen set is \(bytes) bytes as a bundle, more than the limit of \(ScreenBundle.maximumBytes); move data to an upstream")
    }

    /// A name prefix more than one bundle has.
    public static func ambiguousBundleName(_ prefix: String) -> StoreError {
        StoreError("more than one bundle's name starts with \(prefix); give more of it")
    }

    /// A rollback to a bundle no publish stored.
    public static func noBundleNamed(_ name: String) -> StoreError {
        StoreError("no published bundle is named \(name); `taksi-server history` lists them")
    }

    /// A rollback before any publish.
    public static let nothingPublished = StoreError("nothing was published yet; publish a screen set first")

    /// A rollback to the one before when only one bundle was ever published.
    public static let nothingToRollBackTo = StoreError("only one bundle was ever published; there is nothing to roll back to")

    /// A rollback to the current bundle.
    public static func alreadyCurrent(_ bundle: String) -> StoreError {
        StoreError("bundle \(bundle.prefix(12)) is already current")
    }
}

extension ScreenBundle {
    /// What of a name prefix as someone gave it (`A1B2`, a copied `a1b2…`) a bundle's name can
    /// start with: its hexadecimal digits, in lower case, as every store matches names.
    public static func namePrefix(_ given: String) -> String {
        String(given.lowercased().filter(\.isHexDigit))
    }

    /// The bytes a store keeps of the bundle.
    /// - Throws: ``StoreError/bundleTooLarge(_:)`` past ``maximumBytes``.
    public func encodedForStore() throws(StoreError) -> [UInt8] {
        let encoded = encoded
        guard encoded.count <= Self.maximumBytes else { throw .bundleTooLarge(encoded.count) }
        return encoded
    }
}
