import Foundation
import TaksiSchema
import TaksiScreens

/// What config.json says of an upstream besides its URL, when it gives an object:
///
/// ```json
/// "petstore": {"url": "https://petstore3.swagger.io/api/v3", "openapi": "openapi/petstore.yaml",
///              "auth": {"bearer": {"env": "PETSTORE_TOKEN"}}}
/// ```
public struct UpstreamOptions: Sendable, Equatable {
    /// The upstream's OpenAPI document (3.0 or 3.1, JSON or YAML): sources' paths and bindings are
    /// checked against it. A relative path in the file is relative to the file.
    public var openAPIDocument: String?
    /// The credential every call to the upstream carries.
    public var credential: UpstreamCredential?

    public init(openAPIDocument: String? = nil, credential: UpstreamCredential? = nil) {
        self.openAPIDocument = openAPIDocument
        self.credential = credential
    }

    /// The keys of an upstream's object.
    static let keys = ["url", "openapi", "auth"]
}

/// A secret's value comes from the environment or a file (a mounted Kubernetes Secret), never
/// from the configuration file's text, and is never written: its description names where it is.
public struct Secret: Sendable, Equatable, CustomStringConvertible {
    public enum Origin: Sendable, Equatable {
        /// An environment variable's value.
        case environment(String)
        /// A file's content, without a final line break.
        case file(String)
    }

    public var origin: Origin

    public init(_ origin: Origin) { self.origin = origin }

    public var description: String {
        switch origin {
        case .environment(let name): "the environment variable \(name)"
        case .file(let path): "the file \(path)"
        }
    }

    /// The value, read now; what is wrong when it cannot be (unset, empty, unreadable).
    public func value(environment: [String: String]) -> Result<String, ConfigurationError> {
        let text: String?
        switch origin {
        case .environment(let name): text = environment[name]
        case .file(let path): text = FileManager.default.contents(atPath: path).flatMap { String(data: $0, encoding: .utf8) }
        }
        var value = text ?? ""
        while value.hasSuffix("\n") || value.hasSuffix("\r") { value.removeLast() }
        guard !value.isEmpty else {
            return .failure(
                ConfigurationError(
                    source: description,
                    message: text == nil ? "it is not set (or cannot be read); give the secret there" : "it is empty"))
        }
        // A header value with a line break would split the request: refused whatever it is.
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .failure(
                ConfigurationError(source: description, message: "it holds a control character (a line break); write the value alone"))
        }
        return .success(value)
    }
}

/// How calls to an upstream prove who is calling. The app's own headers are forwarded per source
/// (`headers: [Authorization]`); these are the server's own credentials.
public enum UpstreamCredential: Sendable, Equatable {
    /// `Authorization: Bearer <token>`.
    case bearer(Secret)
    /// `Authorization: Basic <base64(user:password)>`.
    case basic(username: Secret, password: Secret)
    /// Headers of fixed values, like an API key: `{"X-Api-Key": {"env": "SHOP_KEY"}}`.
    case headers([String: Secret])
    /// An OAuth 2.0 access token from the client credentials grant (RFC 6749 section 4.4), fetched
    /// when first needed, kept until shortly before it expires, fetched again once on a 401.
    case clientCredentials(OAuthClient)

    /// The secrets it reads, for checking they are there and for the Kubernetes manifest.
    public var secrets: [Secret] {
        switch self {
        case .bearer(let secret): [secret]
        case .basic(let username, let password): [username, password]
        case .headers(let headers): headers.keys.sorted().compactMap { headers[$0] }
        case .clientCredentials(let client): [client.clientID, client.clientSecret]
        }
    }

    /// The kinds config.json names.
    static let kinds = ["bearer", "basic", "headers", "oauth2"]
}

/// An OAuth 2.0 client of the client credentials grant.
public struct OAuthClient: Sendable, Equatable {
    /// The authorization server's token endpoint.
    public var tokenURL: String
    public var clientID: Secret
    public var clientSecret: Secret
    /// Space-separated scopes asked for; none when nil.
    public var scope: String?
    /// An `audience` parameter, which some servers (Auth0, Okta) require.
    public var audience: String?
    /// How the client authenticates to the token endpoint: HTTP Basic (`client_secret_basic`,
    /// the default the RFC asks every server to support) or in the form (`client_secret_post`).
    public var sendsSecretInBody = false

    public init(
        tokenURL: String, clientID: Secret, clientSecret: Secret, scope: String? = nil, audience: String? = nil,
        sendsSecretInBody: Bool = false
    ) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.audience = audience
        self.sendsSecretInBody = sendsSecretInBody
    }

    static let keys = ["token_url", "client_id", "client_secret", "scope", "audience", "client_authentication"]
}

extension UpstreamOptions {
    /// Reads the members of an upstream's object other than `url`.
    /// - Parameters:
    ///   - directory: the configuration file's directory, which relative paths are taken from.
    ///   - source: where it is, for errors (`config.json: "upstreams".shop`).
    init(_ members: [String: JSONValue], relativeTo directory: String, source: String) throws(ConfigurationError) {
        if let unknown = members.keys.sorted().first(where: { !Self.keys.contains($0) }) {
            throw ConfigurationError(
                source: source,
                message: "unknown key \"\(unknown)\"; an upstream's object has \(Self.keys.joined(separator: ", "))"
                    + NameSuggestion.hint(for: unknown, among: Self.keys))
        }
        if let document = members["openapi"] {
            guard case .string(let path) = document, !path.isEmpty else {
                throw ConfigurationError(
                    source: "\(source).openapi", message: "openapi is the path of the upstream's OpenAPI document, like openapi/shop.yaml")
            }
            openAPIDocument = Self.path(path, relativeTo: directory)
        }
        if let auth = members["auth"] {
            credential = try Self.credential(auth, relativeTo: directory, source: "\(source).auth")
        }
    }

    private static func path(_ path: String, relativeTo directory: String) -> String {
        path.hasPrefix("/") || directory.isEmpty ? path : (directory as NSString).appendingPathComponent(path)
    }

    private static func credential(
        _ value: JSONValue, relativeTo directory: String, source: String
    ) throws(ConfigurationError) -> UpstreamCredential {
        guard case .object(let members) = value, members.count == 1, let (kind, body) = members.first else {
            throw ConfigurationError(
                source: source,
                message: "auth is an object of one kind of credential: \(UpstreamCredential.kinds.joined(separator: ", ")), "
                    + "like {\"bearer\": {\"env\": \"SHOP_TOKEN\"}}")
        }
        let at = "\(source).\(kind)"
        func secret(_ value: JSONValue?, _ key: String) throws(ConfigurationError) -> Secret {
            try Secret.read(value, relativeTo: directory, source: key.isEmpty ? at : "\(at).\(key)")
        }
        func object(_ keys: [String], required: [String]) throws(ConfigurationError) -> [String: JSONValue] {
            guard case .object(let members) = body else {
                throw ConfigurationError(source: at, message: "\(kind) is an object of \(keys.joined(separator: ", "))")
            }
            if let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
                throw ConfigurationError(
                    source: at,
                    message: "unknown key \"\(unknown)\"; \(kind) has \(keys.joined(separator: ", "))"
                        + NameSuggestion.hint(for: unknown, among: keys))
            }
            if let missing = required.first(where: { members[$0] == nil }) {
                throw ConfigurationError(source: at, message: "\(kind) needs \"\(missing)\"")
            }
            return members
        }
        switch kind {
        case "bearer":
            return .bearer(try secret(body, ""))
        case "basic":
            let members = try object(["username", "password"], required: ["username", "password"])
            return .basic(username: try secret(members["username"], "username"), password: try secret(members["password"], "password"))
        case "headers":
            return .headers(try headerSecrets(body, at: at, secret: secret))
        case "oauth2":
            let members = try object(OAuthClient.keys, required: ["token_url", "client_id", "client_secret"])
            return .clientCredentials(try oauthClient(members, at: at, secret: secret))
        default:
            throw ConfigurationError(
                source: source,
                message: "\"\(kind)\" is not a kind of credential; use one of \(UpstreamCredential.kinds.joined(separator: ", "))"
                    + NameSuggestion.hint(for: kind, among: UpstreamCredential.kinds))
        }
    }

    /// `headers`: header names and their secrets (an API key).
    private static func headerSecrets(
        _ body: JSONValue, at: String, secret: (JSONValue?, String) throws(ConfigurationError) -> Secret
    ) throws(ConfigurationError) -> [String: Secret] {
        guard case .object(let headers) = body, !headers.isEmpty else {
            throw ConfigurationError(
                source: at, message: "headers is an object of header names and secrets, like {\"X-Api-Key\": {\"env\": \"SHOP_KEY\"}}")
        }
        var secrets: [String: Secret] = [:]
        for (header, value) in headers {
            guard HTTPSource.isHeaderName(header), !HTTPSource.unforwardableHeaders.contains(header.lowercased()) else {
                throw ConfigurationError(source: at, message: "\"\(header)\" is not a header an upstream call can carry")
            }
            secrets[header] = try secret(value, header)
        }
        return secrets
    }

    /// `oauth2`'s members (their keys checked): the token endpoint, the client, scope and audience.
    private static func oauthClient(
        _ members: [String: JSONValue], at: String, secret: (JSONValue?, String) throws(ConfigurationError) -> Secret
    ) throws(ConfigurationError) -> OAuthClient {
        guard case .string(let tokenURL) = members["token_url"], let url = URL(string: tokenURL),
            ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false, url.user == nil
        else {
            throw ConfigurationError(
                source: "\(at).token_url", message: "token_url is the authorization server's token endpoint, an http(s) URL")
        }
        var client = OAuthClient(
            tokenURL: tokenURL, clientID: try secret(members["client_id"], "client_id"),
            clientSecret: try secret(members["client_secret"], "client_secret"))
        for key in ["scope", "audience"] {
            guard let value = members[key] else { continue }
            guard case .string(let text) = value, !text.isEmpty else {
                throw ConfigurationError(source: "\(at).\(key)", message: "\(key) is a string")
            }
            if key == "scope" { client.scope = text } else { client.audience = text }
        }
        switch members["client_authentication"] {
        case nil, .string("basic")?: client.sendsSecretInBody = false
        case .string("post")?: client.sendsSecretInBody = true
        default:
            throw ConfigurationError(
                source: "\(at).client_authentication",
                message:
                    "client_authentication is \"basic\" (the client's id and secret in an Authorization header, the default) or \"post\" (in the form)"
            )
        }
        return client
    }
}

extension Secret {
    /// One error per secret of `secrets` that cannot be read (unset, empty, unreadable), naming
    /// whose it is (`owner`) and where it was looked for, never a value: what stops the start.
    static func problems(_ secrets: [Secret], of owner: String, environment: [String: String]) -> [ConfigurationError] {
        secrets.compactMap { secret in
            guard case .failure(let error) = secret.value(environment: environment) else { return nil }
            return ConfigurationError(source: "\(owner) in \(error.source)", message: error.message)
        }
    }

    /// `{"env": "NAME"}` or `{"file": "path"}` (relative to `directory`, the configuration file's);
    /// a literal is refused, so no secret sits in the file.
    static func read(_ value: JSONValue?, relativeTo directory: String, source: String) throws(ConfigurationError) -> Secret {
        guard case .object(let members)? = value, members.count == 1, let (kind, where_) = members.first, case .string(let text) = where_,
            !text.isEmpty, kind == "env" || kind == "file"
        else {
            throw ConfigurationError(
                source: source,
                message: "a credential comes from the environment or a file, never from this file's text: write {\"env\": \"VARIABLE\"} "
                    + "or {\"file\": \"/run/secrets/name\"} (a mounted secret)")
        }
        if kind == "env" {
            guard text.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "_" }), text.first?.isNumber == false
            else {
                throw ConfigurationError(
                    source: source, message: "\"\(text)\" is not an environment variable's name; use letters, digits and '_'")
            }
            return Secret(.environment(text))
        }
        return Secret(.file(text.hasPrefix("/") || directory.isEmpty ? text : (directory as NSString).appendingPathComponent(text)))
    }
}
