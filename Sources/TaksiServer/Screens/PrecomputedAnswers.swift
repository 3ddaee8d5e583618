import NIOHTTP1
import TaksiScreens

/// A skeleton or a data response answered from a request head's bytes (see
/// ``ServedScreenSet/precomputedAnswer(to:bytes:maxHeaderBytes:memo:)``).
struct PrecomputedAnswer {
    enum Kind {
        case skeleton
        /// `revisionNamed`: the request named the skeleton it holds (`X-Taksi-Skeleton`, this
        /// variant's); the general way counts one that names none.
        case data(revisionNamed: Bool)
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
    /// The skeletons of the screens named without parameters, and their data targets
    /// (`/screens/<name>/data`), by their digests.
    struct HeadTargets: Sendable {
        /// A class: a lookup is one reference count, not one for each of the screen's parts.
        final class Entry: Sendable {
            let head: HTTPRequestHead
            let target: [UInt8]
            let screen: Screen
            let isData: Bool

            init(head: HTTPRequestHead, target: [UInt8], screen: Screen, isData: Bool) {
                self.head = head
                self.target = target
                self.screen = screen
                self.isData = isData
            }
        }

        /// Targets whose digests collide are left out (the general way answers them).
        private let entries: [UInt64: Entry]
        /// The variants (translations included) whose data a target here answers.
        private let dataVariants: Set<ObjectIdentifier>

        /// - Parameter answersData: whether data is answered from heads at all: not when the
        ///   catalog differs by app version (the version picks the one data is checked against).
        init(screens: [String: Screen], answersData: Bool) {
            var entries: [UInt64: Entry] = [:]
            var collisions: Set<UInt64> = []
            func add(_ target: String, _ screen: Screen, isData: Bool) {
                let bytes = Array(target.utf8)
                let key = bytes.withUnsafeBufferPointer(Self.digest)
                if entries[key] != nil { collisions.insert(key) }
                entries[key] = Entry(
                    head: HTTPRequestHead(version: .http1_1, method: .GET, uri: target), target: bytes, screen: screen, isData: isData)
            }
            for (name, screen) in screens where !screen.hasParameters && screen.isPickedFromHeads {
                let target = "/screens/" + name
                // Only targets the router reads as this screen's skeleton and data.
                if Route(path: target[...]) == .skeleton(name) { add(target, screen, isData: false) }
                if answersData, Route(path: (target + "/data")[...]) == .data(name) { add(target + "/data", screen, isData: true) }
            }
            for key in collisions { entries[key] = nil }
            self.entries = entries
            var dataVariants: Set<ObjectIdentifier> = []
            for entry in entries.values where entry.isData {
                for variant in entry.screen.served.values {
                    dataVariants.insert(ObjectIdentifier(variant))
                    for translation in variant.translations.values { dataVariants.insert(ObjectIdentifier(translation)) }
                }
            }
            self.dataVariants = dataVariants
        }

        /// Whether `variant`'s data is answered from heads (so a target the memo answered is
        /// worth remembering for it).
        func answersData(of variant: Variant) -> Bool {
            dataVariants.contains(ObjectIdentifier(variant))
        }

        func entry(for target: UnsafeBufferPointer<UInt8>) -> Entry? {
            guard !entries.isEmpty, let entry = entries[Self.digest(target)], entry.target.elementsEqual(target) else { return nil }
            return entry
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
    /// - its skeleton, looked up by its target's bytes, or else routed and matched as the general
    ///   way does (a path parameter's value checked);
    /// - its data, when the catalog is the same for every app version: fixtures' data (no query),
    ///   or a response ``ResponseMemo`` keeps for this very target and variant (request values
    ///   only, no upstream), which the general way remembered by the target's bytes.
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
            let requestHead: HTTPRequestHead
            let variant: Variant
            let isData: Bool
            if let entry = headTargets.entry(for: query.map { UnsafeBufferPointer(rebasing: target[..<$0]) } ?? target) {
                // A skeleton's query, and a version in a data query (the general way reads it when
                // no header says one), are the general way's.
                let namesVersion = query.map { Self.namesVersion(UnsafeBufferPointer(rebasing: target[$0...])) } ?? false
                guard entry.isData ? !namesVersion : query == nil,
                    let picked = entry.screen.variantFromHead(version: fields.version, language: fields.language)
                else { return nil }
                (requestHead, variant, isData) = (entry.head, picked, entry.isData)
            } else if let (routedHead, picked) = routed(target, version: fields.version, language: fields.language) {
                (requestHead, variant, isData) = (routedHead, picked, false)
            } else {
                return nil
            }
            let isNotModified = { (form: Representations.Form) in
                fields.isConditional
                    && head.fields.contains { field in
                        KnownField(name: bytes[field.name]) == .ifNoneMatch
                            && Representations.matches(UnsafeBufferPointer(rebasing: bytes[field.value]), etag: form.etagBytes)
                    }
            }
            let acceptsGzip = fields.acceptance.acceptsGzip
            let response: HTTPResponse
            if !isData {
                response = variant.skeleton.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified)
            } else {
                // The general way answers another skeleton's data (from an earlier set) or refuses it.
                if let revision = fields.revision, !variant.revision.digest.utf8.elementsEqual(revision) { return nil }
                if query == nil, let staticData = variant.staticData {
                    response = staticData.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified)
                } else if let kept = memo?.entry(forTarget: target, of: variant.memoID) {
                    response = kept.response(acceptsGzip: acceptsGzip, isNotModified: isNotModified)
                } else {
                    return nil
                }
            }
            return PrecomputedAnswer(
                head: requestHead, variant: variant, kind: isData ? .data(revisionNamed: fields.revision != nil) : .skeleton,
                response: response)
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

    /// The skeleton's variant for this target, found as the general way finds it (a path
    /// parameter's value matched and checked, a trailing `/` dropped), when a request's head
    /// picks it (``Screen/variantFromHead(version:language:)``).
    private func routed(
        _ target: UnsafeBufferPointer<UInt8>, version: UnsafeBufferPointer<UInt8>?, language: UnsafeBufferPointer<UInt8>?
    ) -> (HTTPRequestHead, Variant)? {
        // Data requests (a screen's name never ends in the segment `data`) go the general way
        // without a string made of their targets.
        guard target.count > 9, target.starts(with: "/screens/".utf8), !target.contains(UInt8(ascii: "?")),
            !target.reversed().starts(with: "atad/".utf8)
        else { return nil }
        let uri = String(decoding: target, as: UTF8.self)
        guard case .skeleton(let name) = Route(path: uri[...]), let (screen, _) = try? screen(at: name),
            let variant = screen.variantFromHead(version: version, language: language)
        else { return nil }
        return (HTTPRequestHead(version: .http1_1, method: .GET, uri: uri), variant)
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
