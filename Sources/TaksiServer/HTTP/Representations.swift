import CompressNIO
import NIOCore
import NIOHTTP1
import TaksiScreens

/// One resource's precomputed responses: the identity body and, when it is smaller, a gzip body,
/// each with its strong `ETag` and its `304`. Picking one is a header scan; nothing is encoded.
final class Representations: Sendable {
    /// One content coding of the resource. A class: picking one for a request is one reference
    /// count, not one for each of its responses' parts.
    final class Form: Sendable {
        let full: HTTPResponse
        let notModified: HTTPResponse
        let tag: EntityTag
        /// ``tag``'s bytes, compared with a request's `If-None-Match` on the bytes it arrived in.
        let etagBytes: [UInt8]

        init(full: HTTPResponse, notModified: HTTPResponse, tag: EntityTag) {
            self.full = full
            self.notModified = notModified
            self.tag = tag
            self.etagBytes = Array(tag.text.utf8)
        }
    }

    let identity: Form
    let gzip: Form?

    /// - Parameters:
    ///   - body: the identity bytes.
    ///   - headers: headers every form carries (variant, set version, `Cache-Control`).
    ///   - vary: request headers that chose this resource; `Accept-Encoding` is added when there is a gzip form.
    init(body: [UInt8], label: MetricsLabel, variant: String?, headers: [(String, String)], vary: [String]) {
        let gzipped = Self.gzip(body)
        let varyValue = (vary + (gzipped == nil ? [] : ["Accept-Encoding"])).joined(separator: ", ")
        var shared = headers
        if !varyValue.isEmpty { shared.append(("Vary", varyValue)) }
        let tag = EntityTag(of: body)
        let head = HeadTemplate(headers: shared)
        identity = Self.form(body: body, tag: tag, encoding: nil, head: head, label: label, variant: variant)
        gzip = gzipped.map {
            Self.form(body: $0, tag: tag.gzipForm, encoding: "gzip", head: head, label: label, variant: variant)
        }
    }

    /// The one choice of every answer a resource has: the gzip form when there is one and the
    /// request accepts it, else the identity form; its `304` when the request's `If-None-Match`
    /// names it, else its full response.
    func response(to request: RequestHead) -> HTTPResponse {
        let form = gzip.flatMap { request.acceptsGzip ? $0 : nil } ?? identity
        return request.isNotModified(etag: form.etagBytes) ? form.notModified : form.full
    }

    /// Whether one `If-None-Match` value (its bytes) names `etag` (or is `*`).
    static func matches(_ value: UnsafeBufferPointer<UInt8>, etag: [UInt8]) -> Bool {
        etag.withUnsafeBufferPointer { etag in
            HeaderList.containsElement(in: value) { matches(candidate: $0, etag: etag) }
        }
    }

    /// Whether one element of an `If-None-Match` list names `etag` (or is `*`).
    private static func matches(candidate: UnsafeBufferPointer<UInt8>, etag: UnsafeBufferPointer<UInt8>) -> Bool {
        if candidate.count == 1, candidate[0] == UInt8(ascii: "*") { return true }
        let isWeak = candidate.count > 2 && candidate[0] == UInt8(ascii: "W") && candidate[1] == UInt8(ascii: "/")
        return HeaderList.equals(isWeak ? UnsafeBufferPointer(rebasing: candidate[2...]) : candidate, etag)
    }

    /// Both responses of one content coding, made from the representation's head template.
    static func form(body: [UInt8], tag: EntityTag, encoding: String?, head: HeadTemplate, label: MetricsLabel, variant: String?) -> Form {
        func response(notModified: Bool) -> HTTPResponse {
            head.response(body: body, tag: tag, encoding: encoding, notModified: notModified, label: label, variant: variant)
        }
        return Form(full: response(notModified: false), notModified: response(notModified: true), tag: tag)
    }

    /// The gzip form of `body`, or nil when it would not be smaller.
    static func gzip(_ body: [UInt8], level: ZlibConfiguration.CompressionLevel = .bestCompression) -> [UInt8]? {
        var input = ByteBuffer(bytes: body)
        guard var output = try? input.compress(with: .gzip(configuration: .init(compressionLevel: level))),
            output.readableBytes < body.count
        else { return nil }
        return output.readBytes(length: output.readableBytes)
    }
}

/// `Accept-Encoding` negotiation (RFC 9110, section 12.5.3) for the one coding we send. Reads the
/// header as bytes (``HeaderList``): no allocation on the hot path.
enum ContentCoding {
    /// What a request's `Accept-Encoding` values say of gzip, read one after the other: the first
    /// element naming gzip decides; else the last `*`.
    struct Acceptance {
        private var wildcard: Bool?
        private var gzip: Bool?

        /// An element named gzip: the values after it change nothing.
        var isDecided: Bool { gzip != nil }
        var acceptsGzip: Bool { gzip ?? wildcard ?? false }

        /// Reads one `Accept-Encoding` value (its bytes).
        mutating func read(_ value: UnsafeBufferPointer<UInt8>) {
            guard !isDecided else { return }
            _ = HeaderList.containsElement(in: value) { element in
                let semicolon = element.firstIndex(of: UInt8(ascii: ";")) ?? element.count
                let coding = HeaderList.trimmed(UnsafeBufferPointer(rebasing: element[..<semicolon]))
                let isGzip = HeaderList.equalsIgnoringCase(coding, "gzip") || HeaderList.equalsIgnoringCase(coding, "x-gzip")
                let isWildcard = coding.count == 1 && coding[0] == UInt8(ascii: "*")
                guard isGzip || isWildcard else { return false }
                let accepted = !hasZeroQuality(UnsafeBufferPointer(rebasing: element[semicolon...]))
                if isGzip {
                    gzip = accepted
                    return true
                }
                wildcard = accepted
                return false
            }
        }
    }

    /// Whether a coding's parameters (`;q=0`, from the first `;`) give it quality zero.
    private static func hasZeroQuality(_ parameters: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start < parameters.count {
            let end = parameters[(start + 1)...].firstIndex(of: UInt8(ascii: ";")) ?? parameters.count
            let parameter = HeaderList.trimmed(UnsafeBufferPointer(rebasing: parameters[(start + 1)..<end]))
            if parameter.count > 2, HeaderList.equalsIgnoringCase(parameter[..<2], "q="),
                // Rare (clients that send q-values): parsed as a number, as it always was.
                Double(String(decoding: parameter[2...], as: UTF8.self)) == 0
            {
                return true
            }
            start = end
        }
        return false
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs: HTTP's optional whitespace (RFC 9110, 5.6.3).
    /// Not TaksiScreens' `trimmingSpaces`, which trims spaces only because screen files treat tabs
    /// as errors.
    var trimmingOptionalWhitespace: SubSequence {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
