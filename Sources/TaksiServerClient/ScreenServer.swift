public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// One taksi-server, as an app talks to it: skeletons and their data, submits and deep links,
/// with the headers that pick the screens' variant on every request.
///
/// Make one for the app and share it: it is `Sendable`, and what it keeps (each screen's last
/// revision, the screens whose skeleton must be fetched past the caches) is behind a lock.
///
/// ```swift
/// let server = ScreenServer(baseURL: URL(string: "https://screens.example.com")!, userID: installID)
/// switch await server.load("products/espresso-cups") {
/// case .success(let screen): show(screen)          // screen.skeleton, then screen.data
/// case .failure(let error): showError(error)
/// }
/// ```
public final class ScreenServer: Sendable {
    /// How often a request is made again before its error is returned.
    public struct Retry: Sendable, Equatable {
        /// The passes of a ``ScreenServer/load(_:)``: skeleton and data, again while the server
        /// answers the data `412` (it no longer has the skeleton just fetched) or gives no answer.
        /// 4 passes with pauses of 0.5 s and 0.75 s before the third and fourth: long enough for a
        /// fleet in a rollout to agree, short enough for a person waiting.
        public var loads: Int
        /// The sends of one submit, with the same idempotency key, while no answer comes back (the
        /// server runs it once however often it is sent).
        public var submits: Int
        /// The unit of the pauses: before pass `n` (from the third), `(n - 1) × pause`.
        public var pause: TimeInterval

        public init(loads: Int = 4, submits: Int = 2, pause: TimeInterval = 0.25) {
            self.loads = max(1, loads)
            self.submits = max(1, submits)
            self.pause = max(0, pause)
        }
    }

    /// The server's address, e.g. `https://screens.example.com` (a path prefix is kept).
    public let baseURL: URL
    /// Sent as `X-Taksi-Version`: the screens are served per app version.
    public let appVersion: String
    /// Sent as `X-Taksi-User`: a stable, opaque id of the user or install, for experiments.
    public let userID: String?
    /// Sent as `X-Taksi-Alternative`: forces an alternative (QA builds, previews).
    public let alternative: String?
    /// Sent as `X-Taksi-Platform`: for experiments that target platforms (`ios`, `android`).
    public let platform: String?
    /// Sent as `Accept-Language`, most preferred first.
    public let languages: [String]
    public let retry: Retry
    /// Where the last good screen of each path is kept, to show when the server cannot be
    /// reached; nil keeps nothing (see ``ScreenKeeping``).
    public let keeping: ScreenKeeping?
    /// Whether the skeletons a screen can open are fetched ahead (see ``init(baseURL:appVersion:userID:alternative:platform:languages:session:retry:keeping:prefetch:)``).
    public let prefetch: Bool
    let session: URLSession
    let prefetched = PrefetchedSkeletons()
    let memory = SkeletonMemory()
    /// The kept pairs, when ``keeping`` says where.
    let kept: KeptScreens?

    /// - Parameters:
    ///   - baseURL: the server, e.g. `https://screens.example.com`.
    ///   - appVersion: the app's version (`2.1.0`, `2.1.0-beta.2`); by default the bundle's
    ///     `CFBundleShortVersionString`.
    ///   - userID: stable per user or install; `nil` outside experiments.
    ///   - alternative: an alternative to force (QA builds); screens without it answer their default.
    ///   - platform: the app's platform, for experiments that target platforms; by default the
    ///     one it was built for (``currentPlatform``).
    ///   - languages: the person's languages, most preferred first; by default the device's.
    ///   - session: the `URLSession` to use; its cache revalidates skeletons (`ETag`, `304`).
    ///   - retry: how often a load or submit is made again; see ``Retry``.
    ///   - keeping: where to keep the last good screen of each path, shown (marked
    ///     ``LoadedScreen/keptAt``) when a load cannot reach the server; nil keeps nothing.
    ///   - prefetch: whether, after a load, the skeletons of the screens it can open (its
    ///     skeleton's `Link: <...>; rel=prefetch`, at most 8) are fetched in the background, so
    ///     opening one costs only its data's round trip. Off by default: turn it on where the
    ///     network allows (not on a constrained or expensive one).
    public init(
        baseURL: URL, appVersion: String? = nil, userID: String? = nil, alternative: String? = nil,
        platform: String? = ScreenServer.currentPlatform, languages: [String] = Locale.preferredLanguages, session: URLSession = .shared,
        retry: Retry = Retry(), keeping: ScreenKeeping? = nil, prefetch: Bool = false
    ) {
        self.baseURL = baseURL
        self.appVersion =
            appVersion ?? (Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String) ?? "1.0.0"
        self.userID = userID
        self.alternative = alternative
        self.platform = platform
        self.languages = languages
        self.session = session
        self.retry = retry
        self.keeping = keeping
        self.kept = keeping.map(KeptScreens.init)
        self.prefetch = prefetch
    }

    /// Removes the screens kept for this server's user (``ScreenKeeping``): call it at sign-out.
    public func forgetKeptScreens() {
        kept?.forget(user: userID)
    }

    /// The platform the app was built for, as experiments name it: `ios`, `android`, `macos`,
    /// `tvos`, `watchos`, `visionos`; nil elsewhere.
    public static var currentPlatform: String? {
        #if os(iOS)
        "ios"
        #elseif os(Android)
        "android"
        #elseif os(macOS)
        "macos"
        #elseif os(tvOS)
        "tvos"
        #elseif os(watchOS)
        "watchos"
        #elseif os(visionOS)
        "visionos"
        #else
        nil
        #endif
    }

    /// The `Accept-Language` value of ``languages``: `de-DE, en;q=0.9` (at most six).
    var acceptLanguage: String? {
        let chosen = languages.filter { !$0.isEmpty }.prefix(6)
        guard !chosen.isEmpty else { return nil }
        return chosen.enumerated().map { index, language in
            index == 0 ? language : "\(language);q=0.\(10 - index)"
        }.joined(separator: ", ")
    }

    /// A request to `<base>/<path>?<query>` (both percent-encoded already) with the headers that
    /// pick the variant.
    func request(_ path: String, query: String? = nil) -> Result<URLRequest, TaksiServerError> {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false), components.host != nil else {
            return .failure(.invalidRequest("\(baseURL) is not a server's address, like https://screens.example.com"))
        }
        var base = components.percentEncodedPath
        while base.hasSuffix("/") { base.removeLast() }
        components.percentEncodedPath = base + "/" + path
        components.percentEncodedQuery = query
        guard let url = components.url else { return .failure(.invalidRequest("no URL for \(path)")) }
        var request = URLRequest(url: url)
        if let timeout = keeping?.timeout { request.timeoutInterval = timeout }
        request.setValue(appVersion, forHTTPHeaderField: "X-Taksi-Version")
        if let userID { request.setValue(userID, forHTTPHeaderField: "X-Taksi-User") }
        if let alternative { request.setValue(alternative, forHTTPHeaderField: "X-Taksi-Alternative") }
        if let platform { request.setValue(platform, forHTTPHeaderField: "X-Taksi-Platform") }
        if let acceptLanguage { request.setValue(acceptLanguage, forHTTPHeaderField: "Accept-Language") }
        request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Request-Id")
        return .success(request)
    }

    /// Sends `request`; an answer of any status is a success, no answer a ``TaksiServerError/transport(code:message:)``.
    func send(_ request: URLRequest) async -> Result<Answer, TaksiServerError> {
        let running = RunningTask()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Answer, TaksiServerError>, Never>) in
                let task = session.dataTask(with: request) { body, response, error in
                    if let http = response as? HTTPURLResponse, error == nil {
                        continuation.resume(returning: .success(Answer(http, body: body ?? Data())))
                    } else {
                        let code = (error as? URLError)?.errorCode ?? URLError.Code.unknown.rawValue
                        continuation.resume(
                            returning: .failure(.transport(code: code, message: error?.localizedDescription ?? "no HTTP answer")))
                    }
                }
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
    }

    /// Waits before pass `attempt` (counted from 1) of a load: nothing before the first two.
    func pause(before attempt: Int) async {
        guard attempt > 2, retry.pause > 0 else { return }
        // At most an hour: `pause` is the app's to set, and UInt64(_:) traps past 2^64 nanoseconds.
        let seconds = min(Double(attempt - 1) * retry.pause, 3600)
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}

/// An answer of any status: its body and the headers this library reads.
struct Answer: Sendable {
    let status: Int
    let body: Data
    let headers: [String: String]

    init(status: Int, body: Data, headers: [String: String]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    init(_ response: HTTPURLResponse, body: Data) {
        status = response.statusCode
        self.body = body
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        self.headers = headers
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The error body's code and message (`{"error": {"code", "message"}}`) as an error.
    var error: TaksiServerError {
        let error = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let details = error?["error"] as? [String: Any]
        return .status(status, code: details?["code"] as? String, message: details?["message"] as? String)
    }

    /// A comma-separated header's items, percent-decoded: `X-Taksi-Degraded`.
    func list(_ name: String) -> [String] {
        (header(name) ?? "").split(separator: ",").map {
            let item = $0.trimmingCharacters(in: .whitespaces)
            return item.removingPercentEncoding ?? item
        }.filter { !$0.isEmpty }
    }
}

/// The data task of a ``ScreenServer/send(_:)``, to cancel when its Swift task is: started once,
/// cancelled at once when the cancellation came first.
final class RunningTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        if cancelled { task.cancel() }
        task.resume()
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// What a ``ScreenServer`` keeps between requests, by screen path without its query: the
/// revision of the last skeleton fetched, and the screens whose skeleton the server no longer
/// had (their next skeleton is fetched past `URLSession`'s cache and any CDN).
final class SkeletonMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var revisions: [String: String] = [:]
    private var outdated: Set<String> = []

    func revision(of screen: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return revisions[screen]
    }

    func remember(_ revision: String?, of screen: String) {
        lock.lock()
        defer { lock.unlock() }
        revisions[screen] = revision
    }

    func markOutdated(_ screen: String) {
        lock.lock()
        defer { lock.unlock() }
        outdated.insert(screen)
    }

    func clearOutdated(_ screen: String) {
        lock.lock()
        defer { lock.unlock() }
        outdated.remove(screen)
    }

    func isOutdated(_ screen: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return outdated.contains(screen)
    }
}
