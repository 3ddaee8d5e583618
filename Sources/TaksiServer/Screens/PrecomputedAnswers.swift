import NIOConcurrencyHelpers
import NIOHTTP1
import TaksiScreens

/// A skeleton or a data response answered from a request head's bytes (see
/// ``ServedScreenSet/precomputedAnswer(to:bytes:maxHeaderBytes:memo:)``).
struct PrecomputedAnswer {
    enum Kind {
        case skeleton
        /// `revisionNamed`: the request named the skeleton it holds (`X-Taksi-Skeleton`, this
        /// variant's); the general way counts one that names none. `kept`: the response the memo
        /// keeps, when it is not fixtures' data (counted as the general way counts its hits).
        case data(revisionNamed: Bool, kept: ResponseMemo.KeptAnswer?)
    }

    /// The request as the connection and the access log see it: `GET` of the target's path
    /// (the access log leaves a query out), HTTP/1.1.
    let head: HTTPRequestHead
    let variant: ServedScreenSet.Variant
    let kind: Kind
    /// The response, its gzip form or a `304`, as the request's headers ask.
    let response: HTTPResponse
}

extension ServedScreenSet {
    /// The skeleton and data targets answered from heads, by their digests: those of the screens
    /// named without parameters (`/screens/<name>`, `/screens/<name>/data`), made with the set,
    /// and the others a request routed to a screen (a path parameter's value, a trailing `/`),
    /// kept as they are routed.
    struct HeadTargets: Sendable {
        /// A class: a lookup is one reference count, not one for each of the screen's parts.
        final class Entry: Sendable {
            let head: HTTPRequestHead
            let target: [UInt8]
            let screen: Screen
            let isData: Bool

            init(target: String, screen: Screen, isData: Bool) {
                self.head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target)
                self.target = Array(target.utf8)
                self.screen = screen
                self.isData = isData
            }
        }

        /// Targets whose digests collide are left out (the general way answers them).
        private let entries: [UInt64: Entry]
        /// Targets routed so far (``ServedScreenSet/routed(_:)``); emptied when full.
        private let routed = NIOLockedValueBox<[UInt64: Entry]>([:])
        /// The variants (translations included) whose data a target here answers.
        private let dataVariants: Set<ObjectIdentifier>
        /// Whether data is answered from heads at all: not when the catalog differs by app
        /// version (the version picks the one data is checked against).
        let answersData: Bool

        /// Routed targets kept at most (each about a few hundred bytes).
        static let maxRouted = 4096

        init(screens: [String: Screen], answersData: Bool) {
            var entries: [UInt64: Entry] = [:]
            var collisions: Set<UInt64> = []
            func add(_ target: String, _ screen: Screen, isData: Bool) {
                let entry = Entry(target: target, screen: screen, isData: isData)
                let key = entry.target.withUnsafeBufferPointer(Self.digest)
                if entries[key] != nil { collisions.insert(key) }
                entries[key] = entry
            }
            var dataVariants: Set<ObjectIdentifier> = []
            for (name, screen) in screens where screen.isPickedFromHeads {
                if answersData {
                    for variant in screen.served.values {
                        dataVariants.insert(ObjectIdentifier(variant))
                        for translation in variant.translations.values { dataVariants.insert(ObjectIdentifier(translation)) }
                    }
                }
                guard !screen.hasParameters else { continue }
                let target = "/screens/" + name
                // Only targets the router reads as this screen's skeleton and data.
                if Route(path: target[...]) == .skeleton(name) { add(target, screen, isData: false) }
                if answersData, Route(path: (target + "/data")[...]) == .data(name) { add(target + "/data", screen, isData: true) }
            }
            for key in collisions { entries[key] = nil }
            self.entries = entries
            self.dataVariants = dataVariants
            self.answersData = answersData
        }

        /// Whether `variant`'s data is answered from heads (so a target the memo answered is
        /// worth remembering for it).
        func answersData(of variant: Variant) -> Bool {
            dataVariants.contains(ObjectIdentifier(variant))
        }

        /// The entry for a target (its path: no query), made with the set or routed before.
        func entry(for target: UnsafeBufferPointer<UInt8>) -> Entry? {
            let key = Self.digest(target)
            if let entry = entries[key], entry.target.elementsEqual(target) { return entry }
            guard let entry = routed.withLockedValue({ $0[key] }), entry.target.elementsEqual(target) else { return nil }
            return entry
        }

        /// The number of targets routed and kept.
        var routedCount: Int { routed.withLockedValue(\.count) }

        /// Keeps a target routed to `entry`'s screen, for the next request for it.
        func keep(routed entry: Entry) {
            let key = entry.target.withUnsafeBufferPointer(Self.digest)
            routed.withLockedValue { routed in
                if routed.count >= Self.maxRouted { routed.removeAll(keepingCapacity: true) }
                routed[key] = entry
            }
        }

        private static func digest(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var digest = FNV1a()
            digest.combine(bytes)
            return digest.value
        }
    }

    /// The answer to a `GET`, from the head the server's reader read, without the general way
    /// (``Responder``): no `HTTPRequestHead` made of it, no header made a string (but an app's
    /// version), no routing; the `ETag` is compared with `If-None-Match` as bytes. For a screen
    /// whose variant the app's version and language alone pick (no alternatives nor experiment,
    /// no static field built from its path; ``Screen/isPickedFromHeads``):
    /// - its skeleton, looked up by its target's bytes: a screen named without parameters from a
    ///   table made with the set, another from a table of targets routed and matched once as
    ///   the general way does (a path parameter's value checked);
    /// - its data, when the catalog is the same for every app version: fixtures' data (no query),
    ///   or a response ``ResponseMemo`` keeps for this very target and variant, which the general
    ///   way remembered by the target's bytes (request and path values, and upstream values
    ///   checked still fresh in their cache, in the same generation; see
    ///   ``ResponseMemo/answer(forTarget:of:forwarded:)``).
    ///
    /// Nil sends the request the general way, which writes the same bytes (a test sends both ways
    /// the same requests): `HEAD`, HTTP/1.0, a body, a skeleton's query, a `version` in a data
    /// query, an absolute target, a value that does not fit its parameter, a version no variant
    /// serves or that does not parse; a header that selects or is checked (`X-Taksi-Alternative`,
    /// `X-Request-Id`, `Expect`, `Upgrade`, `Content-Length`, `Transfer-Encoding`, an
    /// `X-Taksi-Skeleton` other than the variant's), a `Connection` other than `keep-alive`, no
    /// `Host` or two, fields over the limit.
    /// - Parameters:
    ///   - bytes: the head's bytes, which `head`'s ranges are into.
    ///   - maxHeaderBytes: the connection's limit on field bytes, as ``ConnectionRequest`` counts them.
    ///   - memo: the data responses kept for their inputs; nil answers only fixtures' data.
    func precomputedAnswer(
        to head: HTTPRequestParser.Head, bytes: UnsafeRawBufferPointer, maxHeaderBytes: Int, memo: ResponseMemo? = nil
    ) -> PrecomputedAnswer? {
        guard head.method == .GET, head.minorVersion == 1, head.body == .none else { return nil }
        return bytes.withMemoryRebound(to: UInt8.self) { bytes -> PrecomputedAnswer? in
            let target = UnsafeBufferPointer(rebasing: bytes[head.target])
            let query = target.firstIndex(of: UInt8(ascii: "?"))
            var fields = Fields()
            for field in head.fields {
                guard fields.read(UnsafeBufferPointer(rebasing: bytes[field.name]), UnsafeBufferPointer(rebasing: bytes[field.value]))
                else {
                    return nil
                }
            }
            guard fields.hosts == 1, fields.bytes <= maxHeaderBytes else { return nil }
            let path = query.map { UnsafeBufferPointer(rebasing: target[..<$0]) } ?? target
            guard let entry = headTargets.entry(for: path) ?? routed(path) else { return nil }
            // A skeleton's query, and a version in a data query (the general way reads it when no
            // header says one), are the general way's.
            let namesVersion = query.map { Self.namesVersion(UnsafeBufferPointer(rebasing: target[$0...])) } ?? false
            guard entry.isData ? !namesVersion : query == nil,
                let variant = entry.screen.variantFromHead(version: fields.version, language: fields.language)
            else { return nil }
            let isNotModified = { (form: Representations.Form) in
                fields.isConditional
                    && head.fields.contains { field in
                        KnownField(name: bytes[field.name]) == .ifNoneMatch
                            && Representations.matches(UnsafeBufferPointer(rebasing: bytes[field.value]), etag: form.etagBytes)
                    }
            }
            let acceptsGzip = fields.acceptance.acceptsGzip
            guard entry.isData else {
                return PrecomputedAnswer(
                    head: entry.head, variant: variant, kind: .skeleton,
                    response: variant.skeleton.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified))
            }
            // The general way answers another skeleton's data (from an earlier set) or refuses it.
            if let revision = fields.revision, !variant.revision.digest.utf8.elementsEqual(revision) { return nil }
            let response: HTTPResponse
            var kept: ResponseMemo.KeptAnswer?
            if query == nil, let staticData = variant.staticData {
                response = staticData.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified)
            } else if let found = memo?.answer(
                forTarget: target, of: variant.memoID,
                forwarded: { $0.matches(head: head, bytes: bytes) })
            {
                response = found.entry.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified)
                kept = found
            } else {
                return nil
            }
            return PrecomputedAnswer(
                head: entry.head, variant: variant, kind: .data(revisionNamed: fields.revision != nil, kept: kept), response: response)
        }
    }

    private static let versionParameter = Array("version=".utf8)

    /// Whether a query's bytes hold `version=` anywhere (a byte loop: the standard library's
    /// generic search costs more than the whole answer).
    private static func namesVersion(_ query: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = versionParameter.count
        guard query.count >= count else { return false }
        for start in 0...(query.count - count) where query[start] == UInt8(ascii: "v") {
            if UnsafeBufferPointer(rebasing: query[start..<(start + count)]).elementsEqual(versionParameter) { return true }
        }
        return false
    }

    /// The entry for a target (a path, no query) the router reads as the skeleton or data of a
    /// screen whose variant a request's head picks (``Screen/isPickedFromHeads``), found as the
    /// general way finds it (a path parameter's value matched and checked, a trailing `/`
    /// dropped), and kept for the next request for it; data only when the set answers data.
    private func routed(_ path: UnsafeBufferPointer<UInt8>) -> HeadTargets.Entry? {
        guard path.count > 9, path.starts(with: "/screens/".utf8) else { return nil }
        let uri = String(decoding: path, as: UTF8.self)
        let name: String
        let isData: Bool
        switch Route(path: uri[...]) {
        case .skeleton(let skeleton): (name, isData) = (skeleton, false)
        case .data(let data) where headTargets.answersData: (name, isData) = (data, true)
        default: return nil
        }
        guard let (screen, _) = try? screen(at: name), screen.isPickedFromHeads else { return nil }
        let entry = HeadTargets.Entry(target: uri, screen: screen, isData: isData)
        headTargets.keep(routed: entry)
        return entry
    }

    /// What the fields of a request say, read once, name by name; ``read(_:_:)`` is false for
    /// one that sends the request the general way.
    private struct Fields {
        var hosts = 0
        /// As ``ConnectionRequest`` counts them: name, value and 4 for each.
        var bytes = 0
        var acceptance = ContentCoding.Acceptance()
        var isConditional = false
        /// The first `X-Taksi-Version`'s value, as the general way reads it.
        var version: UnsafeBufferPointer<UInt8>?
        /// The first `Accept-Language`'s value, as the general way reads it.
        var language: UnsafeBufferPointer<UInt8>?
        /// The first `X-Taksi-Skeleton`'s value (the skeleton a data request's app holds), as
        /// the general way reads it.
        var revision: UnsafeBufferPointer<UInt8>?

        mutating func read(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Bool {
            bytes += name.count + value.count + 4
            switch KnownField(name: name) {
            case .host: hosts += 1
            case .ifNoneMatch: isConditional = true
            case .acceptEncoding: acceptance.read(value)
            case .skeletonRevision: revision = revision ?? value
            case .taksiVersion: version = version ?? value
            case .acceptLanguage: language = language ?? value
            case .connection:
                // Kept alive, as HTTP/1.1 is without it: `close`, `upgrade` and the rest are the general way's.
                return !HeaderList.containsElement(in: value) { !HeaderList.equalsIgnoringCase($0, "keep-alive") }
            case .expect, .upgrade, .requestID, .contentLength, .transferEncoding, .taksiAlternative:
                return false
            case nil: break
            }
            return true
        }
    }
}

extension ServedScreenSet.Screen {
    /// The variant for a request whose head says `version` (`X-Taksi-Version`'s value) and
    /// `language` (`Accept-Language`'s), or neither, as the general way selects it: by version,
    /// then in the negotiated locale. Nil when the head does not pick it alone
    /// (``isPickedFromHeads``), or the version does not parse or no variant serves it (the
    /// general way answers the error).
    func variantFromHead(version: UnsafeBufferPointer<UInt8>?, language: UnsafeBufferPointer<UInt8>?) -> ServedScreenSet.Variant? {
        guard isPickedFromHeads, let variant = versionedFromHead(version) else { return nil }
        guard let locales, !variant.translations.isEmpty else { return variant }
        // Read as the general way reads it: text (the negotiator remembers each value's locale).
        return variant.translations[locales.locale(for: language.map { String(decoding: $0, as: UTF8.self) })] ?? variant
    }

    private func versionedFromHead(_ version: UnsafeBufferPointer<UInt8>?) -> ServedScreenSet.Variant? {
        guard let version else { return unversioned }
        // Read as the general way reads it: text, trimmed.
        guard let parsed = Version(String(decoding: version, as: UTF8.self).trimmingCharacters(in: .whitespaces)) else { return nil }
        if let onlyVariant { return onlyVariant }
        guard case .success(let selection) = variants.selection(ScreenVariants.Request(version: parsed)) else { return nil }
        return served[selection.variant.file]
    }
}
