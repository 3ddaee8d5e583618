import AsyncHTTPClient
public import Foundation
public import Logging
public import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import TaksiSchema
import TaksiScreens

/// Purges a CDN of the skeletons a change made stale, after this replica serves the new set.
///
/// What is purged is what changed, found by comparing the two sets' outputs (``changedScreens(from:to:)``):
/// each changed or removed screen's tag (``CacheTags/screen(_:)``), so editing a fragment purges the
/// screens that place it and nothing else, and a catalog change the screens whose skeletons it
/// changed. Each target gets the tags in batches of its size, retried with backoff (1, 2, 4, 8 s;
/// a `Retry-After` is honoured); each purge is counted (`taksi_cdn_purges_total`, by target and
/// result, and `taksi_cdn_purge_duration_seconds`) and logged. Tags whose purge failed are kept
/// for their endpoint and sent again, with its next purge and every ``CDNSettings/resend`` (as a
/// service of the application, ``run()``), and the endpoint is named in `/readyz` until every one
/// of them is purged. Secrets are read when a purge is sent, never logged.
public final class CDNPurger: BackgroundService, CustomStringConvertible {
    /// Its name alone, for the service group's log.
    public var description: String { "CDNPurger" }
    public let settings: CDNSettings
    private let http: HTTPClient
    private let logger: Logger
    private let metrics: any MetricsFactory
    private let environment: [String: String]
    /// The pauses between the attempts of one purge.
    let backoff: [Duration]
    private let state = NIOLockedValueBox(State())
    /// Where each purge runs, after the reload that asked for it: run by ``run()``, which drains
    /// it at shutdown, so a purge pending at SIGTERM is sent.
    public let purges: BackgroundWork

    struct State {
        var running = 0
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// By target description: why its last purge failed, and since when.
        var failing: [String: (error: String, since: Date)] = [:]
        /// By target description: the tags whose purge failed there, to send again.
        var unsent: [String: Unsent] = [:]
        /// The bundles whose purge this replica is about to send (an orphan's check leaves them).
        var sending: [String: Int] = [:]
        /// The live replicas a fleet's purge waits for.
        var waitingOn: [String] = []
    }

    /// Tags one endpoint has not taken yet, and where they go.
    struct Unsent {
        var target: CDNSettings.PurgeTarget
        var endpoint: String
        var tags: Set<String>
        var screens: Set<String>
    }

    public init(
        settings: CDNSettings, logger: Logger, metrics: any MetricsFactory = MetricsSystem.factory,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.settings = settings
        self.http = .shared
        self.logger = logger
        self.metrics = metrics
        self.environment = environment
        self.backoff = settings.backoff
        self.purges = BackgroundWork("CDN purges", logger: logger)
    }

    /// The purge targets' secrets that are not there (unset, empty, unreadable): the start stops.
    static func problems(_ settings: CDNSettings?, environment: [String: String]) -> [ConfigurationError] {
        (settings?.targets ?? []).flatMap { target in
            Secret.problems(target.secrets, of: "the cdn's \(target.kind) token", environment: environment)
        }
    }

    /// The screens whose skeletons differ between two sets (any variant, locale, revision or
    /// header a cache keys on), and those `new` no longer has, sorted.
    public static func changedScreens(from old: ServedScreenSet, to new: ServedScreenSet) -> [String] {
        var changed: [String] = []
        for (name, screen) in old.screens {
            guard let now = new.screens[name] else {
                changed.append(name)
                continue
            }
            if fingerprint(screen) != fingerprint(now) { changed.append(name) }
        }
        return changed.sorted()
    }

    /// What a cached skeleton of the screen holds: per variant (by its id, not its file, whose
    /// name a published bundle prefixes), its revision, `Vary`, whether path fields make one per
    /// URL, and each locale's skeleton bytes.
    private static func fingerprint(_ screen: ServedScreenSet.Screen) -> [String] {
        screen.served.values.sorted { $0.compiled.variantID < $1.compiled.variantID }.flatMap { variant in
            let locales =
                [(variant.compiled.locale ?? "", variant)] + variant.translations.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            return [variant.compiled.variantID, variant.revision.digest, screen.vary ?? "", String(variant.compiled.pathFields.count)]
                + locales.map { locale, served in
                    locale + "\u{0}" + String(decoding: JSONWriter.bytes(served.compiled.skeleton.jsonValue), as: UTF8.self)
                }
        }
    }

    /// Purges the tags of `screens` from every target, in the background; with screens from the
    /// fleet's store, once every live replica serves this replica's bundle (see ``follow(_:state:wait:poll:alive:orphanAge:)``).
    public func purge(screens: [String]) {
        guard !screens.isEmpty, !settings.targets.isEmpty else { return }
        state.withLockedValue { $0.running += 1 }
        let started = purges.start("a CDN purge of \(screens.count) screens") {
            defer { self.finished() }
            guard let fleet = self.fleet.withLockedValue({ $0 }) else {
                _ = await self.send(screens: screens)
                return
            }
            // Recorded first: if the replica that is to send it dies, another one does (``run()``).
            let bundle = fleet.state.report.bundle
            if let bundle {
                self.state.withLockedValue { $0.sending[bundle, default: 0] += 1 }
                do {
                    try await fleet.store.recordPurge(bundle: bundle, screens: screens)
                } catch {
                    self.logger.warning(
                        "cdn purge not recorded in the store; only this replica will send it",
                        metadata: ["cause": .string(String(describing: error))])
                }
            }
            defer {
                if let bundle {
                    self.state.withLockedValue { state in
                        state.sending[bundle, default: 1] -= 1
                        if state.sending[bundle] == 0 { state.sending[bundle] = nil }
                    }
                }
            }
            guard await self.waitForFleet(fleet, screens: screens) else { return }
            if await self.send(screens: screens), let bundle { try? await fleet.store.purgeSent(bundle: bundle, screens: screens) }
        }
        if !started { finished() }
    }

    /// Purges the tags of `screens` from every target; whether every target took them.
    private func send(screens: [String]) async -> Bool {
        let tags = screens.map(settings.tags.screen)
        return await withTaskGroup(of: Bool.self) { group in
            for target in settings.targets {
                group.addTask { await self.purge(tags, from: target, screens: screens) }
            }
            return await group.reduce(true) { $0 && $1 }
        }
    }

    private func finished() {
        let waiting = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// A fleet following published screens: its store, this replica's report, and how long and how
    /// often a purge waits for the others.
    struct Fleet: Sendable {
        let store: any ReplicaRegistry & PurgeLedger
        let state: PublishedScreens.State
        let wait: Duration
        let poll: Duration
        let alive: Duration
        /// A recorded purge still unsent this long after is another replica's to send.
        let orphanAge: Duration
    }

    private let fleet = NIOLockedValueBox<Fleet?>(nil)

    /// With screens from the fleet's store: a purge waits until every live replica serves the
    /// bundle this one serves (a CDN refetching from a replica still on the earlier bundle would
    /// keep it), asking the store every `poll`, at most `wait` (then it is sent, with a warning
    /// naming the replicas behind); then only the live replica whose name sorts first sends it.
    /// Live: reported within `alive` (replicas report every second, as `rollout status` counts).
    /// A purge is recorded in the store before it waits: one still unsent `orphanAge` after it was
    /// recorded (its sender died) is sent by the first-named live replica once the fleet agrees.
    public func follow(
        _ store: any ReplicaRegistry & PurgeLedger, state: PublishedScreens.State, wait: Duration = .seconds(120),
        poll: Duration = .seconds(1),
        alive: Duration = .seconds(10), orphanAge: Duration = .seconds(5)
    ) {
        fleet.withLockedValue { $0 = Fleet(store: store, state: state, wait: wait, poll: poll, alive: alive, orphanAge: orphanAge) }
    }

    /// The live replicas a purge waits for, for `/readyz`: those not yet serving this one's bundle.
    public var waitingOn: [String] {
        state.withLockedValue { $0.waitingOn }
    }

    /// Whether this replica sends the purge, once the fleet serves its bundle (or the wait is over).
    private func waitForFleet(_ fleet: Fleet, screens: [String]) async -> Bool {
        let deadline = ContinuousClock.now + fleet.wait
        while true {
            let report = fleet.state.report
            if let bundle = report.bundle, let live = try? await fleet.store.replicas(seenWithin: fleet.alive),
                live.contains(where: { $0.replica == report.replica })
            {
                let behind = live.filter { $0.bundle != bundle }.map(\.replica).sorted()
                state.withLockedValue { $0.waitingOn = behind }
                if behind.isEmpty {
                    let first = live.map(\.replica).min()
                    if first != report.replica {
                        logger.debug(
                            "cdn purge left to \(first ?? "another replica")",
                            metadata: ["screens": .string(screens.joined(separator: " "))])
                    }
                    return first == report.replica
                }
                if ContinuousClock.now >= deadline {
                    state.withLockedValue { $0.waitingOn = [] }
                    logger.warning(
                        "cdn purge sent while replicas still serve another bundle",
                        metadata: ["behind": .string(behind.joined(separator: " ")), "bundle": .string(String(bundle.prefix(12)))])
                    return true
                }
            } else if ContinuousClock.now >= deadline {
                state.withLockedValue { $0.waitingOn = [] }
                logger.warning("cdn purge sent without the store's word on the other replicas")
                return true
            }
            // Cancelled (shutdown's grace is over): not sent here; the store's record of it stays
            // unsent, for another replica to send.
            do { try await Task.sleep(for: fleet.poll) } catch { return false }
        }
    }

    /// Returns when no purge is running, or when the waiting task is cancelled: for tests and shutdown.
    public func idle() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLockedValue { state -> Bool in
                    // Cancelled before it waits: the handler below found nothing to resume.
                    if state.running == 0 || Task.isCancelled { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// The targets whose last purge failed, for `/readyz`: target, error, since.
    public var failing: [(target: String, error: String, since: Date)] {
        state.withLockedValue { $0.failing }.map { ($0.key, $0.value.error, $0.value.since) }.sorted { $0.target < $1.target }
    }

    /// Whether every endpoint of `target` took the tags.
    private func purge(_ tags: [String], from target: CDNSettings.PurgeTarget, screens: [String]) async -> Bool {
        var taken = true
        for endpoint in Self.endpoints(of: target) where await !purge(tags, screens: screens, from: target, endpoint: endpoint) {
            taken = false
        }
        return taken
    }

    /// One endpoint's purge of `tags`, with the tags it has not taken yet: what it takes is
    /// forgotten, what it refuses is kept (and the endpoint named in `/readyz`) until it takes it.
    @discardableResult
    private func purge(_ tags: [String], screens: [String], from target: CDNSettings.PurgeTarget, endpoint: String) async -> Bool {
        let name = "\(target.kind) \(endpoint)"
        let earlier = state.withLockedValue { $0.unsent[name] }
        let tags = Array(Set(tags).union(earlier?.tags ?? [])).sorted()
        let screens = Array(Set(screens).union(earlier?.screens ?? [])).sorted()
        let start = ContinuousClock.now
        var attempt = 0
        var outcome: Result<Void, PurgeError> = .success(())
        var sent: [String] = []
        for batch in Self.batches(tags, for: target) {
            attempt = 0
            while true {
                attempt += 1
                outcome = await send(batch, to: target, endpoint: endpoint)
                guard case .failure(let error) = outcome, attempt <= backoff.count, !Task.isCancelled else { break }
                try? await Task.sleep(for: error.retryAfter ?? backoff[attempt - 1])
            }
            if case .failure = outcome { break }
            sent += batch
        }
        let elapsed = ContinuousClock.now - start
        Timer(label: "taksi_cdn_purge_duration_seconds", dimensions: [("target", target.kind)], factory: metrics).recordNanoseconds(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        var metadata: Logger.Metadata = [
            "target": .string(name), "screens": .string(screens.joined(separator: " ")), "tags": .stringConvertible(tags.count),
            "attempts": .stringConvertible(attempt), "duration_ms": .stringConvertible(Int(elapsed / .milliseconds(1))),
        ]
        // Only what was taken is forgotten: a purge that failed meanwhile keeps what it sent.
        let left = state.withLockedValue { state -> Int in
            var unsent = state.unsent[name] ?? Unsent(target: target, endpoint: endpoint, tags: [], screens: [])
            unsent.tags.subtract(sent)
            if case .failure(let error) = outcome {
                unsent.tags.formUnion(Set(tags).subtracting(sent))
                unsent.screens.formUnion(screens)
                state.failing[name] = state.failing[name] ?? (error.message, Date())
            }
            if unsent.tags.isEmpty {
                state.unsent[name] = nil
                state.failing[name] = nil
            } else {
                state.unsent[name] = unsent
            }
            return unsent.tags.count
        }
        switch outcome {
        case .success:
            Counter(label: "taksi_cdn_purges_total", dimensions: [("target", target.kind), ("result", "ok")], factory: metrics)
                .increment()
            logger.info("cdn purged", metadata: metadata)
            return true
        case .failure(let error):
            Counter(label: "taksi_cdn_purges_total", dimensions: [("target", target.kind), ("result", "failed")], factory: metrics)
                .increment()
            metadata["error"] = .string(error.message)
            metadata["unsent_tags"] = .stringConvertible(left)
            logger.error(
                "cdn purge failed; its tags are sent again with the next purge and every \(settings.resend.components.seconds) s until the CDN takes them",
                metadata: metadata)
            return false
        }
    }

    /// Runs the purges (``purges``), and sends the tags no endpoint has taken yet every
    /// ``CDNSettings/resend``, until graceful shutdown; then drains the purges, so a purge pending at
    /// SIGTERM is sent, not dropped, within the shutdown's grace (past it the group cancels them).
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { purging in
            purging.addTask { try await self.purges.run() }
            await resendUntilShutdown()
        }
    }

    /// Runs the purges and the resends while `body` runs, then the purges left (``Application/withBackgroundServices(_:)``).
    public func whileRunning<Value>(_ body: () async throws -> Value) async rethrows -> Value {
        try await purges.whileRunning {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.resendUntilShutdown() }
                defer { group.cancelAll() }
                return try await body()
            }
        }
    }

    /// Sends again what an endpoint has not taken, and a fleet's orphaned purges, until graceful
    /// shutdown (or cancellation).
    private func resendUntilShutdown() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: self.settings.resend) } catch { return }
                        await self.resendUnsent()
                    }
                }
                group.addTask {
                    while !Task.isCancelled, let fleet = self.fleet.withLockedValue({ $0 }) {
                        do { try await Task.sleep(for: fleet.poll) } catch { return }
                        await self.sendOrphanedPurges(fleet)
                    }
                }
            }
        }
    }

    /// A fleet's purges that nobody sent (the replica meant to send it died, or was stopped,
    /// before it did): sent by the live replica whose name sorts first, once every live replica
    /// serves this one's bundle, when recorded more than ``Fleet/orphanAge`` ago and within the
    /// CDN's `s-maxage` (an hour without one: past it the CDN has let them go).
    func sendOrphanedPurges(_ fleet: Fleet) async {
        // Tags a target refused here are being sent again already (``resendUnsent()``): the CDN is
        // failing, and orphans wait until it takes what it has.
        guard state.withLockedValue({ $0.unsent.isEmpty }) else { return }
        let report = fleet.state.report
        guard let bundle = report.bundle, let live = try? await fleet.store.replicas(seenWithin: fleet.alive),
            live.allSatisfy({ $0.bundle == bundle }), (live.map(\.replica) + [report.replica]).min() == report.replica
        else { return }
        let window = Duration.seconds(settings.skeletonSharedMaxAge ?? 3600)
        let sending = state.withLockedValue { $0.sending }
        guard let found = try? await fleet.store.unsentPurges(recordedWithin: window, before: fleet.orphanAge) else { return }
        let orphans = found.filter { sending[$0.bundle] == nil }
        guard !orphans.isEmpty else { return }
        state.withLockedValue { $0.running += 1 }
        defer { finished() }
        let screens = Array(Set(orphans.flatMap(\.screens))).sorted()
        logger.warning(
            "cdn purge recorded and not sent (its replica stopped first); sending it",
            metadata: [
                "bundles": .string(orphans.map { String($0.bundle.prefix(12)) }.joined(separator: " ")),
                "screens": .string(screens.joined(separator: " ")),
            ])
        guard await send(screens: screens) else { return }
        for orphan in orphans { try? await fleet.store.purgeSent(bundle: orphan.bundle, screens: orphan.screens) }
    }

    /// One more try of every endpoint's unsent tags.
    func resendUnsent() async {
        let unsent = state.withLockedValue { Array($0.unsent.values) }
        guard !unsent.isEmpty else { return }
        state.withLockedValue { $0.running += 1 }
        defer { finished() }
        await withTaskGroup(of: Void.self) { group in
            for entry in unsent {
                group.addTask { await self.purge([], screens: [], from: entry.target, endpoint: entry.endpoint) }
            }
        }
    }

    /// Where one purge goes: each Varnish node, or the provider's API.
    static func endpoints(of target: CDNSettings.PurgeTarget) -> [String] {
        switch target {
        case .varnish(let nodes): nodes.map(\.absoluteString)
        case .fastly(let service, _, _, let api): [api.absoluteString + "/service/" + service + "/purge"]
        case .cloudflare(let zone, _, let api): [api.absoluteString + "/client/v4/zones/" + zone + "/purge_cache"]
        }
    }

    /// The tags in requests of the target's size: Fastly takes 256 keys, Cloudflare 100 tags, a
    /// Varnish header 4,000 bytes (its default header limit is 8 KB).
    static func batches(_ tags: [String], for target: CDNSettings.PurgeTarget) -> [[String]] {
        switch target {
        case .fastly: return stride(from: 0, to: tags.count, by: 256).map { Array(tags[$0..<min($0 + 256, tags.count)]) }
        case .cloudflare: return stride(from: 0, to: tags.count, by: 100).map { Array(tags[$0..<min($0 + 100, tags.count)]) }
        case .varnish:
            var batches: [[String]] = []
            var current: [String] = []
            var bytes = 0
            for tag in tags {
                if bytes + tag.utf8.count + 1 > 4000, !current.isEmpty {
                    batches.append(current)
                    current = []
                    bytes = 0
                }
                current.append(tag)
                bytes += tag.utf8.count + 1
            }
            if !current.isEmpty { batches.append(current) }
            return batches
        }
    }

    struct PurgeError: Error {
        let message: String
        var retryAfter: Duration?
    }

    private func send(_ tags: [String], to target: CDNSettings.PurgeTarget, endpoint: String) async -> Result<Void, PurgeError> {
        var request = HTTPClientRequest(url: endpoint)
        request.headers.add(name: "User-Agent", value: "taksi-server/\(TaksiServerVersion.current)")
        switch target {
        case .varnish:
            request.method = .RAW(value: "PURGE")
            // vmod_xkey's example VCL reads `xkey` (0.20) or `xkey-purge` (later versions): both.
            request.headers.add(name: "xkey-purge", value: tags.joined(separator: " "))
            request.headers.add(name: "xkey", value: tags.joined(separator: " "))
        case .fastly(_, let token, let soft, _):
            guard case .success(let key) = token.value(environment: environment) else {
                return .failure(PurgeError(message: "its token (\(token)) is not set"))
            }
            request.method = .POST
            request.headers.add(name: "Fastly-Key", value: key)
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "Surrogate-Key", value: tags.joined(separator: " "))
            if soft { request.headers.add(name: "Fastly-Soft-Purge", value: "1") }
        case .cloudflare(_, let token, _):
            guard case .success(let key) = token.value(environment: environment) else {
                return .failure(PurgeError(message: "its token (\(token)) is not set"))
            }
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer " + key)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: JSONWriter.bytes(["tags": .array(tags.map(JSONValue.string))])))
        }
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                var error = PurgeError(message: "\(response.status.code) \(String(buffer: body).prefix(200))")
                if let seconds = response.headers.first(name: "Retry-After").flatMap(Int.init), seconds >= 0, seconds <= 300 {
                    error.retryAfter = .seconds(seconds)
                }
                return .failure(error)
            }
            // Cloudflare answers 200 with {"success": false} too.
            if case .cloudflare = target, let answer = try? JSONParser.parse(Array(buffer: body)).value,
                answer["success"]?.boolValue == false
            {
                return .failure(PurgeError(message: "200 with success false: \(String(buffer: body).prefix(200))"))
            }
            return .success(())
        } catch {
            return .failure(PurgeError(message: String(describing: error)))
        }
    }
}
