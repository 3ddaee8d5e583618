import CTaksiHeap

/// What the process's heap holds, where the C library says (glibc): used to count what a screen
/// set really costs in memory, its compiled screens and all, not an estimate of its responses.
enum HeapUsage {
    /// Bytes allocated and not freed; nil where the C library cannot say.
    static var bytesInUse: Int? {
        let bytes = taksi_heap_bytes_in_use()
        return bytes > 0 ? Int(bytes) : nil
    }

    /// `body`'s result, and how much the heap grew while it ran (what it made and kept, plus what
    /// other threads allocated meanwhile and had not freed); nil where the heap cannot be read.
    static func measuring<Result>(_ body: () throws -> Result) rethrows -> (result: Result, bytes: Int?) {
        let before = bytesInUse
        let result = try body()
        guard let before, let after = bytesInUse else { return (result, nil) }
        return (result, max(after - before, 0))
    }
}
