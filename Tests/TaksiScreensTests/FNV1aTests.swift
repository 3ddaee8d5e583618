import Testing

@testable import TaksiScreens

@Suite("FNV-1a")
struct FNV1aTests {
    @Test("the hex digest is the value's 16 lowercase hexadecimal digits, leading zeros kept")
    func hexDigest() {
        var leadingZero = 0
        for first in 0...255 {
            for second in stride(from: 0, through: 255, by: 15) {
                var digest = FNV1a()
                digest.combine([UInt8(first), UInt8(second)])
                let hex = String(digest.value, radix: 16)
                #expect(digest.hexDigest == String(repeating: "0", count: 16 - hex.count) + hex)
                if hex.count < 16 { leadingZero += 1 }
            }
        }
        #expect(leadingZero > 0, "some digests start with a zero")
        #expect(FNV1a().hexDigest == "cbf29ce484222325", "the offset basis, as the specification gives it")
    }
}
