import Atomics
import CompressNIO
public import CoreMetrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// Responses rendered per request (data, and the skeletons of screens with path parameters, made
/// per URL) kept for the inputs they were rendered from, so a thousand phones opening the same
/// network's stations cost one render.
///
/// A data response is kept when it depends only on its variant, the request values its plan reads
/// (request and path parameters, after conversion) and fresh upstream cache entries. The key names
/// all of them, each upstream entry by its generation; when an entry is refreshed or evicted,
/// ``drop(upstream:)`` removes every response rendered from it. Degraded responses and responses
/// from stale values are never kept.
///
/// Each kept response has a strong `ETag` (a digest of its bytes) and a `304`; its gzip form is
/// made the first time a client asks for it. A response is kept the second time its inputs are
/// asked for (a small table of hashes remembers the first), so one-off values, such as a user's
/// own, never push out the shared ones. Bounded in bytes and entries: entries live in two
/// generations, and when the newer one is full the older one is dropped, so what is used stays
/// and what is not goes (an approximate least-recently-used order at the cost of a dictionary
/// lookup).
///
/// On a request's way, nothing here takes a lock another event loop takes unless a kept response
/// may be found: each loop remembers the targets it answered (``answer(for:of:)``), the inputs seen
/// once are slots written and read without a lock, and a filter of the kept keys' hashes, read
/// without a lock, turns a one-off value away before the shared table is looked at (``entry(for:)``).
public final class ResponseMemo: Sendable {
    /// How much is kept.
    public struct Limits: Sendable, Equatable {
        /// Bytes of kept responses (identity and gzip) at most; 0 keeps nothing.
        public var maxBytes: Int
        /// Responses kept at most.
        public var maxEntries: Int

        public init(maxBytes: Int = 16 << 20, maxEntries: Int = 20_000) {
            self.maxBytes = maxBytes
            self.maxEntries = maxEntries
        }
    }

    /// One kept response: its identity form now, its gzip form when first asked for.
    final class Entry: Sendable {
        let identity: Representations.Form
        /// The identity bytes, to make the gzip form from; nil when too small to be worth it.
        private let gzipSource: [UInt8]?
        private let gzipped = ManagedAtomicLazyReference<GzipForm>()
        /// The head every form is made from (``ResponseHeads/template(bodySize:)``).
        private let head: HeadTemplate
        private let variant: String
        /// The route the responses are counted under (`data`, or `skeleton` for a URL's own skeleton).
        private let label: MetricsLabel
        /// What the entry is charged against the limits.
        let cost: Int

        final class GzipForm: Sendable {
            let form: Representations.Form?

            init(_ form: Representations.Form?) {
                self.form = form
            }
        }

        init(body: [UInt8], key: Key, heads: ResponseHeads, variant: String, label: MetricsLabel) {
            let compressible = ResponseHeads.hasGzipForm(bodySize: body.count)
            let head = heads.template(bodySize: body.count)
            self.identity = Representations.form(
                body: body, tag: EntityTag(of: body), encoding: nil, head: head, label: label, variant: variant
            )
            self.head = head
            self.label = label
            self.gzipSource = compressible ? body : nil
            self.variant = variant
            // Both bodies (the gzip one at most as large), both heads, the key, and the objects around them.
            self.cost =
                (compressible ? 2 : 1) * body.count + 2 * (identity.full.encodedHeadBytes + identity.notModified.encodedHeadBytes)
                + key.approximateBytes + 1024
        }

        /// The response for a request's `Accept-Encoding` and `If-None-Match`, as
        /// ``Representations/response(to:)`` picks it; the gzip form made the first time it is picked.
        func response(to request: RequestHead) -> HTTPResponse {
            let form = (gzipSource != nil && request.acceptsGzip ? gzipForm : nil) ?? identity
            return request.isNotModified(etag: form.etagBytes) ? form.notModified : form.full
        }

        private var gzipForm: Representations.Form? {
            if let made = gzipped.load() { return made.form }
            // Level 6: most of level 9's gain at a fraction of its time, paid once per kept response.
            let form = gzipSource.flatMap { Representations.gzip($0, level: .compressionLevel6) }.map { bytes in
                Representations.form(
                    body: bytes, tag: identity.tag.gzipForm, encoding: "gzip", head: head, label: label, variant: variant)
            }
            return gzipped.storeIfNilThenLoad(GzipForm(form)).form
        }
    }

    /// Bodies smaller than this are not worth a gzip form.
    static let smallestGzipped = 512

    private struct Generation {
        var entries: [Key: Entry] = [:]
        var cost = 0
    }

    /// Both generations, which kept keys each upstream key was used by, and the hashes of keys
    /// seen once. A lock, not an actor: lookups run on the event loops and take a few dictionary
    /// operations.
    private struct State {
        var current = Generation()
        var previous = Generation()
        var dependents: [String: Set<Key>] = [:]
    }

    /// Kept data responses by the targets they were asked with (``remember(target:of:for:inputs:)``),
    /// for the answer from a request head: each thread's own, so an answer takes no lock another
    /// event loop takes. Emptied when the older generation is dropped (``targetsGeneration``
    /// moved), so it never holds an entry that is no longer kept, nor outlives a generation's bound.
    private final class RememberedTargets {
        var generation = -1
        var targets: [UInt64: TargetUse] = [:]
    }

    /// A target whose response is an entry the memo keeps, in one thread's table. A class: a
    /// request answered from its head takes it with one reference count, not one for each of its
    /// parts. The entry is not kept by it: one the memo drops is freed, whichever threads
    /// remembered it (an event loop that serves nothing more must not hold the responses).
    private final class TargetUse {
        let variant: Int
        let target: [UInt8]
        weak var entry: Entry?
        /// What else the response was made from, checked before it answers.
        let inputs: TargetInputs
        /// When the upstream entries were last looked at in the cache (``answer(for:of:)``).
        var checked: ContinuousClock.Instant?

        init(variant: Int, target: [UInt8], entry: Entry, inputs: TargetInputs) {
            self.variant = variant
            self.target = target
            self.entry = entry
            self.inputs = inputs
        }
    }

    /// What a remembered target's response depends on besides the target and the variant: the
    /// upstream cache entries it was rendered from, each checked fresh and in the same generation,
    /// and the request header values its calls forward (part of their cache keys), compared as bytes.
    struct TargetInputs: Sendable {
        var upstream: [UpstreamCheck] = []
        var forwarded = ForwardedValues()
    }

    /// The values of the request headers named `names` (lower case), as the request sent them:
    /// each name's fields' values in order, each ended by a line feed, each name's by a zero byte
    /// (neither is allowed in a field value). The same bytes make the same upstream cache keys;
    /// other bytes (even ones that would make the same keys) are looked up by their inputs.
    struct ForwardedValues: Equatable, Sendable {
        var names: [[UInt8]] = []
        var values: [UInt8] = []

        /// The values of a request's headers, as text.
        init(names: [String], headers: HTTPHeaders) {
            self.names = Set(names.map { $0.lowercased() }).sorted().map { Array($0.utf8) }
            for name in self.names {
                for (field, value) in headers where HeaderList.equalsIgnoringCase(field.utf8, lowercase: name) {
                    values += value.utf8
                    values.append(0x0A)
                }
                values.append(0)
            }
        }

        /// Whether a request has these values of these names: the bytes its fields would make,
        /// compared where they lie (nothing is made for a request).
        func matches(_ head: RequestHead) -> Bool {
            var offset = 0
            for name in names {
                let differs = head.forEachField { field, value in
                    guard HeaderList.equalsIgnoringCase(field, lowercase: name) else { return false }
                    let end = offset + value.count
                    guard end < values.count, values[offset..<end].elementsEqual(value), values[end] == 0x0A else { return true }
                    offset = end + 1
                    return false
                }
                guard !differs, offset < values.count, values[offset] == 0 else { return false }
                offset += 1
            }
            return offset == values.count
        }

        init() {}
    }

    /// An upstream cache entry a remembered response was rendered from: its key, the `ttl` its
    /// source gives it, the generation the response was rendered from, and when that value stops
    /// being fresh (on the cache's clock).
    struct UpstreamCheck: Sendable {
        let key: String
        let ttl: Duration
        let generation: UInt64
        let expires: ContinuousClock.Instant
    }

    /// A kept response found for a request's target (``answer(for:of:)``), and how many fresh
    /// upstream cache entries it was checked against (counted as the cache's hits).
    struct KeptAnswer {
        let entry: Entry
        let freshUpstreamEntries: Int
    }

    /// Targets longer than this are not remembered (a table of them is bounded in bytes too).
    static let longestRememberedTarget = 256

    public let limits: Limits
    /// The upstream cache whose entries kept responses are rendered from.
    private let cache: UpstreamCache
    private let state = NIOLockedValueBox(State())
    private let remembered = PerThread { RememberedTargets() }
    /// The hashes of the inputs seen once, by slot (``keep(_:for:headers:variant:request:label:)``).
    private let seenOnce = AtomicSlots(count: 4096)
    /// The hashes of the keys kept in either generation, read without a lock: set as a key is
    /// kept, made anew from the newer generation when the older one is dropped.
    private let filter = ReadMostly(KeptFilter())
    /// Moved when the older generation is dropped: each thread's remembered targets are forgotten.
    private let targetsGeneration = ManagedAtomic(0)
    private let hits: Counter
    private let misses: Counter
    private let dropped: Counter
    private let keptBytes: Gauge
    private let keptEntries: Gauge

    /// - Parameter cache: the upstream cache whose entries kept responses are rendered from:
    ///   when one is refreshed or evicted, every response made from it is dropped.
    public init(limits: Limits = Limits(), metrics: any MetricsFactory, following cache: UpstreamCache) {
        self.limits = limits
        self.cache = cache
        hits = Counter(label: "taksi_data_memo_lookups_total", dimensions: [("result", "hit")], factory: metrics)
        misses = Counter(label: "taksi_data_memo_lookups_total", dimensions: [("result", "miss")], factory: metrics)
        dropped = Counter(label: "taksi_data_memo_dropped_total", factory: metrics)
        keptBytes = Gauge(label: "taksi_data_memo_bytes", factory: metrics)
        keptEntries = Gauge(label: "taksi_data_memo_entries", factory: metrics)
        cache.onChange { [weak self] key in self?.drop(upstream: key) }
    }

    /// Whether anything is kept at all.
    public var isEnabled: Bool { limits.maxBytes > 0 && limits.maxEntries > 0 }

    /// The kept response for `key`, counted as a hit or a miss.
    func entry(for key: Key) -> Entry? {
        guard filter.value.mayContain(key.hashValue) else {
            misses.increment()
            return nil
        }
        let found: Entry? = state.withLockedValue { state in
            if let entry = state.current.entries[key] { return entry }
            guard let entry = state.previous.entries.removeValue(forKey: key) else { return nil }
            // Used again: it moves to the newer generation, so it outlives the older one.
            state.previous.cost -= entry.cost
            insert(entry, for: key, into: &state)
            return entry
        }
        if found == nil { misses.increment() } else { hits.increment() }
        return found
    }

    /// Remembers that the target of `request` (as it arrived) was answered with `entry`, just
    /// found for `key` by ``entry(for:)`` (forgotten with it when its generation is dropped), so
    /// the next request for it is answered without its query read (``answer(for:of:)``): data of
    /// request and path values, and of upstream values while the entries it was rendered from
    /// stay fresh and the request forwards the same header values to them.
    /// A target already remembered costs a digest and a lookup, nothing copied.
    /// - Parameter inputs: the upstream entries `key` names, in its order, with their `ttl`s,
    ///   and the values the calls forward; made only when the target is not remembered yet.
    func remember(target request: RequestHead, of entry: Entry, for key: Key, inputs: () -> TargetInputs = { TargetInputs() }) {
        guard key.kind == .data, request.target.count <= Self.longestRememberedTarget else { return }
        let digest = request.withBytes { Self.digest(bytes: UnsafeBufferPointer(rebasing: $0[request.target]), variant: key.variant) }
        let remembered = rememberedTargets()
        guard remembered.targets[digest]?.entry !== entry else { return }
        let inputs = inputs()
        guard key.upstream.count == inputs.upstream.count else { return }
        let target = request.withBytes { Array($0[request.target]) }
        if remembered.targets.count >= min(limits.maxEntries, Self.maxRememberedTargets) {
            remembered.targets.removeAll(keepingCapacity: true)
        }
        remembered.targets[digest] = TargetUse(variant: key.variant, target: target, entry: entry, inputs: inputs)
    }

    /// Targets remembered on each thread at most (each up to ``longestRememberedTarget`` bytes
    /// and a few references): then that thread forgets them all and remembers anew.
    static let maxRememberedTargets = 4096

    /// The calling thread's remembered targets, emptied first when the older generation was
    /// dropped since it last looked.
    private func rememberedTargets() -> RememberedTargets {
        let remembered = remembered.local
        let generation = targetsGeneration.load(ordering: .acquiring)
        if remembered.generation != generation {
            remembered.targets.removeAll(keepingCapacity: true)
            remembered.generation = generation
        }
        return remembered
    }

    /// The kept response a request for the same target was answered with for the variant
    /// `variant` (its ``ServedScreenSet/Variant/memoID``), when `request` forwards the same header
    /// values and every upstream value it was rendered from is still fresh; nil when there is none.
    /// Nothing is counted (``countHit()``, when it is answered).
    ///
    /// The upstream values' freshness is read from when each expires, with no lock: a value
    /// replaced or evicted is dropped (``drop(upstream:)``), which makes every thread forget its
    /// remembered targets. Each thread looks the entries up in the cache at most once a second
    /// per target (``UpstreamCache/isFresh(_:ttl:generation:)``, which marks them used as a lookup
    /// does), so an entry answered only from here is not the least recently used.
    func answer(for request: RequestHead, of variant: Int) -> KeptAnswer? {
        let remembered = rememberedTargets()
        // A thread that remembers nothing (a loop that answered only values never seen twice)
        // digests nothing.
        guard !remembered.targets.isEmpty else { return nil }
        let found: TargetUse? = request.withBytes { bytes in
            let target = UnsafeBufferPointer(rebasing: bytes[request.target])
            guard let use = remembered.targets[Self.digest(bytes: target, variant: variant)], use.variant == variant,
                use.target.withUnsafeBufferPointer({ HeaderList.equals($0, target) })
            else {
                return nil
            }
            return use
        }
        guard let found, let entry = found.entry else { return nil }
        let inputs = found.inputs
        if !inputs.forwarded.names.isEmpty, !inputs.forwarded.matches(request) { return nil }
        if !inputs.upstream.isEmpty {
            let now = cache.now()
            for check in inputs.upstream where now >= check.expires { return nil }
            if found.checked.map({ now - $0 >= Self.upstreamLookInterval }) ?? true {
                for check in inputs.upstream {
                    guard cache.isFresh(check.key, ttl: check.ttl, generation: check.generation) else { return nil }
                }
                found.checked = now
            }
        }
        return KeptAnswer(entry: entry, freshUpstreamEntries: inputs.upstream.count)
    }

    /// How often a thread looks a remembered target's upstream entries up in the cache (``answer(for:of:)``).
    static let upstreamLookInterval = Duration.seconds(1)

    /// Counts a hit of a response answered for its target (``answer(for:of:)``).
    func countHit() {
        hits.increment()
    }

    private static func digest(bytes: UnsafeBufferPointer<UInt8>, variant: Int) -> UInt64 {
        var digest = FNV1a()
        withUnsafeBytes(of: variant.littleEndian) { digest.combine($0) }
        digest.combine(bytes)
        return digest.value
    }

    /// The response to `request` from a body rendered for `key`, which is kept when its inputs
    /// are asked for the second time; a response larger than a sixteenth of the byte limit is
    /// never kept, so one cannot push out all the others. Kept or not, it has its `ETag` and
    /// answers `If-None-Match`; only a kept one is gzipped. It is dropped when one of the upstream
    /// cache entries its key names (``Key/upstream``) is refreshed or evicted.
    /// - Parameter route: what the response is counted as: `data`, or `skeleton` for the skeleton
    ///   of one URL of a screen whose static fields are built from its path.
    func keep(
        _ body: [UInt8], for key: Key, heads: ResponseHeads, variant: String, request: RequestHead,
        label: MetricsLabel = .data
    ) -> HTTPResponse {
        let notKept = { Self.response(notKept: body, heads: heads, variant: variant, to: request, label: label) }
        guard isEnabled else { return notKept() }
        let hash = key.hashValue
        let slot = Int(UInt(bitPattern: hash) % UInt(seenOnce.count))
        let secondTime = seenOnce[slot] == hash
        if !secondTime { seenOnce[slot] = hash }
        // The first time (most one-off values never come back) costs no kept forms at all.
        guard secondTime else { return notKept() }
        let entry = Entry(body: body, key: key, heads: heads, variant: variant, label: label)
        guard entry.cost <= limits.maxBytes / 16 else { return notKept() }
        state.withLockedValue { state in
            insert(entry, for: key, into: &state)
            for upstream in key.upstream { state.dependents[upstream.key, default: []].insert(key) }
        }
        recordSize()
        return entry.response(to: request)
    }

    /// A data response that is not kept, with the headers a kept one has (its strong `ETag`, a
    /// `304` to `If-None-Match`, the same `Vary`), made for this request alone: identity only,
    /// its head from the template a kept one's is made from.
    static func response(
        notKept body: [UInt8], heads: ResponseHeads, variant: String, to request: RequestHead, label: MetricsLabel = .data
    ) -> HTTPResponse {
        let tag = EntityTag(of: body)
        return heads.template(bodySize: body.count).response(
            body: body, tag: tag, encoding: nil, notModified: request.isNotModified(etag: tag), label: label,
            variant: variant)
    }

    /// Drops every response rendered from the upstream entry `key` (it was refreshed or evicted).
    public func drop(upstream key: String) {
        let removed = state.withLockedValue { state in
            guard let keys = state.dependents.removeValue(forKey: key) else { return 0 }
            var removed = 0
            for memoKey in keys {
                if let entry = state.current.entries.removeValue(forKey: memoKey) {
                    state.current.cost -= entry.cost
                    removed += 1
                } else if let entry = state.previous.entries.removeValue(forKey: memoKey) {
                    state.previous.cost -= entry.cost
                    removed += 1
                }
            }
            return removed
        }
        // A response remembered for its target may have been rendered from it: every thread
        // forgets its targets (after the removal, so none is remembered again from what it removed).
        targetsGeneration.wrappingIncrement(ordering: .releasing)
        guard removed > 0 else { return }
        dropped.increment(by: removed)
        recordSize()
    }

    private func recordSize() {
        let (count, cost) = size
        keptEntries.record(count)
        keptBytes.record(cost)
    }

    /// The number of kept responses and the bytes they are charged against the limit.
    public var size: (entries: Int, cost: Int) {
        state.withLockedValue { ($0.current.entries.count + $0.previous.entries.count, $0.current.cost + $0.previous.cost) }
    }

    private func insert(_ entry: Entry, for key: Key, into state: inout State) {
        filter.value.insert(key.hashValue)
        if let old = state.current.entries.updateValue(entry, forKey: key) { state.current.cost -= old.cost }
        state.current.cost += entry.cost
        guard state.current.cost > limits.maxBytes / 2 || state.current.entries.count > limits.maxEntries / 2 else { return }
        // The newer generation is full: the older one goes, with its upstream dependencies and
        // the targets remembered (they are remembered again from the newer one when asked for).
        state.previous = state.current
        state.current = Generation()
        targetsGeneration.wrappingIncrement(ordering: .releasing)
        let filter = KeptFilter()
        for memoKey in state.previous.entries.keys { filter.insert(memoKey.hashValue) }
        self.filter.store(filter)
        var dependents: [String: Set<Key>] = [:]
        for memoKey in state.previous.entries.keys {
            for upstream in memoKey.upstream { dependents[upstream.key, default: []].insert(memoKey) }
        }
        state.dependents = dependents
    }
}

/// Which keys may be kept, by their hashes: a key kept is always in it, one that is not is in it
/// about once in fifty (two bits of 2^18 per key, for the 20,000 keys of the default bound). Read
/// and set without a lock: a reader that does not see a bit just set finds the key the next time.
final class KeptFilter: Sendable {
    private let words = AtomicSlots(count: 1 << 12)

    /// The word and the bit in it of one of a hash's two bits (`second`: the next 18 bits).
    @inline(__always)
    private static func bit(_ hash: Int, second: Bool) -> (word: Int, mask: Int) {
        let bit = (UInt(bitPattern: hash) >> (second ? 18 : 0)) & 0x3FFFF
        return (Int(bit >> 6), 1 << (bit & 63))
    }

    func insert(_ hash: Int) {
        let (first, firstMask) = Self.bit(hash, second: false)
        let (second, secondMask) = Self.bit(hash, second: true)
        words.setBits(firstMask, at: first)
        words.setBits(secondMask, at: second)
    }

    func mayContain(_ hash: Int) -> Bool {
        let (first, firstMask) = Self.bit(hash, second: false)
        let (second, secondMask) = Self.bit(hash, second: true)
        return words[first] & firstMask != 0 && words[second] & secondMask != 0
    }
}

/// Words any thread reads and writes without a lock (relaxed atomics): a racing write may be
/// lost, which the tables made of them (a filter, a table of hashes seen once) allow.
final class AtomicSlots: @unchecked Sendable {
    let count: Int
    private let words: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>

    init(count: Int) {
        self.count = count
        words = .allocate(capacity: count)
        words.initialize(repeating: UnsafeAtomic<Int>.Storage(0), count: count)
    }

    deinit {
        words.deinitialize(count: count)
        words.deallocate()
    }

    subscript(index: Int) -> Int {
        get { UnsafeAtomic(at: words + index).load(ordering: .relaxed) }
        set { UnsafeAtomic(at: words + index).store(newValue, ordering: .relaxed) }
    }

    func setBits(_ mask: Int, at index: Int) {
        _ = UnsafeAtomic(at: words + index).loadThenBitwiseOr(with: mask, ordering: .relaxed)
    }
}

extension ResponseMemo {
    /// What a response is kept under: a typed value, hashed and compared field by field (no text
    /// joined with separators that a value could hold). Hashed once, when made: a data request
    /// looks it up in both generations and in the table of keys seen once, and keeps it.
    struct Key: Hashable, Sendable {
        /// What is kept.
        enum Kind: Hashable, Sendable {
            /// A data response (of the variant's data plan).
            case data
            /// The skeleton of one URL of a screen whose static fields are built from its path.
            case skeleton
        }

        /// An upstream cache entry a response is rendered from, by generation (a refreshed
        /// upstream value makes a new key).
        struct UpstreamUse: Hashable, Sendable {
            var key: String
            var generation: UInt64
        }

        let kind: Kind
        /// The variant's ``ServedScreenSet/Variant/memoID``.
        let variant: Int
        /// The request values its plan read, in the plan's slots (``RequestValues``), with the
        /// page a response with page tokens is for; for a skeleton, its path values in their
        /// names' order.
        let requestValues: [JSONValue?]
        /// The components asked for (`?only=`); nil for all.
        let only: Set<String>?
        /// The range of app versions with one catalog the response was checked against (0 when
        /// the catalog is the same for every version).
        let epoch: Int
        let upstream: [UpstreamUse]
        /// The hash of every field but ``upstream``, and of all of them.
        private let inputsHash: Int
        private let hash: Int

        init(
            kind: Kind = .data, variant: Int, requestValues: [JSONValue?], only: Set<String>? = nil, epoch: Int = 0,
            upstream: [UpstreamUse] = []
        ) {
            var hasher = Hasher()
            hasher.combine(kind)
            hasher.combine(variant)
            hasher.combine(requestValues)
            hasher.combine(only)
            hasher.combine(epoch)
            self.init(
                kind: kind, variant: variant, requestValues: requestValues, only: only, epoch: epoch, upstream: upstream,
                inputsHash: hasher.finalize())
        }

        private init(
            kind: Kind, variant: Int, requestValues: [JSONValue?], only: Set<String>?, epoch: Int, upstream: [UpstreamUse],
            inputsHash: Int
        ) {
            (self.kind, self.variant, self.requestValues, self.only, self.epoch, self.upstream) =
                (kind, variant, requestValues, only, epoch, upstream)
            self.inputsHash = inputsHash
            var hasher = Hasher()
            hasher.combine(inputsHash)
            hasher.combine(upstream)
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        static func == (left: Key, right: Key) -> Bool {
            left.hash == right.hash && left.kind == right.kind && left.variant == right.variant && left.epoch == right.epoch
                && left.requestValues == right.requestValues && left.only == right.only && left.upstream == right.upstream
        }

        /// The key of the skeleton of one URL of `variant`, by its path values.
        static func skeleton(of variant: Int, path values: [String: JSONValue]) -> Key {
            // A variant's URLs have the same parameters: in their names' order, a value is in the
            // same place in every key.
            Key(kind: .skeleton, variant: variant, requestValues: values.sorted { $0.key < $1.key }.map(\.value))
        }

        /// This key, with the upstream entries the response is rendered from (its other fields
        /// not hashed again).
        func with(upstream: [UpstreamUse]) -> Key {
            Key(
                kind: kind, variant: variant, requestValues: requestValues, only: only, epoch: epoch, upstream: upstream,
                inputsHash: inputsHash)
        }

        /// About what the key takes in memory, charged to its entry.
        var approximateBytes: Int {
            JSONWriter.bytes(.array(requestValues.map { $0 ?? .null })).count + (only?.reduce(0) { $0 + $1.utf8.count + 1 } ?? 0)
                + upstream.reduce(0) { $0 + $1.key.utf8.count + 8 } + 64
        }
    }
}
