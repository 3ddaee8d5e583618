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
        data: Result<Data, TaksiServerError>, degraded: [String] = [], passes: Int = 1
    ) {
        self.path = path
        self.skeleton = skeleton
        self.revision = revision
        self.variant = variant
        self.language = language
        self.data = data
        self.degraded = degraded
        self.passes = passes
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
    /// - Returns: the screen, whose ``LoadedScreen/data`` may be an error (placeholders stay), or
    ///   the error that left no skeleton: `404 screen_not_found`, no answer after every pass...
    public func load(_ path: String) async -> Result<LoadedScreen, TaksiServerError> {
        let path = ScreenPath(path)
        guard !path.isEmpty else { return .failure(.noScreen) }
        var lastError = TaksiServerError.cancelled
        // The last skeleton whose data did not come (412, or no answer): placeholders beat nothing.
        var unfilled: (skeleton: Answer, error: TaksiServerError, passes: Int)?
        for pass in 1...retry.loads {
            await pause(before: pass)
            if Task.isCancelled { return .failure(.cancelled) }
            let skeleton: Answer
            switch await fetchSkeleton(path) {
            case .success(let answer) where answer.status == 200: skeleton = answer
            case .success(let answer) where Self.isPassing(answer.status):
                lastError = answer.error
                continue
            case .success(let answer): return .failure(answer.error)
            case .failure(let error):
                lastError = error
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

    private func fetchSkeleton(_ path: ScreenPath) async -> Result<Answer, TaksiServerError> {
        var request: URLRequest
        switch self.request("screens/" + path.screen) {
        case .success(let made): request = made
        case .failure(let error): return .failure(error)
        }
        if memory.isOutdated(path.screen) {
            // The server no longer had the skeleton shown: past URLSession's cache and any CDN.
            request.cachePolicy = .reloadIgnoringLocalCacheData
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        }
        let answer = await send(request)
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
            data: data.map(\.body), degraded: (try? data.get())?.list("X-Taksi-Degraded") ?? [], passes: passes)
    }
}
