/// The one rule for text that fills a single path segment, wherever a value becomes one: an
/// upstream call's path, a screen's path parameter, a navigation target. Percent-encoding keeps a
/// value inside one segment, but `.` and `..` are dot-segments that URLs resolve (`..` climbs to
/// the parent), an empty value leaves `//`, and control characters have no business in a path
/// (NUL cuts a file name short). Each place words the refusal for its own reader.
public enum PathSegment {
    public enum Fault: Sendable, Equatable {
        case empty
        /// `.` or `..`.
        case dotSegment
        case controlCharacter
    }

    /// Why `text` cannot be one path segment, or nil when it can.
    public static func fault(of text: String) -> Fault? {
        if text.isEmpty { return .empty }
        if text == "." || text == ".." { return .dotSegment }
        if text.unicodeScalars.contains(where: isControl) { return .controlCharacter }
        return nil
    }

    /// Whether `scalar` is an ASCII control character (C0 or DEL), which no path segment takes.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }
}
