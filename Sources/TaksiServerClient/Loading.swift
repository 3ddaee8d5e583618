public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A screen as the server answered it: the skeleton, and the data made for that skeleton.
///
/// Hand both to the Taksi client (`Interface` from ``skeleton``, `InterfaceData` from ``data``).
/// The data failing leaves the skeleton's placeholders: a screen to show, not an error.
public struct LoadedScreen: Sendable, Equatable {
    /// The screen's path and the data's query, percent-encoded.
    public let path: ScreenPath
    /// The skeleton's body: `{"components": [...]}`.
    public let skeleton: Data
    /// The skeleton's revision (`X-Taksi-Skeleton`), sent with the data and the submits.
    public let revision: String?
    /// The variant served (`X-Taksi-Variant`): the app version range and alternative.
    public let variant: String?
    /// The language of the text (`Content-Language`), when the screen is localized.
    public let language: String?
    /// The data's body (`{"interface_data": [...]}`), or why there is none.
    public let data: Result<Data, TaksiServerError>
    /// The sources that failed, whose components keep their placeholders (`X-Taksi-Degraded`).
    public let degraded: [String]
    /// The passes it took: more than 1 when the server answered `412` during a rollout.
    public let passes: Int
    /// When this screen was kept, for one shown from what ``ScreenServer/keeping`` kept because
    /// the server could not be reached (show it as it is, say it may be out of date); nil for one
    /// the server just answered.
    public let keptAt: Date?
    /// The skeleton's `ETag`, which revalidates a kept skeleton.
    let etag: String?

    /// Whether it is a kept screen shown because the server could not be reached (``keptAt``).
    public var isStale: Bool { keptAt != nil }

    /// How long ago it was kept; nil for a screen the server just answered.
    public var age: TimeInterval? { keptAt.map { Date().timeIntervalSince($0) } }

    /// A screen made by hand, for an app's tests and SwiftUI previews: what ``ScreenServer/load(_:)``
    /// would give for a skeleton and its data, without a server.
    ///
    /// ```swift
    /// let screen = LoadedScreen(
    ///     path: ScreenPath("home"), skeleton: Data(#"{"components": []}"#.utf8),
    ///     data: .success(Data(#"{"interface_data": []}"#.utf8)))
    /// ```
    public init(
        path: ScreenPath, skeleton: Data, revision: String? = nil, variant: String? = nil, language: String? = nil,
        data: Result<Data, TaksiServerError>, degraded: [String] = [], passes: Int = 1, keptAt: Date? = nil
    ) {
        self.init(
            path: path, skeleton: skeleton, revision: revision, variant: variant, language: language, data: data, degraded: degraded,
            passes: passes, keptAt: keptAt, etag: nil)
    }

    init(
        path: ScreenPath, skeleton: Data, revision: String?, variant: String?, language: String?, data: Result<Data, TaksiServerError>,
        degraded: [String], passes: Int, keptAt: Date?, etag: String?
    ) {
        self.path = path
        self.skeleton = skeleton
        self.revision = revision
        self.variant = variant
        self.language = language
        self.data = data
        self.degraded = degraded
        self.passes = passes
        self.keptAt = keptAt
        self.etag = etag
    }

    /// The identifiers of the skeleton's components, nested ones too: whether a form still has
    /// its fields.
    public var identifiers: Set<String> {
        var found: Set<String> = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if object["name"] is String, let identifier = object["identifier"] as? String { found.insert(identifier) }
                object.values.forEach(walk)
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        if let json = try? JSONSerialization.jsonObject(with: skeleton) { walk(json) }
        return found
    }
}

extension ScreenServer {
    /// Loads a screen: its skeleton, then the data made for it.
    ///
    /// `path` is a screen's path with the data's optional query: `"home"`, `"home?name=Ada"`,
    /// `"repositories?q=swift nio"`, or a navigation target as the server sent it. Whatever a URL
    /// cannot carry is percent-encoded (see ``ScreenPath``).
    ///
    /// The data request names the skeleton's revision. When the server no longer has that
    /// skeleton (`412 skeleton_outdated`: a deploy under way, another replica), the skeleton is
    /// fetched again past every cache and its data asked for again, up to ``Retry/loads`` passes;
    /// a pass that gets no answer, or a `502`, `503` or `504` (a balancer, a draining replica), is
    /// made again the same way.
    ///
    /// With ``keeping``, the last good screen of the path (its skeleton and the data made for it,
    /// undegraded) is kept, and its skeleton revalidated with `If-None-Match` (a `304` costs no
    /// body); a load that cannot reach the server (no answer, a 5xx, past the time limit) gives
    /// the kept screen instead, marked ``LoadedScreen/keptAt``.
    ///
    /// - Returns: the screen, whose ``LoadedScreen/data`` may be an error (placeholders stay), or
    ///   the error that left no skeleton: `404 screen_not_found`, no answer after every pass...
    public func load(_ path: String) async -> Result<LoadedScreen, TaksiServerError> {
        let path = ScreenPath(path)
        guard !path.isEmpty else { return .failure(.noScreen) }
        guard let kept else { return await fetch(path, revalidating: nil) }
        let key = keptKey(path)
        let pair = kept.pair(for: key, user: userID)
        let result = await fetch(path, revalidating: pair)
        switch result {
        case .success(let screen):
            if case .success(let data) = screen.data, screen.degraded.isEmpty {
                kept.keep(
                    KeptScreens.Pair(
                        key: key, skeleton: screen.skeleton, revision: screen.revision, variant: screen.variant, language: screen.language,
                        etag: screen.etag, data: data, keptAt: Date()),
                    user: userID)
                return result
            }
            // The skeleton came and its data did not: the kept pair is whole, and of one revision.
            if case .failure(let error) = screen.data, Self.isUnreachable(error), let pair {
                return .success(Self.screen(path, kept: pair))
            }
            return result
        case .failure(let error):
            guard Self.isUnreachable(error) else { return result }
            if let pair { return .success(Self.screen(path, kept: pair)) }
            // Nothing kept (a first launch): the skeleton shipped with the app, placeholders for data.
            guard let shipped = kept.bundled(path.screen, alternative: alternative, languages: languages) else { return result }
            return .success(
                LoadedScreen(
                    path: path, skeleton: shipped.skeleton.skeleton, revision: shipped.skeleton.revision,
                    variant: shipped.skeleton.variant, language: shipped.skeleton.language, data: .failure(error), degraded: [], passes: 1,
                    keptAt: shipped.madeAt, etag: shipped.skeleton.etag))
        }
    }

    /// What keeps a path's pair apart from every other: the server, the path with its query, and
    /// the inputs that choose the variant (the user's folder is apart already).
    func keptKey(_ path: ScreenPath) -> String {
        [baseURL.absoluteString, path.description, appVersion, alternative ?? "", platform ?? "", acceptLanguage ?? ""].joined(
            separator: "\n")
    }

    /// No answer, or one a server gives when it cannot serve (a 5xx): the kept screen is better.
    static func isUnreachable(_ error: TaksiServerError) -> Bool {
        switch error {
        case .transport: true
        case .status(let status, _, _): status >= 500
        default: false
        }
    }

    /// A kept pair as a screen, marked with when it was kept.
    static func screen(_ path: ScreenPath, kept pair: KeptScreens.Pair) -> LoadedScreen {
        LoadedScreen(
            path: path, skeleton: pair.skeleton, revision: pair.revision, variant: pair.variant, language: pair.language,
            data: .success(pair.data), degraded: [], passes: 1, keptAt: pair.keptAt, etag: pair.etag)
    }

    /// ``load(_:)`` from the server: skeleton (revalidated against `pair`'s when there is one),
    /// then its data, pass after pass.
    private func fetch(_ path: ScreenPath, revalidating pair: KeptScreens.Pair?) async -> Result<LoadedScreen, TaksiServerError> {
        var lastError = TaksiServerError.cancelled
        // The last skeleton whose data did not come (412, or no answer): placeholders beat nothing.
        var unfilled: (skeleton: Answer, error: TaksiServerError, passes: Int)?
        passes: for pass in 1...retry.loads {
            await pause(before: pass)
            if Task.isCancelled { return .failure(.cancelled) }
            let skeleton: Answer
            // Fetched ahead (prefetch), on the first pass only: a later pass is past every cache.
            let ahead = pass == 1 && !memory.isOutdated(path.screen) ? prefetched.take(path.screen) : nil
            let fetched: Result<Answer, TaksiServerError>
            if let ahead { fetched = .success(ahead) } else { fetched = await fetchSkeleton(path, revalidating: pair) }
            switch fetched {
            case .success(let answer) where answer.status == 200:
                skeleton = answer
                if ahead != nil { memory.remember(answer.header("X-Taksi-Skeleton"), of: path.screen) }
                prefetchLinked(from: answer)
            case .success(let answer) where Self.isPassing(answer.status):
                lastError = answer.error
                continue
            case .success(let answer): return .failure(answer.error)
            case .failure(let error):
                lastError = error
                // No answer at all, with a kept screen to show: the person waits no more passes.
                if pair != nil, case .transport = error { break passes }
                continue
            }
            let revision = skeleton.header("X-Taksi-Skeleton")
            switch await fetchData(path, revision: revision) {
            case .success(let answer) where answer.status == 412:
                memory.markOutdated(path.screen)
                unfilled = (skeleton, .skeletonOutdated, pass)
            case .success(let answer) where Self.isPassing(answer.status):
                unfilled = (skeleton, answer.error, pass)
            case .success(let answer):
                memory.clearOutdated(path.screen)
                return .success(
                    screen(path, skeleton: skeleton, data: answer.status == 200 ? .success(answer) : .failure(answer.error), passes: pass))
            case .failure(let error):
                unfilled = (skeleton, error, pass)
            }
        }
        if let unfilled {
            return .success(screen(path, skeleton: unfilled.skeleton, data: .failure(unfilled.error), passes: unfilled.passes))
        }
        return .failure(lastError)
    }

    /// `GET <base>/screens/<screen>`; past the caches when the server said it no longer had the
    /// last one. Remembers the revision.
    public func skeleton(_ path: String) async -> Result<Data, TaksiServerError> {
        let path = ScreenPath(path)
        guard !path.isEmpty else { return .failure(.noScreen) }
        switch await fetchSkeleton(path) {
        case .success(let answer) where answer.status == 200: return .success(answer.body)
        case .success(let answer): return .failure(answer.error)
        case .failure(let error): return .failure(error)
        }
    }

    /// `GET <base>/screens/<screen>/data?<query>` for the skeleton last fetched by this server's
    /// ``skeleton(_:)`` or ``load(_:)`` (its revision). A `412` marks the screen: its next skeleton
    /// is fetched past the caches.
    public func data(_ path: String) async -> Result<Data, TaksiServerError> {
        let path = ScreenPath(path)
        guard !path.isEmpty else { return .failure(.noScreen) }
        switch await fetchData(path, revision: memory.revision(of: path.screen)) {
        case .success(let answer) where answer.status == 200: return .success(answer.body)
        case .success(let answer) where answer.status == 412:
            memory.markOutdated(path.screen)
            return .failure(.skeletonOutdated)
        case .success(let answer): return .failure(answer.error)
        case .failure(let error): return .failure(error)
        }
    }

    /// A status worth another pass: the balancer or a draining replica, not the screen.
    static func isPassing(_ status: Int) -> Bool { status == 502 || status == 503 || status == 504 }

    /// The skeleton of `path`; a kept one's (`pair`) when the server says it is the same (`304`).
    private func fetchSkeleton(_ path: ScreenPath, revalidating pair: KeptScreens.Pair? = nil) async -> Result<Answer, TaksiServerError> {
        var request: URLRequest
        switch self.request("screens/" + path.screen) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        if memory.isOutdated(path.screen) {
            // The server no longer had the skeleton shown: past URLSession's cache and any CDN.
            request.cachePolicy = .reloadIgnoringLocalCacheData
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        } else if let etag = pair?.etag {
            request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        var answer = await send(request)
        if let pair, case .success(let revalidated) = answer, revalidated.status == 304 {
            var headers = revalidated.headers
            headers["x-taksi-skeleton"] = pair.revision ?? headers["x-taksi-skeleton"]
            headers["x-taksi-variant"] = pair.variant ?? headers["x-taksi-variant"]
            headers["content-language"] = pair.language ?? headers["content-language"]
            headers["etag"] = pair.etag
            answer = .success(Answer(status: 200, body: pair.skeleton, headers: headers))
        }
        if case .success(let skeleton) = answer, skeleton.status == 200 {
            memory.remember(skeleton.header("X-Taksi-Skeleton"), of: path.screen)
        }
        return answer
    }

    private func fetchData(_ path: ScreenPath, revision: String?) async -> Result<Answer, TaksiServerError> {
        var request: URLRequest
        switch self.request("screens/" + path.screen + "/data", query: path.query) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        if let revision { request.setValue(revision, forHTTPHeaderField: "X-Taksi-Skeleton") }
        return await send(request)
    }

    private func screen(_ path: ScreenPath, skeleton: Answer, data: Result<Answer, TaksiServerError>, passes: Int) -> LoadedScreen {
        LoadedScreen(
            path: path, skeleton: skeleton.body, revision: skeleton.header("X-Taksi-Skeleton"),
            variant: skeleton.header("X-Taksi-Variant"), language: skeleton.header("Content-Language"),
            data: data.map(\.body), degraded: (try? data.get())?.list("X-Taksi-Degraded") ?? [], passes: passes, keptAt: nil,
            etag: skeleton.header("ETag"))
    }
}
