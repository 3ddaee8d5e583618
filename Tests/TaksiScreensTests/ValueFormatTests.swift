import Foundation
import TaksiSchema
import TaksiScreens
import Testing

/// Values written the locale's way (`{shop.price | currency EUR}`): the outputs are CLDR's, as
/// its charts give them for each locale (U+00A0 is a no-break space, U+202F a narrow one).
@Suite("Value formats")
struct ValueFormatTests {
    static let nbsp = "\u{00A0}"
    // Dates are written from CLDR's skeletons (yMMMd for a date, yMd for a short one), as
    // Foundation's date styles are.

    /// (locale, format, value, text)
    static let table: [(String, String, JSONValue, String)] = [
        ("en", "currency EUR", 249, "€249.00"),
        ("de", "currency EUR", 249, "249,00\(nbsp)€"),
        ("pt", "currency EUR", 249, "€\(nbsp)249,00"),
        ("pt-PT", "currency EUR", 249, "249,00\(nbsp)€"),
        ("ja", "currency EUR", 249, "€249.00"),
        ("ja", "currency JPY", 1249.5, "¥1,250"),  // the yen has no minor unit
        ("pt-BR", "currency BRL", "1249.9", "R$\(nbsp)1.249,90"),
        ("en", "number", 1234567.891, "1,234,567.891"),
        ("de", "number", 1234567.891, "1.234.567,891"),
        ("pt", "number", 1234567.891, "1.234.567,891"),
        ("ja", "number", 1234567.891, "1,234,567.891"),
        ("en", "number 2", 4.5, "4.50"),
        ("de", "number 0", 4.5, "4"),
        ("en", "percent", 0.256, "25.6%"),
        ("de", "percent", 0.256, "25,6\(nbsp)%"),
        ("pt", "percent 0", 0.256, "26%"),
        ("ja", "percent", 0.256, "25.6%"),
        ("en", "date", "2026-11-24", "Nov 24, 2026"),
        ("de", "date", "2026-11-24", "24. Nov. 2026"),
        ("pt", "date", "2026-11-24", "24 de nov. de 2026"),
        ("ja", "date", "2026-11-24", "2026年11月24日"),
        ("en", "date long", "2026-11-24", "November 24, 2026"),
        ("de", "date long", "2026-11-24", "24. November 2026"),
        ("pt", "date long", "2026-11-24", "24 de novembro de 2026"),
        ("ja", "date long", "2026-11-24", "2026年11月24日"),
        ("en", "time", "2026-11-24T14:30:00Z", "2:30\u{202F}PM"),
        ("de", "time Europe/Berlin", "2026-11-24T14:30:00Z", "15:30"),
        ("ja", "time Asia/Tokyo", 1_795_530_600, "23:30"),  // 14:30 UTC
        ("en", "datetime short", "2026-11-24T14:30:00+01:00", "11/24/2026, 1:30\u{202F}PM"),
        ("de", "datetime", "2026-11-24T14:30:00.250Z", "24.11.2026, 14:30"),
    ]

    @Test("numbers, percentages, currencies and dates as CLDR writes them in English, German, Portuguese and Japanese")
    func cldr() throws {
        var wrong: [String] = []
        for (locale, spec, value, expected) in Self.table {
            let format = try ValueFormat.parse(spec, locale: locale).get()
            let written = try format.format(value).get()
            if written != expected {
                wrong.append(
                    "\(locale) | \(spec) of \(JSONWriter.string(value)): \(written.debugDescription), expected \(expected.debugDescription)"
                )
            }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    @Test("a relative time is counted from the moment given, in the locale's words")
    func relative() throws {
        let now = try #require(try? Date("2026-11-24T12:00:00Z", strategy: .iso8601))
        let cases: [(String, JSONValue, String)] = [
            ("en", "2026-11-24T09:00:00Z", "3 hours ago"), ("de", "2026-11-24T09:00:00Z", "vor 3 Stunden"),
            ("pt", "2026-11-23T12:00:00Z", "ontem"), ("ja", "2026-11-25T12:00:00Z", "明日"),
            ("en", .number(now.timeIntervalSince1970 + 300), "in 5 minutes"),
        ]
        for (locale, value, expected) in cases {
            let format = try ValueFormat.parse("relative", locale: locale).get()
            #expect(format.dependsOnTime)
            #expect(try format.format(value, now: now).get() == expected, "\(locale)")
        }
    }

    @Test(
        "a format that is not one, or a value that does not fit it, says why",
        arguments: [
            ("currency", #"currency takes the ISO 4217 code of the amount's currency, like | currency EUR"#),
            ("currency EURO", #"currency takes the ISO 4217 code of the amount's currency, like | currency EUR; "EURO" is not one"#),
            ("number 9", "number 9: the argument is a number of fraction digits from 0 to 6, like | number 2"),
            (
                "numbr",
                #""numbr" is not a format; use one of number, percent, currency, date, time, datetime, relative (did you mean "number"?)"#
            ),
            (
                "date Mars/Olympus",
                "date Mars/Olympus: an argument is a length (short, medium, long, full) or a time zone like Europe/Berlin (the default is UTC)"
            ),
            ("relative 2", #"relative takes no argument: it says "3 hours ago" or "tomorrow""#),
            (
                "",
                #"a "|" is followed by no format; write one of number, percent, currency, date, time, datetime, relative, like | currency EUR"#
            ),
        ]
    )
    func invalid(spec: String, message: String) {
        #expect(throws: ValueFormat.FormatError(message: message)) { try ValueFormat.parse(spec, locale: "en").get() }
    }

    @Test("values that are not numbers or dates are refused with what they are")
    func unfit() throws {
        let currency = try ValueFormat.parse("currency EUR", locale: "en").get()
        #expect(throws: ValueFormat.FormatError(message: "\"cheap\" is not a number")) { try currency.format("cheap").get() }
        #expect(throws: ValueFormat.FormatError(message: "it is an object, not a number")) { try currency.format(["a": 1]).get() }
        let date = try ValueFormat.parse("date", locale: "en").get()
        #expect(throws: ValueFormat.FormatError(message: "\"24/11/2026\" is not an ISO 8601 date, like 2026-11-24 or 2026-11-24T14:30:00Z"))
        {
            try date.format("24/11/2026").get()
        }
    }

    @Test(
        "dates that do not exist are refused, not rolled over into others",
        arguments: [
            ("2026-02-30", #""2026-02-30" is not a date that exists: 2026-02 has 28 days"#),
            ("2028-02-30", #""2028-02-30" is not a date that exists: 2028-02 has 29 days"#),
            ("2026-13-01", #""2026-13-01" is not a date that exists: there is no month 13"#),
            ("2026-04-31T10:00:00Z", #""2026-04-31T10:00:00Z" is not a date that exists: 2026-04 has 30 days"#),
            ("2026-11-24T25:00:00Z", #""2026-11-24T25:00:00Z" is not a date that exists: there is no hour 25"#),
            ("2026-11-24T10:61:00Z", #""2026-11-24T10:61:00Z" is not a date that exists: there is no minute 61"#),
            ("2026-11-24T10:00:60Z", #""2026-11-24T10:00:60Z" is not a date that exists: there is no second 60"#),
        ])
    func impossibleDates(text: String, message: String) throws {
        for spec in ["date", "datetime", "relative"] {
            let format = try ValueFormat.parse(spec, locale: "en").get()
            #expect(throws: ValueFormat.FormatError(message: message)) { try format.format(.string(text)).get() }
        }
    }

    @Test("seconds since 1970 past the year 9999 are refused (milliseconds, most likely); the years 1 to 9999 are written")
    func epochRange() throws {
        let date = try ValueFormat.parse("date", locale: "en").get()
        #expect(
            throws: ValueFormat.FormatError(
                message: "184000000000000 seconds since 1970 is past the year 9999 (or before the year 1); send seconds, not milliseconds")
        ) { try date.format(184_000_000_000_000).get() }
        #expect(try date.format(253_402_300_799).get() == "Dec 31, 9999")
        #expect(try date.format(1_795_000_000).get() == "Nov 18, 2026")
        #expect(try date.format("2028-02-29").get() == "Feb 29, 2028")
    }
}

/// Formats in screens: compiled per locale, in `$template` and in a message's values, with
/// mistakes at their file:line:col.
@Suite("Formatted values in screens")
struct FormattedValueTests {
    static let files = [
        "strings/en.yaml": #"price: "Now {amount}""#,
        "strings/de.yaml": #"price: "Jetzt {amount}""#,
        "home.yaml": """
        name: home
        entry: true
        sources:
          q: {type: request, parameters: {price: {type: number, default: 249}, since: {default: "2026-11-24"}}}
        components:
          - {name: label_component, identifier: plain, content: {value: {$template: "{q.price | currency EUR}"}}}
          - {name: label_component, identifier: text, content: {value: {$text: price, with: {amount: "q.price | currency EUR"}}}}
          - {name: label_component, identifier: since, content: {value: {$template: "since {q.since | date long}"}}}
        """,
    ]

    /// Each label's value in `locale`.
    func labels(_ files: [String: String], locale: String, query: [String: String] = [:]) throws -> [String: String] {
        let result = load(files)
        let set = try #require(result.screenSet, "\(result.diagnostics.report)")
        let screen = try #require(set["home"]).translated(to: locale)
        let plan = screen.dataPlan
        let values = plan.staticValues.merging(try plan.requestValues(query: query)) { $1 }
        let (data, problems) = plan.build(values: values, catalog: set.catalog)
        #expect(plan.render(values: values, catalog: set.catalog).body == JSONWriter.bytes(data.jsonValue))
        var labels: [String: String] = [:]
        for entry in data.entries { labels[entry.identifier] = entry.content["value"]?.stringValue }
        for problem in problems where labels[problem.identifier] == nil { labels[problem.identifier] = "problem: \(problem.message)" }
        return labels
    }

    @Test("a screen with a format is compiled in each locale: a template and a message's value written its way")
    func perLocale() throws {
        let nbsp = "\u{00A0}"
        #expect(try labels(Self.files, locale: "en") == ["plain": "€249.00", "text": "Now €249.00", "since": "since November 24, 2026"])
        #expect(
            try labels(Self.files, locale: "de", query: ["price": "19.9"])
                == ["plain": "19,90\(nbsp)€", "text": "Jetzt 19,90\(nbsp)€", "since": "since 24. November 2026"])
        // Without string tables, values are written as English writes them.
        var plain = Self.files
        plain["strings/en.yaml"] = nil
        plain["strings/de.yaml"] = nil
        plain["home.yaml"] = plain["home.yaml"]!.replacingOccurrences(of: "  - {name: label_component, identifier: text", with: "#")
        #expect(try labels(plain, locale: "de") == ["plain": "€249.00", "since": "since November 24, 2026"])
    }

    @Test("a value that does not fit its format is left out with why, or takes the template's default")
    func unfit() throws {
        let labels = try labels(Self.files, locale: "en", query: ["since": "yesterday"])
        #expect(
            labels["since"]
                == #"problem: value: q.since cannot be written as | date long: "yesterday" is not an ISO 8601 date, like 2026-11-24 or 2026-11-24T14:30:00Z"#
        )
        var files = Self.files
        files["home.yaml"] = files["home.yaml"]!.replacingOccurrences(
            of: #""since {q.since | date long}"}"#, with: #""since {q.since | date long}", default: "-"}"#)
        #expect(try self.labels(files, locale: "en", query: ["since": "yesterday"])["since"] == "-")
    }

    @Test(
        "a wrong format is an error at its file:line:col, with the fix",
        arguments: [
            (
                #"{$template: "{q.price | currency euro}"}"#,
                #"Screens/home.yaml:6:77: error: components[0].content.value.$template: | currency euro: currency takes the ISO 4217 code of the amount's currency, like | currency EUR; "euro" is not one"#
            ),
            (
                #"{$text: price, with: {amount: "q.price | curency EUR"}}"#,
                #"Screens/home.yaml:6:95: error: components[0].content.value.with.amount: | curency EUR: "curency" is not a format; use one of number, percent, currency, date, time, datetime, relative (did you mean "currency"?)"#
            ),
            (
                #"{$template: "{q.price | }"}"#,
                #"Screens/home.yaml:6:77: error: components[0].content.value.$template: | : a "|" is followed by no format; write one of number, percent, currency, date, time, datetime, relative, like | currency EUR"#
            ),
        ]
    )
    func wrong(value: String, expected: String) throws {
        var files = Self.files
        files["home.yaml"] = """
            name: home
            entry: true
            sources:
              q: {type: request, parameters: {price: {type: number, default: 249}, since: {default: "2026-11-24"}}}
            components:
              - {name: label_component, identifier: plain, content: {value: \(value)}}
            """
        let diagnostic = try #require(onlyError(load(files)))
        #expect(diagnostic.description == expected)
    }

    @Test("a navigation target refuses a format: a value there is a path segment as it is")
    func target() throws {
        let files = [
            "home.yaml": """
            name: home
            entry: true
            sources:
              q: {type: request, parameters: {id: {default: "a"}}}
            components:
              - name: button_component
                identifier: open
                content: {title: Open, action: {identifier: navigation, content: {interface_identifier: {$template: "items/{q.id | number}"}}}}
            """,
            "item.yaml": "name: items/{id}\ncomponents: []",
        ]
        let diagnostic = try #require(onlyError(load(files)))
        #expect(diagnostic.message.contains(#"remove "| number" (formats are for text people read)"#), "\(diagnostic)")
    }

    @Test("a relative time makes data for each request: never computed at load")
    func relative() throws {
        let files = [
            "home.yaml": """
            name: home
            entry: true
            sources:
              f: {type: fixture, value: {posted: "2026-11-24T09:00:00Z"}}
            components:
              - {name: label_component, identifier: posted, content: {value: {$template: "posted {f.posted | relative}"}}}
            """
        ]
        let result = load(files)
        let screen = try #require(result.screenSet?["home"], "\(result.diagnostics.report)")
        #expect(screen.staticData == nil)
        #expect(screen.dataPlan.dependsOnTime)
        #expect(screen.dataPlan.entries.allSatisfy { $0.template == nil })
    }
}
