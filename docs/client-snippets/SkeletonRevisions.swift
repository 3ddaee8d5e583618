import Foundation

/// The revision of each screen's skeleton as last fetched, sent with its data and submits, and
/// the screens whose skeleton the server answered `412 skeleton_outdated` for. A lock: the
/// client is called from several tasks at once.
final class SkeletonRevisions: @unchecked Sendable {
    private let lock = NSLock()
    private var revisions: [String: String] = [:]
    private var outdated: Set<String> = []

    func revision(of screen: String) -> String? {
        lock.lock(); defer { lock.unlock() }
        return revisions[screen]
    }

    func remember(_ revision: String, for screen: String) {
        lock.lock(); defer { lock.unlock() }
        revisions[screen] = revision
    }

    func markOutdated(_ screen: String) {
        lock.lock(); defer { lock.unlock() }
        outdated.insert(screen)
    }

    /// Whether the screen's skeleton must be fetched again past the caches; asking clears it.
    func takeOutdated(_ screen: String) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return outdated.remove(screen) != nil
    }

    /// Whether the last data request of the screen was refused as `skeleton_outdated`.
    func isOutdated(_ screen: String) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return outdated.contains(screen)
    }
}
