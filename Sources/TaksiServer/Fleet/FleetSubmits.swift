public import CoreMetrics
import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Keyed submits answered once, through the store's ``SubmitClaims``: the fleet's, or for a
/// server that runs alone a ``MemoryFleetStore`` of its own (one code path; only the store
/// differs). The first replica to claim a key calls the upstream and records the answer; a retry
/// on any replica replays it (`Idempotent-Replayed: true`), or waits for it while it runs, within
/// the call's timeout, then gets `409 submit_in_progress`. **Never twice**: when the store cannot
/// be reached, a keyed submit gets `503 store_unavailable` and the upstream is not called.
///
/// The same key with another request is `422`, an answer of 500 or more is not kept (whether the
/// upstream acted is not known), answers are replayed for the window. A claim holds its key for
/// the call's timeout and ``leaseMargin`` more: a replica killed mid-submit keeps the key from a
/// retry that long, not forever.
public final class FleetSubmits: Sendable {
    let store: any SubmitClaims
    let window: Duration
    let logger: Logger
    let metrics: any MetricsFactory
    /// Where answers whose recording failed are tried again: a service of the application's
    /// group, which shutdown drains before the store's connections close.
    public let recordings: BackgroundWork

    /// How long a claim outlives its call's timeout: the time the answer takes to be recorded.
    static let leaseMargin = Duration.seconds(10)
    /// `Retry-After` of `503 store_unavailable`, in seconds.
    static let retryAfterUnavailable = 5

    public init(store: any SubmitClaims, window: Duration, logger: Logger, metrics: any MetricsFactory) {
        self.store = store
        self.window = window
        self.logger = logger
        self.metrics = metrics
        self.recordings = BackgroundWork("submit answers' recordings", logger: logger)
        // Every outcome's series from the start, at 0: a ratio of them needs no `or vector(0)`.
        for outcome in Outcome.allCases {
            _ = Counter(label: Self.counterLabel, dimensions: [("outcome", outcome.rawValue)], factory: metrics)
        }
    }

    /// What became of a keyed submit, as `taksi_fleet_submits_total` labels it.
    enum Outcome: String, CaseIterable {
        case claimed, replayed, waited, mismatch
        case inProgress = "in_progress"
        case storeUnavailable = "store_unavailable"
        case unrecorded
    }

    static let counterLabel = "taksi_fleet_submits_total"

    /// The key a submit is claimed by: what the app retries (the screen's path, the action, the
    /// app's `Idempotency-Key`), not the variant, so a retry on a replica serving another set is
    /// still the same submit.
    package static func key(path: String, action: String, clientKey: String) -> String {
        "\(path)\n\(action)\n\(clientKey)"
    }

    /// What a retry must send the same: the body, its type and the identity forwarded upstream.
    package static func fingerprint(contentType: String?, forwarded: [(String, String)], body: String) -> String {
        ([contentType ?? "-"] + forwarded.map { "\($0.0): \($0.1)" } + [body]).joined(separator: "\n")
    }

    /// The answer to the keyed submit `key`: `run`'s, called here only when this replica claims the key.
    /// - Parameters:
    ///   - fingerprint: what the submit sent, which a retry must match.
    ///   - timeout: the call's timeout, which bounds both the claim's lease and a retry's wait.
    func answer(
        key: String, clientKey: String, fingerprint: [UInt8], timeout: Duration, correlation: Correlation,
        run: @escaping @Sendable () async -> HTTPResponse
    ) async -> HTTPResponse {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Duration.milliseconds(20)
        var waiting = false
        while true {
            let claim: SubmitClaim
            do {
                claim = try await store.claimSubmit(key: key, fingerprint: fingerprint, lease: timeout + Self.leaseMargin, window: window)
            } catch {
                count(.storeUnavailable)
                logger.error(
                    "a keyed submit was refused: the store did not answer",
                    metadata: correlation.logMetadata.merging(["cause": .string(String(describing: error))]) { $1 })
                return HTTPResponse(error: Self.unavailable)
            }
            switch claim {
            case .claimed(let token):
                count(.claimed)
                let response = await run()
                let answer = response.status.code < 500 ? response.kept : nil
                await record(key: key, token: token, answer: answer, correlation: correlation)
                return response
            case .answered(let answer):
                count(.replayed)
                var response = HTTPResponse(kept: answer)
                response.headers.add(name: "Idempotent-Replayed", value: "true")
                return response
            case .mismatch:
                count(.mismatch)
                return HTTPResponse(error: ActionEndpoint.keyReused(clientKey))
            case .running:
                if !waiting { count(.waited) }
                waiting = true
                guard clock.now + pause < deadline else {
                    count(.inProgress)
                    return HTTPResponse(error: Self.inProgress)
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 3 / 2, .milliseconds(250))
            }
        }
    }

    /// Records an answer before the client gets it (so a retry right after replays it); when the
    /// store fails, goes on trying in the background for the claim's lease, and says so.
    private func record(key: String, token: UUID, answer: SubmitAnswer?, correlation: Correlation) async {
        do {
            if try await store.finishSubmit(key: key, token: token, answer: answer) == false { lapsed(correlation) }
            return
        } catch {
            logger.warning(
                "the answer of a keyed submit is not recorded yet; retrying",
                metadata: correlation.logMetadata.merging(["cause": .string(String(describing: error))]) { $1 })
        }
        let started = recordings.start("a keyed submit's answer recorded again") { [self] in
            let clock = ContinuousClock()
            let end = clock.now + Self.leaseMargin
            var pause = Duration.milliseconds(250)
            // Until the claim's lease ends, or shutdown's grace does (the job is cancelled then).
            while clock.now < end, !Task.isCancelled {
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
                if let recorded = try? await store.finishSubmit(key: key, token: token, answer: answer) {
                    if !recorded { lapsed(correlation) }
                    return
                }
            }
            count(.unrecorded)
            logger.error(
                "the answer of a keyed submit could not be recorded: the store stayed away; a retry after the claim's lease may call the upstream again",
                metadata: correlation.logMetadata)
        }
        if !started { count(.unrecorded) }
    }

    private func lapsed(_ correlation: Correlation) {
        count(.unrecorded)
        logger.error(
            "the answer of a keyed submit came after its claim's lease (call timeout + 10 s) ran out; a retry may have called the upstream again",
            metadata: correlation.logMetadata)
    }

    private func count(_ outcome: Outcome) {
        Counter(label: Self.counterLabel, dimensions: [("outcome", outcome.rawValue)], factory: metrics).increment()
    }

    static let unavailable = APIError(
        .storeUnavailable,
        message:
            "the fleet's store cannot be reached, and a keyed submit is only sent once it is recorded there; retry with the same Idempotency-Key",
        headers: [("Retry-After", String(retryAfterUnavailable))]
    )

    static let inProgress = APIError(
        .submitInProgress,
        message: "a submit with this Idempotency-Key is still running; retry with the same key to get its answer",
        headers: [("Retry-After", "1")]
    )
}
