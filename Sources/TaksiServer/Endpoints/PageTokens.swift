import Crypto
public import Foundation
import TaksiSchema
import TaksiScreens

/// What a page token says: the request for the next page of one list, made by the server from
/// the upstream's answer, for one screen path and the skeleton revision the list was shown in.
struct PageToken: Sendable, Equatable {
    /// The screen's path as the data request named it (`restaurants/la-table/reviews`).
    var screen: String
    /// The list's component identifier.
    var list: String
    /// The paged source's name.
    var source: String
    /// The upstream request for the page: path and query from the upstream's base.
    var target: String
    /// The skeleton revision the list's first page was made for (`X-Taksi-Skeleton`).
    var revision: String
    /// Which page of the list the token fetches: 2 for the one after the first.
    var page: Int
    /// When the token stops being accepted, in seconds since 1970.
    var expires: Int
}

/// A key page tokens are signed with: its id travels in each token, so keys rotate without
/// breaking tokens in flight (the first key signs, every key verifies).
public struct PageTokenKey: Sendable {
    public var id: String
    let key: SymmetricKey

    /// - Parameter secret: at least ``minimumSecretBytes`` bytes, random.
    public init(id: String, secret: some DataProtocol) {
        self.id = id
        self.key = SymmetricKey(data: Array(secret))
    }

    /// The fewest bytes a key's secret has: HMAC-SHA256's output size.
    public static let minimumSecretBytes = 32

    /// Whether `id` can name a key: 1 to 32 letters, digits, `-` or `_` (it is part of every token).
    public static func isKeyID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count) && id.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// Signs and reads the tokens of lists that continue (``PagedList``): `1.<key id>.<payload>.<mac>`,
/// the payload base64url JSON of a ``PageToken``, the MAC HMAC-SHA256 of what comes before it.
///
/// A token holds only what the server derived (the upstream request of the next page), so no
/// client can make the server call a URL or a parameter value it chose: one not signed by a key
/// of this server, altered, past its time or made for another screen or list is refused before
/// anything is called.
public struct PageTokens: Sendable {
    /// The keys; the first signs.
    let keys: [PageTokenKey]
    /// How long a token is accepted past the time the data holding it may be served, counted from
    /// the upstream's answer (the source's `ttl`, `stale_while_revalidate` and `stale_if_error`).
    public var lifetime: Duration
    /// The pages of one list at most, the first included: the last one carries no token.
    public var maxPages: Int

    public init(keys: [PageTokenKey], lifetime: Duration = defaultLifetime, maxPages: Int = defaultMaxPages) {
        precondition(!keys.isEmpty, "page tokens need a key")
        self.keys = keys
        self.lifetime = lifetime
        self.maxPages = maxPages
    }

    public static let defaultLifetime: Duration = .seconds(3600)
    public static let defaultMaxPages = 20

    /// Tokens signed with a key made at random for this process: good for one server, not a fleet,
    /// whose replicas must share ``ServerConfiguration/pageTokenKeys``.
    public static func processLocal(lifetime: Duration = defaultLifetime, maxPages: Int = defaultMaxPages) -> PageTokens {
        PageTokens(
            keys: [PageTokenKey(id: "process", secret: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })], lifetime: lifetime,
            maxPages: maxPages)
    }

    /// Why a token is refused.
    enum Refusal: Error, Equatable {
        /// Not a token, or its MAC does not match: made or changed by someone without the key.
        case invalid(String)
        /// Signed with a key this server does not have.
        case unknownKey(String)
        case expired
    }

    func make(_ token: PageToken) -> String {
        let payload: JSONValue = [
            "s": .string(token.screen), "l": .string(token.list), "o": .string(token.source), "t": .string(token.target),
            "r": .string(token.revision), "n": .number(Double(token.page)), "e": .number(Double(token.expires)),
        ]
        let signed = "1.\(keys[0].id).\(Self.base64URL(JSONWriter.bytes(payload)))"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signed.utf8), using: keys[0].key)
        return signed + "." + Self.base64URL(Array(mac))
    }

    /// The token `text` names, when a key of this server signed it and it has not expired at `now`
    /// (seconds since 1970).
    func read(_ text: String, now: Int) -> Result<PageToken, Refusal> {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "1" else {
            return .failure(
                .invalid("it does not have a page token's form (\"1.\", a key id, the content and a signature, separated by dots)"))
        }
        guard let key = keys.first(where: { $0.id == parts[1] }) else {
            return .failure(.unknownKey(PageTokenKey.isKeyID(String(parts[1])) ? String(parts[1]) : "?"))
        }
        guard let mac = Self.bytes(base64URL: parts[3]),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(text.utf8.dropLast(parts[3].utf8.count + 1)), using: key.key)
        else { return .failure(.invalid("its signature does not match: it was changed, or not made by this server")) }
        // Signed by this server: what follows is its own writing.
        guard let payload = Self.bytes(base64URL: parts[2]), let value = try? JSONParser.parse(payload).value,
            case .string(let screen)? = value["s"], case .string(let list)? = value["l"], case .string(let source)? = value["o"],
            case .string(let target)? = value["t"], case .string(let revision)? = value["r"], let page = value["n"]?.exactInteger,
            let expires = value["e"]?.exactInteger
        else { return .failure(.invalid("its content cannot be read")) }
        guard now < expires else { return .failure(.expired) }
        return .success(
            PageToken(screen: screen, list: list, source: source, target: target, revision: revision, page: page, expires: expires))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func bytes(base64URL text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
