import NIOConcurrencyHelpers
import TaksiScreens

/// Picks the locale of a request from its `Accept-Language`, remembering the answer for each
/// header value seen: apps send few distinct values, so after the first request with one, the
/// hot path pays a dictionary lookup instead of parsing the header. A client cannot grow it
/// without bound: past `capacity` distinct values, new ones are negotiated and not kept, and a
/// value longer than `longestKept` (no browser's or app's is) is never kept.
final class LocaleNegotiator: Sendable {
    let localization: Localization
    static let capacity = 1024
    static let longestKept = 256
    /// Shared by the event loops; a lock held for one lookup or insert.
    private let known = NIOLockedValueBox<[String: String]>([:])

    init(_ localization: Localization) {
        self.localization = localization
    }

    func locale(for acceptLanguage: String?) -> String {
        guard let acceptLanguage else { return localization.defaultLocale }
        if let locale = known.withLockedValue({ $0[acceptLanguage] }) { return locale }
        let locale = localization.negotiate(acceptLanguage)
        known.withLockedValue { known in
            if known.count < Self.capacity, acceptLanguage.utf8.count <= Self.longestKept { known[acceptLanguage] = locale }
        }
        return locale
    }
}
