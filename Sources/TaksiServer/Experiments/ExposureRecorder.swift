public import CoreMetrics
import Foundation
public import Logging
import NIOConcurrencyHelpers
import TaksiScreens

/// Records which user was shown which alternative of which experiment: one record per user and
/// experiment within ``window`` (a user who opens the screen ten times in a day is one exposure),
/// written to every sink: OTLP log records when an endpoint is configured, else the application
/// log's `exposure` line.
///
/// Each replica remembers whom it recorded within the window. With the fleet's store
/// (``ledger``), the store decides, atomically for every replica: a user recorded by another
/// replica within the window is not recorded again, and the record is a row an analyst joins.
/// Records for the store are written in batches off the event loop, at most ``pendingLimit``
/// waiting; the sinks get only what the store took (or everything, when the store fails: a
/// record is never lost for a store that is down).
///
/// Records are kept apart from metrics on purpose: a counter says how many responses a variant
/// got, a record says who got it, so it can be joined with what those users did next.
///
/// What cannot be recorded is counted, never guessed, in `taksi_exposures_total` by `result`:
/// `recorded`; `repeated` (within the window: not a new exposure); `unrecordable` (a user id
/// too long or with control characters: an id is opaque, but it goes into a log line and a
/// table); `dropped` (more than ``pendingLimit`` waiting for the store); `store_failed`
/// (written to the sinks, but not to the store); with an OTLP collector, `export_failed`
/// (``ExposureExportFailures``: recorded, then not taken by it). An `X-Taksi-Platform` that is no platform name
/// (over ``longestPlatform`` bytes, or characters other than letters, digits, `.`, `-` and `_`) is
/// left out of the record, which is kept, and counted in `taksi_exposure_platforms_refused_total`.
public final class ExposureRecorder: Sendable {
    /// One exposure: a user shown an alternative of an experiment.
    public struct Record: Sendable, Equatable, Codable {
        public var experiment: String
        public var alternative: String
        /// As the app sent it in `X-Taksi-User`.
        public var user: String
        /// `X-Taksi-Version` (or `?version=`), as sent; nil when the request named none.
        public var appVersion: String?
        /// `X-Taksi-Platform`, as sent; nil when the request named none.
        public var platform: String?
        /// The screen's name (`home`, `products/{id}`).
        public var screen: String
        /// The variant shown (`X-Taksi-Variant`).
        public var variant: String
        /// When, in milliseconds since 1970 (UTC).
        public var time: Int64
        /// The request that showed it (`X-Request-Id`).
        public var requestID: String

        public init(
            experiment: String, alternative: String, user: String, appVersion: String? = nil, platform: String? = nil, screen: String,
            variant: String, time: Int64 = 0, requestID: String
        ) {
            self.experiment = experiment
            self.alternative = alternative
            self.user = user
            self.appVersion = appVersion
            self.platform = platform
            self.screen = screen
            self.variant = variant
            self.time = time
            self.requestID = requestID
        }

        enum CodingKeys: String, CodingKey {
            case experiment, alternative, user, platform, screen, variant, time
            case appVersion = "app_version"
            case requestID = "request_id"
        }
    }

    /// How long a user's exposure to an experiment stands for every later one.
    public let window: Duration
    /// How many users' last exposures are remembered per replica (100,000 by default: about
    /// 16 MB); past it, the least recently exposed are forgotten first (their next exposure
    /// within the window is recorded again, unless the store remembers it).
    public let capacity: Int
    /// The longest user id recorded, in UTF-8 bytes.
    public static let longestUser = 256
    /// The longest `X-Taksi-Platform` a record keeps (`ios`, `android`, `web`, `watchos`...).
    public static let longestPlatform = 32
    /// How many records may wait for the store; more are dropped (and counted).
    public static let pendingLimit = 100_000
    /// How many records one statement writes to the store.
    static let batchSize = 500

    private let sinks: [any ExposureSink]
    /// The fleet's store, which decides across replicas; nil decides in this replica's memory.
    public let ledger: (any ExposureLedger)?
    private let logger: Logger
    /// The time of each user's last record, by experiment and user, least recently recorded first.
    private let recorded: NIOLockedValueBox<RecencyDictionary<Key, Int64>>
    /// What each thread (an event loop's) has seen of `recorded`, in front of it: a user this
    /// thread saw recorded within the window is a repeat without a lock another loop takes.
    private let seenRecorded = PerThread { SeenRecorded() }
    private let pending = NIOLockedValueBox(Pending())
    private let counters: Counters
    private let clock: @Sendable () -> Int64
    /// Where the records bound for the store are written, a batch at a time: a service of the
    /// application's group, which shutdown drains before the store's connections close.
    public let writes: BackgroundWork

    struct Key: Hashable {
        var experiment: String
        var user: String
    }

    /// One thread's view of `recorded`: the time of a user's record it saw, bounded.
    final class SeenRecorded {
        var times = RecencyDictionary<Key, Int64>()
    }

    /// Users each thread remembers seeing recorded at most.
    static let seenRecordedCapacity = 10_000

    /// Records waiting for the store, and whether a job of ``writes`` is writing them.
    struct Pending {
        var records: [Record] = []
        var writing = false
    }

    final class Counters: Sendable {
        let factory: any MetricsFactory
        let recorded: Counter
        let repeated: Counter
        let unrecordable: Counter
        let dropped: Counter
        let storeFailed: Counter
        let platformRefused: Counter

        init(factory: any MetricsFactory) {
            self.factory = factory
            func counter(_ result: String) -> Counter {
                Counter(label: "taksi_exposures_total", dimensions: [("result", result)], factory: factory)
            }
            recorded = counter("recorded")
            repeated = counter("repeated")
            unrecordable = counter("unrecordable")
            dropped = counter("dropped")
            storeFailed = counter("store_failed")
            platformRefused = Counter(label: "taksi_exposure_platforms_refused_total", factory: factory)
        }
    }

    /// - Parameters:
    ///   - window: how long one record stands for a user's later exposures to the same experiment.
    ///   - capacity: how many users' last records are remembered.
    ///   - sinks: where records go.
    ///   - ledger: the fleet's store, which records each exposure once for every replica.
    ///   - metrics: where the counters are made.
    ///   - logger: where a store that fails is said.
    ///   - clock: milliseconds since 1970 (the system's clock by default); tests pass their own.
    public init(
        window: Duration = .seconds(86_400), capacity: Int = 100_000, sinks: [any ExposureSink], ledger: (any ExposureLedger)? = nil,
        metrics: any MetricsFactory, logger: Logger = Logger(label: "taksi.exposures", factory: { _ in SwiftLogNoOpLogHandler() }),
        clock: (@Sendable () -> Int64)? = nil
    ) {
        self.window = window
        self.capacity = max(1, capacity)
        self.sinks = sinks
        self.ledger = ledger
        self.logger = logger
        self.recorded = NIOLockedValueBox(RecencyDictionary())
        self.counters = Counters(factory: metrics)
        self.clock = clock ?? { Int64(Date().timeIntervalSince1970 * 1000) }
        self.writes = BackgroundWork("exposure writes", logger: logger)
    }

    /// The same recorder writing to the fleet's store as well.
    public func sharing(_ ledger: any ExposureLedger) -> ExposureRecorder {
        ExposureRecorder(
            window: window, capacity: capacity, sinks: sinks, ledger: ledger, metrics: counters.factory, logger: logger, clock: clock)
    }

    /// Records `record` (its `time` set now) unless the same user's exposure to the same
    /// experiment was recorded within the window. Returns whether it was new to this replica
    /// (with a store, the store has the last word, a moment later).
    @discardableResult
    public func record(_ record: Record) -> Bool {
        guard Self.isRecordable(record.user) else {
            counters.unrecordable.increment()
            return false
        }
        var record = record
        if let platform = record.platform, !Self.isPlatform(platform) {
            // A header any client sets, bound for a log line and a table: kept only when it is a name.
            record.platform = nil
            counters.platformRefused.increment()
        }
        let now = clock()
        let key = Key(experiment: record.experiment, user: record.user)
        let windowMilliseconds = Self.milliseconds(window)
        let seen = seenRecorded.local
        if let last = seen.times.peek(key), now - last < windowMilliseconds {
            counters.repeated.increment()
            return false
        }
        let last = recorded.withLockedValue { recorded -> Int64? in
            if let last = recorded.peek(key), now - last < windowMilliseconds { return last }
            _ = recorded.updateValue(now, forKey: key)
            while recorded.count > capacity { _ = recorded.removeLeastRecent() }
            return nil
        }
        _ = seen.times.updateValue(last ?? now, forKey: key)
        while seen.times.count > min(capacity, Self.seenRecordedCapacity) { _ = seen.times.removeLeastRecent() }
        if last != nil {
            counters.repeated.increment()
            return false
        }
        var stamped = record
        stamped.time = now
        guard ledger != nil else {
            write([stamped])
            return true
        }
        let (accepted, starts) = pending.withLockedValue { pending in
            guard pending.records.count < Self.pendingLimit else { return (false, false) }
            pending.records.append(stamped)
            defer { pending.writing = true }
            return (true, !pending.writing)
        }
        if starts, !writes.start("a write of exposure records", { await self.writePending() }) {
            // Past shutdown's drain: to the other sinks, as when the store fails.
            let refused = pending.withLockedValue { pending in
                defer { pending = Pending() }
                return pending.records
            }
            write(refused)
        }
        if !accepted {
            counters.dropped.increment()
            // Forgotten, so a later exposure of the user is recorded when there is room.
            _ = recorded.withLockedValue { $0.removeValue(forKey: key) }
            _ = seen.times.removeValue(forKey: key)
        }
        return accepted
    }

    /// Writes what waits for the store, a batch at a time, until nothing does.
    private func writePending() async {
        while true {
            let batch = pending.withLockedValue { pending -> [Record] in
                let batch = Array(pending.records.prefix(Self.batchSize))
                pending.records.removeFirst(batch.count)
                if batch.isEmpty { pending.writing = false }
                return batch
            }
            guard !batch.isEmpty, let ledger else { return }
            do {
                // Once more after a failure: one statement failed is a transaction that left
                // nothing, and a store that blips (a failover, a connection cut) is back at once.
                let kept: [Record]
                do {
                    kept = try await ledger.recordExposures(batch, window: window)
                } catch {
                    kept = try await ledger.recordExposures(batch, window: window)
                }
                write(kept)
            } catch {
                counters.storeFailed.increment(by: batch.count)
                logger.warning(
                    "exposures not written to the store; they went to the other sinks only",
                    metadata: ["count": "\(batch.count)", "cause": .string("\(error)")])
                write(batch)
            }
        }
    }

    private func write(_ records: [Record]) {
        counters.recorded.increment(by: records.count)
        for record in records {
            for sink in sinks { sink.write(record) }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// A platform name: 1 to ``longestPlatform`` ASCII letters, digits, `.`, `-` or `_`.
    static func isPlatform(_ platform: String) -> Bool {
        (1...longestPlatform).contains(platform.utf8.count) && platform.utf8.allSatisfy(platformBytes.contains)
    }

    private static let platformBytes = PercentEncoding.ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_")

    /// An id of 1 to ``longestUser`` bytes without control characters.
    static func isRecordable(_ user: String) -> Bool {
        (1...longestUser).contains(user.utf8.count) && !user.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// The fleet's record of exposures (the store's `taksi_exposures`): what decides, for every
/// replica at once, whether a user's exposure is new within the window.
public protocol ExposureLedger: Sendable {
    /// Keeps those of `records` whose user has no exposure to the experiment within `window`
    /// (the first of a batch's for one user), atomically across replicas, and returns them.
    func recordExposures(_ records: [ExposureRecorder.Record], window: Duration) async throws -> [ExposureRecorder.Record]
}

/// Where exposure records go.
public protocol ExposureSink: Sendable {
    /// Takes one record; called on the event loop that answered, so it must not block.
    func write(_ record: ExposureRecorder.Record)
}

/// Exposure records as lines of the application log: `exposure` at `info`, the record's fields
/// as metadata (a JSON line with `--log-format json`), written whatever the log level (a record
/// is data, not a diagnostic).
public struct LogExposureSink: ExposureSink {
    public let logger: Logger

    public init(logger: Logger) {
        var logger = logger
        logger.logLevel = min(logger.logLevel, .info)
        self.logger = logger
    }

    public func write(_ record: ExposureRecorder.Record) {
        var metadata: Logger.Metadata = [
            "experiment": .string(record.experiment), "alternative": .string(record.alternative), "user": .string(record.user),
            "screen": .string(record.screen), "variant": .string(record.variant), "time": .stringConvertible(record.time),
            "request_id": .string(record.requestID),
        ]
        if let version = record.appVersion { metadata["app_version"] = .string(version) }
        if let platform = record.platform { metadata["platform"] = .string(platform) }
        logger.info("exposure", metadata: metadata)
    }
}
