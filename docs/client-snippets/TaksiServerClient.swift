import Foundation
import Taksi

/// Fetches screens from taksi-server and submits their actions. `path` is a screen path
/// (percent-encoded, as navigation targets are) with an optional query string: "home",
/// "home?name=Ada", "bikes/stations/velib". Safe to call from several tasks at once: its own
/// state is behind locks.
final class TaksiServerClient: TaksiAPIClient, Sendable {
    private let baseURL: URL
    private let session: URLSession
    private let appVersion: String
    private let userID: String?
    private let alternative: String?
    /// Each screen's skeleton revision, by path without the query; see `SkeletonRevisions`.
    let revisions = SkeletonRevisions()
    /// Submits waiting for the client to ask for their path's data; see `submit` below.
    let submits = PendingSubmits()

    init(
        baseURL: URL,                       // e.g. https://screens.example.com (no trailing slash)
        session: URLSession = .shared,
        appVersion: String = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String ?? "1.0",
        userID: String?,                    // stable per user or install; nil outside experiments
        alternative: String? = nil          // force an A/B alternative (QA builds): screens without it answer their default
    ) {
        self.baseURL = baseURL
        self.session = session
        self.appVersion = appVersion
        self.userID = userID
        self.alternative = alternative
    }

    func fetchInterface(for path: String) async -> Interface? {
        await fetch(path, data: false, decoder: JSONDecoder())
    }

    func fetchInterfaceData(for path: String, using decoder: JSONDecoder) async -> InterfaceData? {
        // The decoder comes from TaksiService: it knows the dynamic components of the skeleton.
        if let submit = submits.take(path) { return await post(submit, to: path, decoder: decoder) }
        return await fetch(path, data: true, decoder: decoder)
    }

    private func fetch<Payload: Decodable>(_ path: String, data: Bool, decoder: JSONDecoder) async -> Payload? {
        let (name, query) = Self.split(path)
        guard var request = request(name + (data ? "/data" : ""), query: data ? query : nil, screen: name, data: data) else { return nil }
        if !data, revisions.takeOutdated(name) {
            // The server no longer had the skeleton we showed: past URLSession's cache and any CDN.
            request.cachePolicy = .reloadIgnoringLocalCacheData
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        }
        guard let (body, http) = await send(request) else { return nil }
        if !data, http.statusCode == 200, let revision = http.value(forHTTPHeaderField: "X-Taksi-Skeleton") {
            revisions.remember(revision, for: name)
        }
        if data, http.statusCode == 412 { revisions.markOutdated(name) }   // skeleton_outdated: load the screen again
        guard http.statusCode == 200 else { return nil }
        return try? decoder.decode(Payload.self, from: body)
    }

    /// `POST <base>/screens/<screen>/actions/<name>` with the inputs; every answer is a patch.
    func post(_ submit: PendingSubmits.Submit, to path: String, decoder: JSONDecoder) async -> InterfaceData? {
        let screen = path.components(separatedBy: "/actions/").first ?? path
        guard var request = request(path, query: nil, screen: screen, data: true),
            let body = try? JSONEncoder().encode(["inputs": submit.inputs])
        else { return nil }
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(submit.idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        // 200, 201, 422 (invalid inputs, or the upstream refused), 502, 504: every answer is a patch.
        guard let (answer, http) = await send(request) else { return nil }
        if http.statusCode == 412 { revisions.markOutdated(screen) }
        struct Next: Decodable { let then: AnyAction? }              // decoded by the client's action decoder
        submits.finish(path, then: (try? JSONDecoder().decode(Next.self, from: answer))?.then?.action)
        return try? decoder.decode(InterfaceData.self, from: answer)
    }

    /// A request to `<base>/screens/<path>` with every header that selects the variant, the same
    /// on the skeleton, its data and its submits.
    private func request(_ path: String, query: String?, screen: String, data: Bool) -> URLRequest? {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
        // Targets are percent-encoded already (values fill whole segments); a path or query the app
        // wrote itself may not be ("q=swift nio", "café"), and URLComponents traps on those:
        // whatever is not encoded is, and the escapes already there are kept.
        components.percentEncodedPath += "/screens/" + Self.encoded(path, allowing: .urlPathAllowed)
        components.percentEncodedQuery = query.map { Self.encoded($0, allowing: .urlQueryAllowed) }
        guard let url = components.url else { return nil }
        var request = URLRequest(url: url)
        request.setValue(appVersion, forHTTPHeaderField: "X-Taksi-Version")
        if let userID { request.setValue(userID, forHTTPHeaderField: "X-Taksi-User") }
        if let alternative { request.setValue(alternative, forHTTPHeaderField: "X-Taksi-Alternative") }
        request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Request-Id")
        // Data and submits are made for the skeleton shown: the server answers for it (or 412).
        if data, let revision = revisions.revision(of: screen) {
            request.setValue(revision, forHTTPHeaderField: "X-Taksi-Skeleton")
        }
        return request
    }

    private func send(_ request: URLRequest) async -> (Data, HTTPURLResponse)? {
        // dataTask, not data(for:), which needs iOS 15.
        await withCheckedContinuation { continuation in
            session.dataTask(with: request) { body, response, _ in
                guard let body, let http = response as? HTTPURLResponse else { return continuation.resume(returning: nil) }
                continuation.resume(returning: (body, http))
            }.resume()
        }
    }

    /// "home?name=Ada" as ("home", "name=Ada").
    private static func split(_ path: String) -> (name: String, query: String?) {
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        return (parts.first ?? "", parts.count > 1 ? parts[1] : nil)
    }

    /// `text` with every character outside `allowed` percent-encoded (its UTF-8 bytes), and a `%`
    /// that starts no `%XX` escape too: "swift nio" as "swift%20nio", "%C3%A9" as it is.
    static func encoded(_ text: String, allowing allowed: CharacterSet) -> String {
        let scalars = Array(text.unicodeScalars)
        var output = ""
        for (index, scalar) in scalars.enumerated() {
            let escape = scalar == "%" && index + 2 < scalars.count
                && scalars[index + 1].properties.isASCIIHexDigit && scalars[index + 2].properties.isASCIIHexDigit
            if escape || (scalar != "%" && allowed.contains(scalar)) {
                output.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { output += String(format: "%%%02X", byte) }
            }
        }
        return output
    }
}
