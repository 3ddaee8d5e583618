import Foundation

/// The `Date` header's value (RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`), formatted
/// at most once a second: every response carries it, and formatting a date costs more than the
/// rest of a precomputed response's head.
struct HTTPDate {
    private var second = -1
    private var text = ""

    /// Now, formatted.
    mutating func current() -> String {
        var now = time(nil)
        guard now != second else { return text }
        second = now
        var parts = tm()
        gmtime_r(&now, &parts)
        text = Self.format(parts)
        return text
    }

    static func format(_ parts: tm) -> String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
