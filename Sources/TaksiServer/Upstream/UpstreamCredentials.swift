import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TaksiSchema
import TaksiScreens

/// The headers that prove who is calling an upstream, made from its configured
/// ``UpstreamCredential``: fixed ones read once at start, or an OAuth 2.0 access token kept
/// until shortly before it expires. They are added to each call after its cache key is made (so
/// they are never part of it) and go only to that upstream's origin (redirects elsewhere are
/// never followed); no log line, span or error message holds them.
final class UpstreamCredentials: Sendable {
    /// The headers of a fixed credential, or the token source of an OAuth client.
    enum Kind: Sendable {
        case fixed([(String, String)])
        case oauth(OAuthTokens)
        /// A secret could not be read at start (``problems(_:environment:)`` stops a server's start
        /// for it first): calls fail, saying which.
        case unavailable(String)
    }

    private let kinds: [String: Kind]
    /// Where OAuth token fetches run, each shared by the calls that wait for it: a service of the
    /// application's group, so a fetch goes on when the call that started it gives up.
    let fetches: BackgroundWork

    /// Reads every secret now.
    init(
        _ credentials: [String: UpstreamCredential], environment: [String: String], http: HTTPClient, logger: Logger,
        metrics: any MetricsFactory
    ) {
        let fetches = BackgroundWork("upstream token fetches", logger: logger)
        var kinds: [String: Kind] = [:]
        for (upstream, credential) in credentials {
            do {
                kinds[upstream] = try Self.kind(
                    upstream, credential, environment: environment, http: http, fetches: fetches, logger: logger, metrics: metrics)
            } catch {
                kinds[upstream] = .unavailable("\(error)")
            }
        }
        self.kinds = kinds
        self.fetches = fetches
    }

    /// What stops the credentials of `credentials` from being read: one error per secret that is
    /// unset, empty or unreadable, naming where it was looked for (never a value).
    static func problems(_ credentials: [String: UpstreamCredential], environment: [String: String]) -> [ConfigurationError] {
        credentials.sorted { $0.key < $1.key }.flatMap { upstream, credential in
            Secret.problems(credential.secrets, of: "upstream \"\(upstream)\"'s credential", environment: environment)
        }
    }

    private static func kind(
        _ upstream: String, _ credential: UpstreamCredential, environment: [String: String], http: HTTPClient,
        fetches: BackgroundWork, logger: Logger, metrics: any MetricsFactory
    ) throws(ConfigurationError) -> Kind {
        func read(_ secret: Secret) throws(ConfigurationError) -> String {
            switch secret.value(environment: environment) {
            case .success(let value): return value
            case .failure(let error):
                throw ConfigurationError(source: "upstream \"\(upstream)\"'s credential in \(error.source)", message: error.message)
            }
        }
        switch credential {
        case .bearer(let token):
            return .fixed([("Authorization", "Bearer " + (try read(token)))])
        case .basic(let username, let password):
            return .fixed([("Authorization", Self.basic(try read(username), try read(password)))])
        case .headers(let headers):
            var fixed: [(String, String)] = []
            for name in headers.keys.sorted() { fixed.append((name, try read(headers[name]!))) }
            return .fixed(fixed)
        case .clientCredentials(let client):
            return .oauth(
                OAuthTokens(
                    upstream: upstream, client: client, clientID: try read(client.clientID), clientSecret: try read(client.clientSecret),
                    http: http, fetches: fetches, logger: logger, metrics: metrics))
        }
    }

    /// No credentials (tests, and a configuration without any).
    init() {
        kinds = [:]
        fetches = BackgroundWork("upstream token fetches", logger: Logger(label: "taksi"))
    }

    /// `Basic base64(user:password)` (RFC 7617).
    static func basic(_ username: String, _ password: String) -> String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }

    /// Whether a 401 from the upstream is answered by fetching a new token and sending again.
    func refreshes(_ upstream: String) -> Bool {
        if case .oauth? = kinds[upstream] { true } else { false }
    }

    /// The headers a call to `upstream` carries; a token that cannot be had fails the call.
    /// - Parameters:
    ///   - rejected: the headers a 401 answered: a token fetched since is used, else a new one is.
    ///   - deadline: when the call's time is up: a token still awaited then fails it with
    ///     ``UpstreamFailure/timeout(_:)`` of `limit` (the call's timeout), as a slow upstream would.
    func headers(
        for upstream: String, rejected: [(String, String)]? = nil, until deadline: ContinuousClock.Instant, limit: Duration
    ) async -> Result<[(String, String)], UpstreamFailure> {
        switch kinds[upstream] {
        case nil: return .success([])
        case .fixed(let headers)?: return .success(headers)
        case .unavailable(let problem)?: return .failure(.credential(problem))
        case .oauth(let tokens)?:
            return await tokens.token(replacing: rejected?.first { $0.0 == "Authorization" }?.1, until: deadline, limit: limit).map {
                [("Authorization", $0)]
            }
        }
    }
}

/// The access tokens of one OAuth 2.0 client (the client credentials grant, RFC 6749 section
/// 4.4): one is fetched when first needed and kept until shortly before it expires (30 seconds, or
/// half its life when that is shorter); callers waiting meanwhile share the one fetch. A fetch that
/// fails fails the calls that waited for it, is logged (the endpoint's status and error code, never
/// the secret or a token) and is tried again by the next call. A caller waits for a token at most
/// as long as it is given (its source's timeout): the fetch goes on for the callers after it.
final class OAuthTokens: Sendable {
    let upstream: String
    private let client: OAuthClient
    private let clientID: String
    private let clientSecret: String
    private let http: HTTPClient
    private let fetches: BackgroundWork
    private let logger: Logger
    private let metrics: any MetricsFactory

    private struct Held {
        var authorization: String
        /// When a new token is fetched instead: a margin before it expires.
        var renew: ContinuousClock.Instant
    }

    private struct State {
        var held: Held?
        /// Whether a fetch is under way; the callers waiting for it.
        var fetching = false
        var waiters: [TokenWaiter] = []
    }

    private let state = NIOLockedValueBox(State())

    /// A token kept is used until this long before it expires (or half its life, when shorter).
    static let margin: Duration = .seconds(30)
    /// How long a token is kept when the endpoint's `expires_in` is absent or unusable.
    static let defaultLifetime: Duration = .seconds(300)
    /// The lifetimes a token is kept for: an `expires_in` outside them (and within
    /// ``longestExpiry``) is brought to the nearer end, so a token is asked for again at least daily.
    static let lifetimes: ClosedRange<Double> = 1...86_400
    /// An `expires_in` past this many seconds (ten years) is no lifetime anyone means: it is treated as absent.
    static let longestExpiry: Double = 315_360_000
    /// How long the token endpoint has to answer, whoever waits.
    static let endpointTimeout: TimeAmount = .seconds(10)

    init(
        upstream: String, client: OAuthClient, clientID: String, clientSecret: String, http: HTTPClient, fetches: BackgroundWork,
        logger: Logger, metrics: any MetricsFactory
    ) {
        self.upstream = upstream
        self.client = client
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.http = http
        self.fetches = fetches
        self.logger = logger
        self.metrics = metrics
    }

    /// `Bearer <token>`: the one kept, unless it is `rejected` (a 401 answered it) or about to
    /// expire; else the one being fetched, waited for until `deadline` (the calling source's
    /// timeout, which it fails with then: ``UpstreamFailure/timeout(_:)`` of `limit`). The fetch
    /// goes on for the callers after it.
    func token(
        replacing rejected: String? = nil, until deadline: ContinuousClock.Instant, limit: Duration
    ) async -> Result<String, UpstreamFailure> {
        let waiter = TokenWaiter()
        let now = ContinuousClock.now
        let (kept, starts): (String?, Bool) = state.withLockedValue { state in
            if let held = state.held, held.authorization != rejected, held.renew > now { return (held.authorization, false) }
            state.waiters.append(waiter)
            defer { state.fetching = true }
            return (nil, !state.fetching)
        }
        if let kept { return .success(kept) }
        // In the background: the fetch serves every caller waiting and the next ones, whichever
        // of them gives up first; it ends within the endpoint's timeout.
        if starts, !fetches.start("a token fetch for upstream \"\(upstream)\"", { await self.fetch() }) {
            finish(.failure(.credential("no token was fetched: the server is shutting down")))
        }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                waiter.finish(.failure(.timeout(limit)))
            }
            let result = await waiter.wait()
            group.cancelAll()
            return result
        }
    }

    private func fetch() async {
        let (result, problem) = await request()
        finish(result)
        let outcome = if case .success = result { "ok" } else { "failed" }
        Counter(label: "taksi_upstream_token_fetches_total", dimensions: [("upstream", upstream), ("result", outcome)], factory: metrics)
            .increment()
        if let problem {
            logger.warning(
                "upstream credential: \(problem); the token is kept \(Self.defaultLifetime.components.seconds) s",
                metadata: ["upstream": .string(upstream)])
        }
        switch result {
        case .success:
            logger.debug("token fetched", metadata: ["upstream": .string(upstream)])
        case .failure(let failure):
            logger.error(
                "upstream credential failed: no access token from \(client.tokenURL): \(failure)", metadata: ["upstream": .string(upstream)]
            )
        }
    }

    /// Ends the fetch under way with `result`: kept when it is a token, and given to every caller
    /// waiting.
    private func finish(_ result: Result<Held, UpstreamFailure>) {
        let waiters = state.withLockedValue { state in
            defer {
                state.fetching = false
                state.waiters = []
            }
            if case .success(let held) = result { state.held = held }
            return state.waiters
        }
        for waiter in waiters { waiter.finish(result.map(\.authorization)) }
    }

    /// One request to the token endpoint: the token, or why not; and what was wrong with an
    /// answer that gave a token all the same (an unusable `expires_in`).
    private func request() async -> (Result<Held, UpstreamFailure>, problem: String?) {
        var form = [("grant_type", "client_credentials")]
        if let scope = client.scope { form.append(("scope", scope)) }
        if let audience = client.audience { form.append(("audience", audience)) }
        var request = HTTPClientRequest(url: client.tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "taksi-server")
        if client.sendsSecretInBody {
            form += [("client_id", clientID), ("client_secret", clientSecret)]
        } else {
            // RFC 6749 section 2.3.1: each form-encoded before they are joined.
            request.headers.add(
                name: "Authorization", value: UpstreamCredentials.basic(Self.formEncoded(clientID), Self.formEncoded(clientSecret)))
        }
        request.body = .bytes(ByteBuffer(string: form.map { "\($0)=\(Self.formEncoded($1))" }.joined(separator: "&")))
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request, timeout: Self.endpointTimeout)
            bytes = try await response.body.collect(upTo: 64 << 10)
        } catch {
            return (.failure(.credential("the token endpoint did not answer: \(UpstreamClient.describe(error))")), nil)
        }
        let body = try? JSONParser.parse(Array(buffer: bytes)).value
        guard (200..<300).contains(response.status.code) else {
            // The error code is the server's word about the request (RFC 6749 section 5.2), no
            // secret; quoted and escaped, since the endpoint may be anyone's and the log is read.
            let code = body?["error"]?.stringValue.map { " (\(Self.quoted($0)))" } ?? ""
            return (.failure(.credential("the token endpoint answered \(response.status.code)\(code)")), nil)
        }
        guard let token = body?["access_token"]?.stringValue, !token.isEmpty,
            !token.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " })
        else {
            return (.failure(.credential("the token endpoint's answer has no access_token")), nil)
        }
        let (lifetime, problem) = Self.lifetime(expiresIn: body?["expires_in"])
        let renew = ContinuousClock.now + lifetime - min(Self.margin, lifetime / 2)
        return (.success(Held(authorization: "Bearer " + token, renew: renew)), problem)
    }

    /// How long a token is kept, from the token endpoint's `expires_in` (RFC 6749 section 5.1: its
    /// lifetime in seconds; a number, or a numeric string as some providers send it), brought within
    /// ``lifetimes``. Absent: ``defaultLifetime``. Not a number, zero or less, or past
    /// ``longestExpiry``: ``defaultLifetime`` too, and why, to be logged.
    static func lifetime(expiresIn value: JSONValue?) -> (Duration, problem: String?) {
        let seconds: Double?
        switch value {
        case nil, .null?: return (defaultLifetime, nil)
        case .number(let number)?: seconds = number
        case .string(let text)?: seconds = Double(text.trimmingCharacters(in: .whitespaces))
        default: seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds > 0, seconds <= longestExpiry else {
            let written = value.map { JSONWriter.string($0) } ?? ""
            return (defaultLifetime, "the token endpoint's expires_in \(written.prefix(100)) is not a lifetime in seconds")
        }
        let clamped = min(max(seconds, lifetimes.lowerBound), lifetimes.upperBound)
        // Within `lifetimes`, so never nil.
        return (Duration.seconds(clamped, within: lifetimes) ?? defaultLifetime, nil)
    }

    /// Text an outside endpoint sent, as a log line shows it: in quotes, control characters and
    /// line breaks escaped (so it cannot forge a line or steer a terminal), at most 100 characters.
    static func quoted(_ text: String) -> String {
        let escaped = JSONWriter.string(.string(String(text.prefix(100))))
        return text.count > 100 ? String(escaped.dropLast()) + "...\"" : escaped
    }

    /// `application/x-www-form-urlencoded` (letters, digits and `*-._` as they are, space as `+`).
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "*-._ ")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: " ", with: "+")
    }
}

/// One caller waiting for a token: finished once, by the fetch or when the caller's time is up
/// (or its task is cancelled), whichever comes first; a finish before the caller waits is kept for it.
final class TokenWaiter: Sendable {
    private struct State {
        var result: Result<String, UpstreamFailure>?
        var continuation: CheckedContinuation<Result<String, UpstreamFailure>, Never>?
    }

    private let state = NIOLockedValueBox(State())

    func wait() async -> Result<String, UpstreamFailure> {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state in
                if state.result == nil { state.continuation = continuation }
                return state.result
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The first call decides; later ones do nothing.
    func finish(_ result: Result<String, UpstreamFailure>) {
        let waiting = state.withLockedValue { state -> CheckedContinuation<Result<String, UpstreamFailure>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(returning: result)
    }
}
