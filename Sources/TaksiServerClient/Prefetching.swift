import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Skeletons fetched ahead, because a screen shown can open them (its skeleton's
/// `Link: </screens/login>; rel=prefetch` hints): opening one of them then costs only its data's
/// round trip. Kept for the skeleton's own `max-age`, at most ``limit`` of them.
final class PrefetchedSkeletons: @unchecked Sendable {
    static let limit = 32
    private let lock = NSLock()
    private var skeletons: [String: (answer: Answer, until: Date, fetched: Date)] = [:]
    private var running: [Task<Void, Never>] = []

    /// The skeleton fetched ahead for `screen`, while it is fresh; taken (a screen is opened once).
    func take(_ screen: String) -> Answer? {
        lock.lock()
        defer { lock.unlock() }
        guard let found = skeletons.removeValue(forKey: screen), found.until > Date() else { return nil }
        return found.answer
    }

    /// Whether `screen` has a fresh skeleton, or one being fetched.
    func has(_ screen: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return (skeletons[screen]?.until ?? .distantPast) > Date()
    }

    func keep(_ answer: Answer, for screen: String, seconds: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        skeletons[screen] = (answer, Date().addingTimeInterval(seconds), Date())
        while skeletons.count > Self.limit, let oldest = skeletons.min(by: { $0.value.fetched < $1.value.fetched })?.key {
            skeletons[oldest] = nil
        }
    }

    /// Holds a prefetch's task for ``finished()``: the latest 64 (an app never asks, and a
    /// finished task's handle is all that is dropped).
    func track(_ task: Task<Void, Never>) {
        lock.lock()
        running.append(task)
        if running.count > 64 { running.removeFirst(running.count - 64) }
        lock.unlock()
    }

    /// Returns once every prefetch started so far has finished (for tests).
    func finished() async {
        for task in takeRunning() { await task.value }
    }

    private func takeRunning() -> [Task<Void, Never>] {
        lock.lock()
        defer { lock.unlock() }
        let tasks = running
        running = []
        return tasks
    }
}

extension ScreenServer {
    /// Starts fetching the skeletons a skeleton's `Link` header names with `rel=prefetch` (when
    /// ``prefetch`` is on), marked `Sec-Purpose: prefetch`: the server counts them like any
    /// skeleton and records no experiment exposure for them (the person has not seen them).
    func prefetchLinked(from skeleton: Answer) {
        guard prefetch, let links = skeleton.header("Link") else { return }
        for screen in Self.prefetchTargets(in: links) where !prefetched.has(screen) {
            prefetched.track(Task(priority: .background) { await self.prefetchSkeleton(screen) })
        }
    }

    private func prefetchSkeleton(_ screen: String) async {
        guard case .success(var request) = self.request("screens/" + screen) else { return }
        request.setValue("prefetch", forHTTPHeaderField: "Sec-Purpose")
        guard case .success(let answer) = await send(request), answer.status == 200 else { return }
        prefetched.keep(answer, for: screen, seconds: Self.maxAge(answer.header("Cache-Control")) ?? 60)
    }

    /// The screen paths of `/screens/...` targets with relation `prefetch` in a `Link` value
    /// (percent-encoded as sent).
    static func prefetchTargets(in links: String) -> [String] {
        links.split(separator: ",").compactMap { link in
            let parts = link.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = parts.first, target.hasPrefix("</screens/"), target.hasSuffix(">"),
                parts.dropFirst().contains(where: { $0.lowercased().replacingOccurrences(of: "\"", with: "") == "rel=prefetch" })
            else { return nil }
            let screen = String(target.dropFirst("</screens/".count).dropLast())
            return screen.isEmpty || screen.contains("?") ? nil : screen
        }
    }

    /// The `max-age` of a `Cache-Control` value, in seconds.
    static func maxAge(_ cacheControl: String?) -> TimeInterval? {
        for directive in (cacheControl ?? "").split(separator: ",") {
            let pair = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "max-age", let seconds = TimeInterval(pair[1]) { return max(0, seconds) }
        }
        return nil
    }
}
