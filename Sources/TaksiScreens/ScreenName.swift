/// The rules for a screen's name: letters, digits, `-`, `_` and `/` between non-empty segments,
/// 1 to 80 characters, and no final segment `data` (that path is the screen's data endpoint).
public enum ScreenName {
    public static let maximumLength = 80

    /// Why `name` is not a valid screen name, or nil when it is.
    public static func problem(with name: String) -> String? {
        if name.isEmpty || name.utf8.count > maximumLength {
            return "a screen name has 1 to \(maximumLength) characters"
        }
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"):
                true
            default:
                false
            }
        }
        if !allowed { return "a screen name may only hold letters, digits, '-', '_' and '/'" }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: \.isEmpty) {
            return "a screen name may not start or end with '/' or hold '//'"
        }
        if segments.last == "data" {
            return "a screen name may not end in the segment \"data\": /screens/<name>/data is the data endpoint"
        }
        return nil
    }

    /// Whether `name` is a valid screen name.
    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }
}
