import Foundation

extension ServerConfiguration {
    /// The fleet's shared store (see docs/fleet.md): a PostgreSQL database the replicas share.
    /// Off unless ``connection`` is set; then keyed submits are claimed and answered once for
    /// the whole fleet instead of per process.
    public struct StoreSettings: Sendable, Equatable {
        /// Where the store is; nil keeps everything in this process (the default).
        public var connection: Connection? = nil
        /// Connections each replica opens to the store at most.
        public var poolSize: Int = 10
        /// Seconds one statement (with waiting for a connection) may take before it counts as failed.
        public var timeout: Double = 2

        public init() {}

        /// A PostgreSQL connection URL, read: `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE`.
        /// Its description never shows the password.
        public struct Connection: Sendable, Equatable, CustomStringConvertible {
            public var host: String
            public var port: Int
            public var user: String
            /// From the URL (percent-decoded), else `PGPASSWORD`; never logged.
            public var password: String?
            public var database: String
            public var tls: TLSMode

            /// libpq's `sslmode`s: whether TLS is used and how much of the server's certificate is checked.
            public enum TLSMode: String, Sendable, CaseIterable {
                /// No TLS.
                case disable
                /// TLS when the server offers it, its certificate not checked (libpq's default).
                case prefer
                /// TLS or no connection; the certificate not checked.
                case require
                /// TLS, the certificate checked against the system's authorities, not the host name.
                case verifyCA = "verify-ca"
                /// TLS, the certificate and the host name checked.
                case verifyFull = "verify-full"
            }

            public var description: String {
                "postgres://\(user)\(password == nil ? "" : ":***")@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)?sslmode=\(tls.rawValue)"
            }

            /// Reads `text`; errors never repeat it (it may hold a password).
            /// - Parameter environment: where `PGPASSWORD` is looked up when the URL has no password.
            static func parse(
                _ text: String, source: String, environment: [String: String] = ProcessInfo.processInfo.environment
            ) throws(ConfigurationError) -> Connection {
                let example =
                    "write postgres://USER:PASSWORD@HOST:5432/DATABASE (the password percent-encoded), like postgres://taksi:secret@db:5432/taksi"
                guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                    ["postgres", "postgresql"].contains(scheme)
                else {
                    throw ConfigurationError(source: source, message: "store is not a PostgreSQL connection URL; \(example)")
                }
                guard let host = components.host, !host.isEmpty else {
                    throw ConfigurationError(source: source, message: "store names no host; \(example)")
                }
                guard let user = components.user, !user.isEmpty else {
                    throw ConfigurationError(source: source, message: "store names no user; \(example)")
                }
                let port = components.port ?? 5432
                guard (1...65535).contains(port) else {
                    throw ConfigurationError(source: source, message: "store's port must be from 1 to 65535")
                }
                var database = components.path
                while database.hasPrefix("/") { database.removeFirst() }
                guard !database.isEmpty, !database.contains("/") else {
                    throw ConfigurationError(source: source, message: "store names no database (the path, like /taksi); \(example)")
                }
                var tls = TLSMode.prefer
                for item in components.queryItems ?? [] {
                    switch item.name {
                    case "sslmode":
                        guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                            throw ConfigurationError(
                                source: source,
                                message: "store's sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                        }
                        tls = mode
                    default:
                        throw ConfigurationError(
                            source: source, message: "store's URL takes only sslmode as a parameter, found \"\(item.name)\"")
                    }
                }
                let password = components.password?.removingPercentEncoding ?? environment["PGPASSWORD"]
                return Connection(
                    host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port,
                    user: user.removingPercentEncoding ?? user, password: password,
                    database: database.removingPercentEncoding ?? database, tls: tls)
            }
        }
    }
}
