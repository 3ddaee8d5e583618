import Foundation
import TaksiSchema
import TaksiScreens

/// An upstream answered from files, for working offline (`"upstreams": {"auth": "file:upstreams/auth"}`):
///
/// - A GET of `/v2/networks?x=1` reads `DIR/v2/networks.json` (the query is ignored).
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
