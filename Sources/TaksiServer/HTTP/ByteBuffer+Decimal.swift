import NIOCore

extension ByteBuffer {
    /// Writes `value` in decimal ASCII without building a string (request ids, access log numbers).
    mutating func writeDecimal(_ value: Int) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if value < 0 { writeInteger(UInt8(ascii: "-")) }
        withUnsafeMutableBytes(of: &digits) { bytes in
            // The magnitude, digit by digit from the end; works for Int.min too.
            var magnitude = value.magnitude
            var index = bytes.count
            repeat {
                index -= 1
                bytes[index] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            writeBytes(UnsafeRawBufferPointer(rebasing: bytes[index...]))
        }
    }
}
