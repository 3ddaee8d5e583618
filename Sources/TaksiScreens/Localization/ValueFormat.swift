public import Foundation
public import TaksiSchema

/// How a value spliced into text is written in the response's locale: `{shop.price | currency EUR}`
/// in a `$template`, or `with: {amount: "shop.price | currency EUR"}` for a message's placeholder.
/// The formats come from CLDR through Foundation's format styles (ICU), so `249` is "€249.00" in
/// English, "249,00 €" in German and "€ 249,00" in Portuguese.
///
/// | format | value | `en` | `de` |
/// |---|---|---|---|
/// | `number`, `number 2` | a number | 1,234.5; 1,234.50 | 1.234,5; 1.234,50 |
/// | `percent`, `percent 1` | a fraction | 26%; 25.6% | 26 %; 25,6 % |
/// | `currency EUR` | an amount | €249.00 | 249,00 € |
/// | `date`, `date short`/`medium`/`long`/`full` | a date | Nov 24, 2026 | 24. Nov. 2026 |
/// | `time`, `datetime` (with a style) | a date and time | 2:30 PM | 14:30 |
/// | `relative` | a date and time | 3 hours ago, tomorrow | vor 3 Stunden, morgen |
///
/// A number may come as JSON text (`"249.00"`), as many APIs send amounts; a date as ISO 8601 text
/// (`2026-11-24`, `2026-11-24T14:30:00Z`, with an offset or fractional seconds) or as seconds
/// since 1970. Dates and times are written in UTC unless the format names a time zone:
/// `datetime short Europe/Berlin`.
public struct ValueFormat: Sendable, Hashable, CustomStringConvertible {
    /// The format style, made once when the screen is compiled.
    enum Style: Sendable, Hashable {
        case number(FloatingPointFormatStyle<Double>)
        case percent(FloatingPointFormatStyle<Double>.Percent)
        case currency(FloatingPointFormatStyle<Double>.Currency)
        case date(Date.FormatStyle)
        /// Said relative to the moment of the response, in this locale and calendar.
        case relative(Locale, Calendar)
    }

    let style: Style
    /// The format as written, for messages.
    public let description: String

    /// The names a format starts with, for messages.
    public static let names = ["number", "percent", "currency", "date", "time", "datetime", "relative"]

    /// Whether the text depends on when it is written (`relative`): such data is made for every
    /// request, never kept.
    public var dependsOnTime: Bool {
        if case .relative = style { return true }
        return false
    }

    /// Reads a format (the text after `|`) for a locale (a BCP 47 tag such as `de` or `pt-BR`).
    /// - Returns: the format, or why the text is not one, with the fix.
    public static func parse(_ text: String, locale tag: String) -> Result<ValueFormat, FormatError> {
        let words = text.split(separator: " ").map(String.init)
        guard let name = words.first else {
            return .failure(
                FormatError("a \"|\" is followed by no format; write one of \(names.joined(separator: ", ")), like | currency EUR"))
        }
        let arguments = Array(words.dropFirst())
        let locale = Locale(identifier: tag)
        let written = words.joined(separator: " ")
        func make(_ style: Style) -> Result<ValueFormat, FormatError> { .success(ValueFormat(style: style, description: written)) }
        switch name {
        case "number", "percent":
            guard arguments.count <= 1 else {
                return .failure(FormatError("\(name) takes at most one argument, its fraction digits: | \(name) 2"))
            }
            var digits: Int?
            if let argument = arguments.first {
                guard let value = Int(argument), (0...6).contains(value) else {
                    return .failure(
                        FormatError("\(name) \(argument): the argument is a number of fraction digits from 0 to 6, like | \(name) 2"))
                }
                digits = value
            }
            if name == "number" {
                let style = FloatingPointFormatStyle<Double>(locale: locale)
                return make(.number(digits.map { style.precision(.fractionLength($0)) } ?? style))
            }
            let style = FloatingPointFormatStyle<Double>.Percent(locale: locale)
            return make(.percent(digits.map { style.precision(.fractionLength($0)) } ?? style))
        case "currency":
            guard arguments.count == 1, let code = arguments.first, code.count == 3, code.allSatisfy({ $0.isASCII && $0.isUppercase }),
                Locale.commonISOCurrencyCodes.contains(code)
            else {
                return .failure(
                    FormatError(
                        "currency takes the ISO 4217 code of the amount's currency, like | currency EUR"
                            + (arguments.first.map { "; \"\($0)\" is not one" } ?? "")))
            }
            return make(.currency(FloatingPointFormatStyle<Double>.Currency(code: code, locale: locale)))
        case "date", "time", "datetime":
            return dateStyle(name, arguments, locale: locale).map { ValueFormat(style: .date($0), description: written) }
        case "relative":
            guard arguments.isEmpty else {
                return .failure(FormatError("relative takes no argument: it says \"3 hours ago\" or \"tomorrow\""))
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.locale = locale
            return make(.relative(locale, calendar))
        default:
            return .failure(
                FormatError(
                    "\"\(name)\" is not a format; use one of \(names.joined(separator: ", "))"
                        + NameSuggestion.hint(for: name, among: names)))
        }
    }

    /// A date, time or date-and-time style: an optional length and an optional time zone.
    private static func dateStyle(_ name: String, _ arguments: [String], locale: Locale) -> Result<Date.FormatStyle, FormatError> {
        var length: Date.FormatStyle.DateStyle = name == "date" ? .abbreviated : .numeric
        var timeLength: Date.FormatStyle.TimeStyle = .shortened
        var timeZone = TimeZone(identifier: "UTC")!
        let lengths = ["short", "medium", "long", "full"]
        for argument in arguments {
            switch argument {
            case "short": (length, timeLength) = (.numeric, .shortened)
            case "medium": (length, timeLength) = (.abbreviated, .standard)
            case "long": (length, timeLength) = (.long, .complete)
            case "full": (length, timeLength) = (.complete, .complete)
            default:
                guard let zone = TimeZone(identifier: argument) else {
                    return .failure(
                        FormatError(
                            "\(name) \(argument): an argument is a length (\(lengths.joined(separator: ", "))) or a time zone like Europe/Berlin (the default is UTC)"
                                + NameSuggestion.hint(for: argument, among: lengths)))
                }
                timeZone = zone
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = locale
        calendar.timeZone = timeZone
        let style: Date.FormatStyle =
            switch name {
            case "date": Date.FormatStyle(date: length, time: .omitted, locale: locale, calendar: calendar, timeZone: timeZone)
            case "time":
                Date.FormatStyle(
                    date: .omitted, time: timeLength == .complete ? .standard : timeLength, locale: locale, calendar: calendar,
                    timeZone: timeZone)
            default: Date.FormatStyle(date: length, time: .shortened, locale: locale, calendar: calendar, timeZone: timeZone)
            }
        return .success(style)
    }

    /// The value written in this format, or why it cannot be (it is not a number, or not a date).
    /// - Parameter now: the moment a relative time is counted from.
    public func format(_ value: JSONValue, now: Date = Date()) -> Result<String, FormatError> {
        switch style {
        case .number(let style): Self.number(value).map(style.format)
        case .percent(let style): Self.number(value).map(style.format)
        case .currency(let style): Self.number(value).map(style.format)
        case .date(let style): Self.date(value).map(style.format)
        case .relative(let locale, let calendar):
            Self.date(value).map { date in
                // Anchored at the value, the style says where `now` is from it: "3 hours ago" for a
                // value 3 hours before now.
                Date.AnchoredRelativeFormatStyle(anchor: date, presentation: .named, unitsStyle: .wide, locale: locale, calendar: calendar)
                    .format(now)
            }
        }
    }

    private static func number(_ value: JSONValue) -> Result<Double, FormatError> {
        switch value {
        case .number(let number): return .success(number)
        case .string(let text):
            if let number = Double(text.trimmingSpaces), number.isFinite { return .success(number) }
            return .failure(FormatError("\"\(text)\" is not a number"))
        default: return .failure(FormatError("it is \(value.typeName.withArticle), not a number"))
        }
    }

    /// Seconds since 1970 of the first and last moments of the years 1 to 9999, the dates a
    /// format writes: outside them a number is no date anyone means (a value in milliseconds, say).
    static let datesInSeconds = -62_135_596_800.0...253_402_300_799.0

    private static func date(_ value: JSONValue) -> Result<Date, FormatError> {
        switch value {
        case .number(let seconds):
            guard datesInSeconds.contains(seconds) else {
                return .failure(
                    FormatError(
                        "\(JSONWriter.string(value)) seconds since 1970 is past the year 9999 (or before the year 1); send seconds, not milliseconds"
                    ))
            }
            return .success(Date(timeIntervalSince1970: seconds))
        case .string(let text):
            // Foundation reads 2026-02-30 as 2 March and hour 25 as the next day: refused first.
            if let impossible = impossibleFields(in: text) {
                return .failure(FormatError("\"\(text)\" is not a date that exists: \(impossible)"))
            }
            if let date = try? Date(text, strategy: .iso8601) { return .success(date) }
            if text.utf8.count == 10, let date = try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day()) {
                return .success(date)
            }
            return .failure(FormatError("\"\(text)\" is not an ISO 8601 date, like 2026-11-24 or 2026-11-24T14:30:00Z"))
        default:
            return .failure(
                FormatError(
                    "it is \(value.typeName.withArticle), not a date (ISO 8601 text or seconds since 1970)"))
        }
    }

    /// What does not exist in an ISO 8601 date or date-time (`2026-02-30`, `T25:00`), when its
    /// fields are where ISO 8601 puts them; nil when they exist (or are not there to check: the
    /// parser refuses that text anyway).
    static func impossibleFields(in text: String) -> String? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return bytes[range].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), let year = number(0..<4),
            let month = number(5..<7), let day = number(8..<10)
        else { return nil }
        guard (1...12).contains(month) else { return "there is no month \(month)" }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return "\(String(format: "%04d-%02d", year, month)) has \(days) days" }
        guard bytes.count > 10, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " ") else {
            return nil
        }
        if let hour = number(11..<13), hour > 23 { return "there is no hour \(hour)" }
        if bytes.count > 13, bytes[13] == UInt8(ascii: ":"), let minute = number(14..<16), minute > 59 {
            return "there is no minute \(minute)"
        }
        if bytes.count > 16, bytes[16] == UInt8(ascii: ":"), let second = number(17..<19), second > 59 {
            return "there is no second \(second)"
        }
        return nil
    }

    /// Why a format cannot be read, or a value cannot be written in it.
    public struct FormatError: Error, Sendable, Equatable {
        public var message: String
        public init(message: String) { self.message = message }
        init(_ message: String) { self.message = message }
    }
}
