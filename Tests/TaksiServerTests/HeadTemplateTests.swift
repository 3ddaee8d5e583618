import NIOCore
import NIOHTTP1
import TaksiScreens
import Testing

@testable import TaksiServer

/// A response's head made from its representation's template is the head its fields encode to,
/// and reads back as those fields.
@Suite("Head templates")
struct HeadTemplateTests {
    static let tag = EntityTag(of: Array("{}".utf8))
    static let headers = [("X-Taksi-Variant", "home|*|default"), ("Vary", "X-Taksi-Skeleton"), ("Cache-Control", "private, no-cache")]

    /// The fields of a `200`, in the order every representation sends them.
    static func fullFields(bodySize: Int, encoding: String?) -> HTTPHeaders {
        var fields = HTTPHeaders([("Content-Type", HTTPResponse.jsonType), ("Content-Length", String(bodySize))])
        fields.add(contentsOf: [
            ("X-Taksi-Variant", "home|*|default"), ("Vary", "X-Taksi-Skeleton, Accept-Encoding"), ("Cache-Control", "private, no-cache"),
            ("ETag", Self.tag.text),
        ])
        if let encoding { fields.add(name: "Content-Encoding", value: encoding) }
        return fields
    }

    @Test("a 200 and a 304 made from the template are the heads their fields encode to, and read back as them", arguments: [nil, "gzip"])
    func heads(encoding: String?) {
        let template = HeadTemplate(headers: Self.headers, vary: "Accept-Encoding")
        let body = Array(#"{"interface_data":[]}"#.utf8)
        let full = template.response(body: body, tag: Self.tag, encoding: encoding, notModified: false, label: .data, variant: "v")
        let fields = Self.fullFields(bodySize: body.count, encoding: encoding)
        #expect(full.status == .ok)
        #expect(full.encodedHead == HTTPResponse.encodeHead(status: .ok, headers: fields))
        #expect(full.headers == fields)
        #expect(full.body == ByteBuffer(bytes: body))

        let notModified = template.response(body: body, tag: Self.tag, encoding: encoding, notModified: true, label: .data, variant: "v")
        var unchanged = fields
        for name in ["Content-Type", "Content-Length", "Content-Encoding"] { unchanged.remove(name: name) }
        #expect(notModified.status == .notModified)
        #expect(notModified.encodedHead == HTTPResponse.encodeHead(status: .notModified, headers: unchanged))
        #expect(notModified.body.readableBytes == 0)
    }

    @Test("a Vary the headers lack is added after them; none is added when nothing varies")
    func vary() {
        let template = HeadTemplate(headers: [("Cache-Control", "no-cache")], vary: "Accept-Encoding")
        let response = template.response(body: [], tag: Self.tag, encoding: nil, notModified: false, label: .data, variant: nil)
        #expect(response.headers.map(\.name) == ["Content-Type", "Content-Length", "Cache-Control", "Vary", "ETag"])
        let plain = HeadTemplate(headers: [("Cache-Control", "no-cache")])
        #expect(
            !plain.response(body: [], tag: Self.tag, encoding: nil, notModified: false, label: .data, variant: nil).headers.contains(
                name: "Vary"))
    }

    @Test("setting a response's headers drops its encoded head: what is written is what was set")
    func settingHeaders() {
        var response = HeadTemplate(headers: Self.headers).response(
            body: [1], tag: Self.tag, encoding: nil, notModified: false, label: .data, variant: nil)
        response.headers.add(name: "Idempotent-Replayed", value: "true")
        #expect(response.encodedHead == nil)
        var written = ByteBuffer()
        response.writeHead(to: &written)
        #expect(String(buffer: written).hasSuffix("ETag: \(Self.tag.text)\r\nIdempotent-Replayed: true\r\n"))
    }

    @Test("a data response's template varies by Accept-Encoding from the size that has a gzip form")
    func bySize() {
        let heads = ResponseHeads([("Cache-Control", "no-cache")])
        let small = heads.template(bodySize: ResponseMemo.smallestGzipped - 1)
        let large = heads.template(bodySize: ResponseMemo.smallestGzipped)
        #expect(heads.template(bodySize: 1) === small)
        #expect(
            !small.response(body: [], tag: Self.tag, encoding: nil, notModified: false, label: .data, variant: nil).headers.contains(
                name: "Vary"))
        #expect(
            large.response(body: [], tag: Self.tag, encoding: nil, notModified: false, label: .data, variant: nil).headers["Vary"] == [
                "Accept-Encoding"
            ])
    }

    @Test("a tag is the body's FNV-1a digest in 16 hexadecimal digits, quoted; the gzip form's ends in -gzip")
    func tags() {
        let body = Array(#"{"interface_data":[]}"#.utf8)
        var digest = FNV1a()
        digest.combine(body)
        let tag = EntityTag(of: body)
        #expect(tag.text == "\"\(digest.hexDigest)\"")
        #expect(tag.gzipForm.text == "\"\(digest.hexDigest)-gzip\"")
        #expect(tag.gzipForm.text.utf8.count == EntityTag.longest)
        var written = ByteBuffer()
        tag.write(to: &written)
        #expect(String(buffer: written) == tag.text)
    }
}
