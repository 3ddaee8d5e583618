/// FNV-1a, 64 bits: a small digest that is the same on every platform, run and replica. Screen-set
/// versions, ETags and experiment buckets are built on it, so it is fixed forever: changing it
/// would change every tag and reassign every user of every experiment.
package struct FNV1a: Sendable, Equatable {
    /// The digest of what was combined so far.
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01B3
    }

    /// Bytes in memory (a request's target, as the memo looks it up): one tight loop, with no
    /// generic call on the way.
    package mutating func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
        var value = self.value
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01B3
        }
        self.value = value
    }

    package mutating func combine<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        // Contiguous bytes (arrays, buffers: every ETag's body) take one tight loop; a generic
        // sequence from another module is iterated without specialization, many times slower.
        let done: Void? = bytes.withContiguousStorageIfAvailable { combine($0) }
        if done == nil {
            for byte in bytes { combine(byte) }
        }
    }

    /// The digest as 16 lowercase hexadecimal digits.
    package var hexDigest: String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            writeHex(into: buffer)
            return 16
        }
    }

    /// Writes the digest's 16 lowercase hexadecimal digits at the start of `buffer` (16 bytes at
    /// least), where they go: a string (``hexDigest``), or the head of a response (its ETag).
    package func writeHex(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        for index in 0..<16 {
            buffer[index] = digits.utf8Start[Int((value >> (60 - 4 * UInt64(index))) & 15)]
        }
    }
}
