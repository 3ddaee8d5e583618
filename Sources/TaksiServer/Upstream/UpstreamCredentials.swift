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

    /// Reads every secret now.
    init(
        _ credentials: [String: UpstreamCredential], environment: [String: String], http: HTTPClient, logger: Logger,
        metrics: any MetricsFactory
    ) {
        var kinds: [String: Kind] = [:]
        for (upstream, credential) in credentials {
            do {
                kinds[upstream] = try Self.kind(
                    upstream, credential, environment: environment, http: http, logger: logger, metrics: metrics)
            } catch {
                kinds[upstream] = .unavailable("\(error)")
            }
        }
        self.kinds = kinds
    }

    /// What stops the credentials of `credentials` from being read: one error per secret that is
    /// unset, empty or unreadable, naming where it was looked for (never a value).
    static func problems(_ credentials: [String: UpstreamCredential], environment: [String: String]) -> [ConfigurationError] {
        credentials.sorted { $0.key < $1.key }.flatMap { upstream, credential in
            Secret.problems(credential.secrets, of: "upstream \"\(upstream)\"'s credential", environment: environment)
        }
    }

    private static func kind(
        _ upstream: String, _ credential: UpstreamCredential, environment: [String: String], http: HTTPClient, logger: Logger,
        metrics: any MetricsFactory
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
                    http: http, logger: logger, metrics: metrics))
        }
    }

    /// No credentials (tests, and a configuration without any).
    init() { kinds = [:] }

    /// `Basic base64(user:password)` (RFC 7617).
    static func basic(_ username: String, _ password: String) -> String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }

    /// Whether a 401 from the upstream is answered by fetching a new token and sending again.
    func refreshes(_ upstream: String) -> Bool {
        if case .oauth? = kinds[upstream] { true } else { false }
    }

    /// The headers a call to `upstream` carries; a token that cannot be had fails the call.
    /// - Parameter rejected: the headers a 401 answered: a token fetched since is used, else a new one is.
    func headers(for upstream: String, rejected: [(String, String)]? = nil) async -> Result<[(String, String)], UpstreamFailure> {
        switch kinds[upstream] {
        case nil: return .success([])
        case .fixed(let headers)?: return .success(headers)
        case .unavailable(let problem)?: return .failure(.credential(problem))
        case .oauth(let tokens)?:
            return await tokens.token(replacing: rejected?.first { $0.0 == "Authorization" }?.1).map { [("Authorization", $0)] }
        }
    }
}

/// The access tokens of one OAuth 2.0 client (the client credentials grant, RFC 6749 section
/// 4.4): one is fetched when first needed and kept until 30 seconds before it expires; callers
/// waiting meanwhile share the one fetch. A fetch that fails fails the calls that waited for it,
/// is logged (the endpoint's status and error code, never the secret or a token) and is tried
/// again by the next call.
final class OAuthTokens: Sendable {
    let upstream: String
    private let client: OAuthClient
    private let clientID: String
    private let clientSecret: String
    private let http: HTTPClient
    private let logger: Logger
    private let metrics: any MetricsFactory

    private struct Held {
        var authorization: String
        var expires: ContinuousClock.Instant
    }

    private let state = NIOLockedValueBox<(held: Held?, fetch: Task<Result<Held, UpstreamFailure>, Never>?)>((nil, nil))

    /// A token kept is used until this long before it expires.
    static let margin: Duration = .seconds(30)
    /// How long a token without `expires_in` is kept.
    static let defaultLifetime: Duration = .seconds(300)

    init(
        upstream: String, client: OAuthClient, clientID: String, clientSecret: String, http: HTTPClient, logger: Logger,
        metrics: any MetricsFactory
    ) {
        self.upstream = upstream
        self.client = client
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.http = http
        self.logger = logger
        self.metrics = metrics
    }

    /// `Bearer <token>`: the one kept, unless it is `rejected` (a 401 answered it) or about to expire.
    func token(replacing rejected: String? = nil) async -> Result<String, UpstreamFailure> {
        let now = ContinuousClock.now
        // The token kept, or the one fetch every caller waits for.
        enum Next {
            case kept(String)
            case wait(Task<Result<Held, UpstreamFailure>, Never>)
        }
        let next: Next = state.withLockedValue { state in
            if let held = state.held, held.authorization != rejected, held.expires - Self.margin > now { return .kept(held.authorization) }
            if let fetch = state.fetch { return .wait(fetch) }
            let fetch = Task { await self.fetch() }
            state.fetch = fetch
            return .wait(fetch)
        }
        switch next {
        case .kept(let authorization): return .success(authorization)
        case .wait(let task): return await task.value.map(\.authorization)
        }
    }

    private func fetch() async -> Result<Held, UpstreamFailure> {
        let result = await request()
        state.withLockedValue { state in
            state.fetch = nil
            if case .success(let held) = result { state.held = held }
        }
        let outcome = if case .success = result { "ok" } else { "failed" }
        Counter(label: "taksi_upstream_token_fetches_total", dimensions: [("upstream", upstream), ("result", outcome)], factory: metrics)
            .increment()
        switch result {
        case .success:
            logger.debug("token fetched", metadata: ["upstream": .string(upstream)])
        case .failure(let failure):
            logger.error(
                "upstream credential failed: no access token from \(client.tokenURL): \(failure)", metadata: ["upstream": .string(upstream)]
            )
        }
        return result
    }

    private func request() async -> Result<Held, UpstreamFailure> {
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
            response = try await http.execute(request, timeout: .seconds(10))
            bytes = try await response.body.collect(upTo: 64 << 10)
        } catch {
            return .failure(.credential("the token endpoint did not answer: \(UpstreamClient.describe(error))"))
        }
        let body = try? JSONParser.parse(Array(buffer: bytes)).value
        guard (200..<300).contains(response.status.code) else {
            // The error code and description are the server's words about the request (RFC 6749 section 5.2), no secret.
            let code = body?["error"]?.stringValue.map { " (\($0))" } ?? ""
            return .failure(.credential("the token endpoint answered \(response.status.code)\(code)"))
        }
        guard let token = body?["access_token"]?.stringValue, !token.isEmpty,
            !token.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " })
        else {
            return .failure(.credential("the token endpoint's answer has no access_token"))
        }
        let lifetime = body?["expires_in"]?.numberValue.map { Duration.seconds($0) } ?? Self.defaultLifetime
        return .success(Held(authorization: "Bearer " + token, expires: .now + lifetime))
    }

    /// `application/x-www-form-urlencoded` (letters, digits and `*-._` as they are, space as `+`).
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "*-._ ")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: " ", with: "+")
    }
}
