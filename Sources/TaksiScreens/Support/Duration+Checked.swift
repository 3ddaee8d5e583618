extension Duration {
    /// `seconds` as a duration (to the nanosecond) when it is a finite number within `range`; nil
    /// otherwise. For a number that comes from outside (a token endpoint's `expires_in`, a header,
    /// a store's row): `Duration.seconds(_: Double)` traps on one past about 9.2 billion seconds,
    /// and on infinity or NaN, so such a value never reaches it unchecked.
    ///
    /// ```swift
    /// Duration.seconds(3600, within: 1...86_400)   // 1 hour
    /// Duration.seconds(1e300, within: 1...86_400)  // nil
    /// ```
    /// - Parameter range: the values a caller accepts; it lies within ±9 billion seconds.
    public static func seconds(_ seconds: Double, within range: ClosedRange<Double>) -> Duration? {
        precondition(range.lowerBound >= -9e9 && range.upperBound <= 9e9, "a range a Duration holds to the nanosecond")
        guard seconds.isFinite, range.contains(seconds) else { return nil }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}

extension Duration {
    /// The duration in seconds, to the attosecond as a `Double` holds it: what `Date` arithmetic,
    /// a SQL interval and a message take.
    package var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
