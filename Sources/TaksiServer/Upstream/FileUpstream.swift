import Foundation
import TaksiSchema
import TaksiScreens

/// An upstream answered from files, for working offline (`"upstreams": {"auth": "file:upstreams/auth"}`):
///
/// - A GET of `/v2/networks?x=1` reads `DIR/v2/networks.x=1.json` when that file exists (the
///   first query item with a file of its own, name and value percent-encoded: how fixtures page,
///   `repositories.page=2.json`), else `DIR/v2/networks.json`. Its response headers, where it
///   has any, are in `DIR/v2/networks.headers` (beside `networks.x=1.json`, `networks.x=1.headers`):
///   `Name: value` lines, of which a source that pages by `Link` reads `Link`.
/// - Any other method reads `DIR/<path>.<METHOD>.json`, a list of answers, the first whose `when`
///   the request's JSON body matches (each of its keys equal in the body; no `when` matches all):
///
/// ```json
/// {"answers": [
///   {"when": {"password": "wrong"}, "status": 401, "body": {"message": "Wrong email or password"}},
///   {"status": 201, "body": {"token": "offline-token"}}
/// ]}
/// ```
///
/// A path with no file, or no matching answer, is answered 404. `.`, `..`, empty segments and
/// control characters are refused, so a request value can never leave the directory.
struct FileUpstream {
    let directory: String

    /// The file for a target (`/sessions?x=1`) with `suffix` (`.json`, `.POST.json`); nil when a
    /// segment is unsafe.
    func file(for target: String, suffix: String) -> String? {
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let segments = path.split(separator: "/").map { (try? PercentEncoding.decode($0)) ?? String($0) }
        // The rule data requests are held to (no empty, `.` or `..` segment, no control character,
        // NUL above all, which would cut the path short in open(2)), checked again at the file
        // system; a decoded `/` would add a segment.
        let unsafe = { (segment: String) in segment.contains("/") || HTTPSource.pathSegmentProblem(segment) != nil }
        guard !segments.isEmpty, !segments.contains(where: unsafe) else { return nil }
        return ([directory] + segments).joined(separator: "/") + suffix
    }

    /// The file answering a GET of `target`: the one named by its path and the first query item
    /// that has one (``file(for:suffix:)``'s rule for the path; the item percent-encoded, so it
    /// adds no segment), else the path's own; nil when a segment is unsafe.
    func answerFile(for target: String) -> String? {
        guard let plain = file(for: target, suffix: ".json") else { return nil }
        guard let mark = target.firstIndex(of: "?") else { return plain }
        let stem = plain.dropLast(".json".count)
        for item in target[target.index(after: mark)...].split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = (try? PercentEncoding.decode(pair[0], plusIsSpace: true)) ?? String(pair[0])
            let value = pair.count > 1 ? (try? PercentEncoding.decode(pair[1], plusIsSpace: true)) ?? String(pair[1]) : ""
            let suffix = "." + PercentEncoding.encode(name) + "=" + PercentEncoding.encode(value) + ".json"
            // A file name holds 255 bytes at most; a longer item names no file.
            guard suffix.utf8.count < 200 else { continue }
            let candidate = String(stem) + suffix
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return plain
    }

    /// The response headers of an answer file (`x.json`), from `x.headers` beside it: one
    /// `Name: value` a line; none when there is no such file.
    func headers(of file: String) -> [(name: String, value: String)] {
        guard file.hasSuffix(".json"), let data = FileManager.default.contents(atPath: String(file.dropLast(".json".count)) + ".headers")
        else { return [] }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { line in
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            return (pair[0].trimmingCharacters(in: .whitespaces), pair[1].trimmingCharacters(in: .whitespaces))
        }
    }

    /// The answer to an action's request.
    func answer(_ submit: UpstreamClient.Submit) -> Result<UpstreamClient.Answer, UpstreamFailure> {
        let notFound = Result<UpstreamClient.Answer, UpstreamFailure>.success(UpstreamClient.Answer(status: 404, body: nil))
        guard let file = file(for: submit.target, suffix: HTTPSource.answerFileSuffix(submit.method.rawValue)),
            let data = FileManager.default.contents(atPath: file)
        else { return notFound }
        if submit.method == .GET {
            guard data.count <= submit.maxBytes else { return .failure(.tooLarge(limit: submit.maxBytes)) }
            return UpstreamClient.answer(status: 200, bytes: Array(data))
        }
        guard case .success(let value) = UpstreamClient.parse(Array(data)), let answers = value.value.objectValue?["answers"]?.arrayValue
        else {
            return .failure(.invalidJSON("\(file) is not {\"answers\": [{\"when\": {...}, \"status\": 200, \"body\": {...}}]}"))
        }
        let body = submit.body.flatMap { try? JSONParser.parse($0).value }
        for answer in answers {
            guard let fields = answer.objectValue else { continue }
            if let when = fields["when"]?.objectValue {
                guard let sent = body?.objectValue, when.allSatisfy({ sent[$0.key] == $0.value }) else { continue }
            }
            let status = fields["status"]?.exactInteger ?? 200
            let bytes = fields["body"].map { JSONWriter.bytes($0) } ?? []
            guard bytes.count <= submit.maxBytes else { return .failure(.tooLarge(limit: submit.maxBytes)) }
            return .success(UpstreamClient.Answer(status: status, body: fields["body"]))
        }
        return notFound
    }
}
