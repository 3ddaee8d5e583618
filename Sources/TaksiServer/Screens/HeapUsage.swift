import CTaksiHeap
import Dispatch
import NIOConcurrencyHelpers

/// What the process's heap holds, where the C library says (glibc): used to count what a screen
/// set really costs in memory, its compiled screens and all, not an estimate of its responses;
/// and where what a set held goes when it is dropped.
enum HeapUsage {
    /// Held while a cost is measured, and while dropped sets are freed: a set freed on another
    /// thread during a measurement would be subtracted from the set being measured (kept sets were
    /// counted at a third of their cost while earlier ones expired during reloads).
    private static let measurement = NIOLock()

    /// Bytes allocated and not freed; nil where the C library cannot say.
    static var bytesInUse: Int? {
        let bytes = taksi_heap_bytes_in_use()
        return bytes > 0 ? Int(bytes) : nil
    }

    /// `body`'s result, and how much the heap grew while it ran (what it made and kept, plus what
    /// other threads allocated meanwhile and had not freed); nil where the heap cannot be read.
    static func measuring<Result>(_ body: () throws -> Result) rethrows -> (result: Result, bytes: Int?) {
        try measurement.withLock {
            let before = bytesInUse
            let result = try body()
            guard let before, let after = bytesInUse else { return (result, nil) }
            return (result, max(after - before, 0))
        }
    }

    /// Frees `dropped` (screen sets no longer kept) on a queue of its own, never on the caller's
    /// thread (an event loop's: freeing a set takes milliseconds) nor during a measurement, then
    /// gives the heap's free pages back to the system. Without that, glibc kept what every
    /// dropped set had held: 222 MiB over a fresh replica after two dozen reshaping reloads of
    /// 1,000 screens had expired (55 to 92 MiB now, with one 22 MiB set still kept; the rest is
    /// pages shared with what is still live). What a request still holds is freed when it ends,
    /// and given back at the next drop. A dispatch queue, not a task: waiting for a measurement
    /// (a whole load) would hold a thread of Swift's cooperative pool meanwhile.
    ///
    /// `dropped` is emptied here, so no reference stays with the caller (whose last one would
    /// free the sets on its own thread after the pages were given back).
    static func discard(_ dropped: inout [ServedScreenSet]) {
        guard !dropped.isEmpty else { return }
        let garbage = Garbage(dropped)
        dropped = []
        releases.async {
            measurement.withLock {
                garbage.empty()
                _ = taksi_heap_release_free()
            }
        }
    }

    /// Where dropped sets are freed, one discard at a time.
    private static let releases = DispatchQueue(label: "taksi.heap-release", qos: .utility)

    /// What a discard frees: emptied under the measurement lock, so the last references go there.
    private final class Garbage: Sendable {
        private let sets: NIOLockedValueBox<[ServedScreenSet]>
        init(_ sets: [ServedScreenSet]) { self.sets = NIOLockedValueBox(sets) }
        func empty() { sets.withLockedValue { $0 = [] } }
    }
}
