import CompressNIO
import NIOCore
import NIOHTTP1
import TaksiScreens

/// One resource's precomputed responses: the identity body and, when it is smaller, a gzip body,
/// each with its strong `ETag` and its `304`. Picking one is a header scan; nothing is encoded.
final class Representations: Sendable {
    /// One content coding of the resource.
    struct Form: Sendable {
        let full: HTTPResponse
        let notModified: HTTPResponse
        let etag: String
    }

    let identity: Form
    let gzip: Form?

    /// - Parameters:
    ///   - body: the identity bytes.
    ///   - headers: headers every form carries (variant, set version, `Cache-Control`).
    ///   - vary: request headers that chose this resource; `Accept-Encoding` is added when there is a gzip form.
    init(body: [UInt8], route: String, variant: String?, headers: [(String, String)], vary: [String]) {
        let gzipped = Self.gzip(body)
        let varyValue = (vary + (gzipped == nil ? [] : ["Accept-Encoding"])).joined(separator: ", ")
        var shared = headers
        if !varyValue.isEmpty { shared.append(("Vary", varyValue)) }
        let tag = Self.entityTag(body)
        identity = Self.form(body: body, etag: "\"\(tag)\"", encoding: nil, headers: shared, route: route, variant: variant)
        gzip = gzipped.map {
            Self.form(body: $0, etag: "\"\(tag)-gzip\"", encoding: "gzip", headers: shared, route: route, variant: variant)
        }
    }

    /// The response for a request's `Accept-Encoding` and `If-None-Match`.
    func response(to request: HTTPHeaders) -> HTTPResponse {
        let form = gzip.flatMap { ContentCoding.acceptsGzip(request) ? $0 : nil } ?? identity
        return Self.matches(headers: request, etag: form.etag) ? form.notModified : form.full
    }

    /// `<16 hex digits>`: a digest of the body, so equal bytes get equal tags on every replica.
    static func entityTag(_ bytes: [UInt8]) -> String {
        var digest = FNV1a()
        digest.combine(bytes)
        return digest.hexDigest
    }

    /// Whether `If-None-Match` names `etag` (or is `*`); weak comparison, as RFC 9110 asks for it.
    static func matches(headers: HTTPHeaders, etag: String) -> Bool {
        guard headers.contains(name: "If-None-Match") else { return false }
        for value in headers[canonicalForm: "If-None-Match"] {
            let candidate = value.trimmingOptionalWhitespace
            if candidate == "*" { return true }
            let tag = candidate.hasPrefix("W/") ? candidate.dropFirst(2) : candidate
            if tag == etag[...] { return true }
        }
        return false
    }

    static func form(
        body: [UInt8], etag: String, encoding: String?, headers: [(String, String)], route: String, variant: String?
    ) -> Form {
        var validators = headers + [("ETag", etag)]
        if let encoding { validators.append(("Content-Encoding", encoding)) }
        var full = HTTPResponse(status: .ok, json: ByteBuffer(bytes: body), headers: validators)
        full.route = route
        full.variant = variant
        var notModified = HTTPResponse(notModified: validators.filter { $0.0 != "Content-Encoding" })
        notModified.route = route
        notModified.variant = variant
        return Form(full: full.precomputed(), notModified: notModified.precomputed(), etag: etag)
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
/// header in place: no allocation on the hot path.
enum ContentCoding {
    /// Whether the client accepts gzip: listed (or `x-gzip`, or `*`) with a non-zero quality. A
    /// request without the header, or with `identity` only, gets the identity body.
    static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        var wildcard: Bool?
        for (name, value) in headers where name.utf8.count == 15 && equalsIgnoringCase(name[...], "accept-encoding") {
            for element in value.split(separator: ",") {
                var parameters = element.split(separator: ";").makeIterator()
                guard let coding = parameters.next()?.trimmingOptionalWhitespace else { continue }
                var accepted = true
                while let parameter = parameters.next() {
                    let parameter = parameter.trimmingOptionalWhitespace
                    if parameter.count > 2, equalsIgnoringCase(parameter.prefix(2), "q="), Double(parameter.dropFirst(2)) == 0 {
                        accepted = false
                    }
                }
                if equalsIgnoringCase(coding, "gzip") || equalsIgnoringCase(coding, "x-gzip") { return accepted }
                if coding == "*" { wildcard = accepted }
            }
        }
        return wildcard ?? false
    }

    /// ASCII case-insensitive equality with a lower-case literal.
    static func equalsIgnoringCase(_ text: Substring, _ lowercase: StaticString) -> Bool {
        guard text.utf8.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            zip(text.utf8, expected).allSatisfy { byte, wanted in (byte | (byte >= 65 && byte <= 90 ? 0x20 : 0)) == wanted }
        }
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
