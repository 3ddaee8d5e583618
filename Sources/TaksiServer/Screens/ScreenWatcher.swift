public import CoreMetrics
import Foundation
public import Logging
public import ServiceLifecycle
import TaksiScreens

/// Watches the screens directory and reloads the whole set when a file changes: loads and
/// validates everything, then swaps the snapshot atomically. An invalid edit keeps the last good
/// set serving and is reported (logs and `/readyz`) until fixed.
///
/// Polling, not inotify: a listing of names, sizes and modification times every interval (1 s by
/// default) is cheap for screen directories, works on every file system (bind mounts, ConfigMaps
/// that swap symlinks) and on macOS alike.
public struct ScreenWatcher: Service, CustomStringConvertible {
    /// Its name alone, for the service group's log (see `HTTPService`).
    public var description: String { "ScreenWatcher" }

    let directory: String
    let interval: Duration
    let store: ScreenStore
    let metrics: any MetricsFactory
    let upstreams: Set<String>?
    /// Folders of the upstreams that answer from files: sources' paths and bindings are checked against them.
    let upstreamDirectories: [String: String]
    /// The upstreams' OpenAPI documents: sources' paths and bindings are checked against them.
    let upstreamDocuments: [String: String]
    let logger: Logger
    /// The directory as it was just before the served set was read from it: the first check
    /// compares with it, so an edit made while the server started (a ConfigMap swapped as the pod
    /// came up) is loaded, not missed until the next one. Nil: as it is when the watcher starts.
    let loadedFingerprint: [String: String]?

    /// - Parameters:
    ///   - upstreams: configured upstream names, so a reload naming another fails.
    ///   - upstreamDirectories: the folders of `file:` upstreams, by name.
    ///   - upstreamDocuments: the paths of the upstreams' OpenAPI documents, by name.
    ///   - loadedFingerprint: ``fingerprint(of:)`` taken before the served set was loaded.
    public init(
        directory: String, interval: Duration, upstreams: Set<String>? = nil, upstreamDirectories: [String: String] = [:],
        upstreamDocuments: [String: String] = [:], store: ScreenStore, metrics: any MetricsFactory, logger: Logger,
        loadedFingerprint: [String: String]? = nil
    ) {
        self.loadedFingerprint = loadedFingerprint
        self.upstreams = upstreams
        self.upstreamDirectories = upstreamDirectories
        self.upstreamDocuments = upstreamDocuments
        self.directory = directory
        self.interval = interval
        self.store = store
        self.metrics = metrics
        self.logger = logger
    }

    public func run() async throws {
        // Graceful shutdown cancels the wait between checks; a reload in progress finishes first.
        try? await cancelWhenGracefulShutdown {
            var fingerprint = loadedFingerprint ?? Self.fingerprint(of: directory)
            while true {
                try await Task.sleep(for: interval)
                let current = Self.fingerprint(of: directory)
                guard current != fingerprint else { continue }
                fingerprint = current
                reload()
            }
        }
    }

    /// Loads the directory now and swaps the snapshot if the set is valid.
    /// - Returns: whether the new set is being served.
    @discardableResult
    public func reload() -> Bool {
        let (load, loadedBytes) = HeapUsage.measuring {
            ScreenSetLoader.load(
                directory: directory, upstreams: upstreams, upstreamDirectories: upstreamDirectories, upstreamDocuments: upstreamDocuments)
        }
        guard let screenSet = load.screenSet else {
            Counter(label: "taksi_screen_reloads_total", dimensions: [("result", "failed")], factory: metrics).increment()
            store.recordFailedReload(load.diagnostics)
            for diagnostic in load.diagnostics where diagnostic.severity == .error {
                logger.error("\(diagnostic)")
            }
            logger.error(
                "screen reload failed; still serving the last good set",
                metadata: [
                    "errors": .stringConvertible(load.diagnostics.filter { $0.severity == .error }.count),
                    "version": .string(store.status.version),
                ]
            )
            return false
        }
        if screenSet.version == store.status.version, store.status.pendingErrors.isEmpty { return true }
        let before = store.snapshot
        store.replace(with: screenSet, loadedBytes: loadedBytes)
        for change in ServedScreenSet.shapeChanges(from: before, to: store.snapshot) {
            logger.notice(
                "a variant's data changed shape; skeletons cached before are answered from the earlier set while it is kept",
                metadata: [
                    "variant": .string(change.variant), "old_revision": .string(change.old), "revision": .string(change.new),
                    "changes": .string(change.changes.joined(separator: "; ")),
                ]
            )
        }
        Counter(label: "taksi_screen_reloads_total", dimensions: [("result", "ok")], factory: metrics).increment()
        for warning in load.diagnostics where warning.severity == .warning { logger.warning("\(warning)") }
        logger.info(
            "screens reloaded", metadata: ["version": .string(screenSet.version), "screens": .stringConvertible(screenSet.screens.count)])
        return true
    }

    /// The device, inode, size and modification time of every file under the directory, links
    /// followed: changes when a file is added, removed, rewritten, or replaced by the kubelet's
    /// atomic swap of a ConfigMap's `..data` link (the files then live in a new folder).
    static func fingerprint(of directory: String) -> [String: String] {
        var result: [String: String] = [:]
        for file in ScreenDirectory.files(in: directory) ?? [] { result[file.relativePath] = file.fingerprint }
        return result
    }
}
