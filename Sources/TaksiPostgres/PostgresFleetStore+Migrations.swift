import Foundation
import Logging
import PostgresNIO
import TaksiServer

// The store's schema: versioned migrations, each run once, by whichever replica gets there first.
extension PostgresFleetStore {
    /// The store's schema, one step per version, in order; a step is never changed once
    /// released, only followed by another.
    static let migrations: [(version: Int, name: String, sql: String)] = [
        (
            1, "submits",
            """
            CREATE TABLE taksi_submits (
                key text PRIMARY KEY,
                fingerprint bytea NOT NULL,
                claim uuid,
                lease_until timestamptz,
                status integer,
                headers text,
                body bytea,
                created_at timestamptz NOT NULL
            );
            CREATE INDEX taksi_submits_created_at ON taksi_submits (created_at)
            """
        ),
        (
            2, "published screens",
            """
            CREATE TABLE taksi_bundles (
                id text PRIMARY KEY,
                content bytea NOT NULL,
                bytes integer NOT NULL,
                screens integer NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE taksi_releases (
                number bigserial PRIMARY KEY,
                bundle text NOT NULL REFERENCES taksi_bundles (id),
                kind text NOT NULL,
                released_at timestamptz NOT NULL DEFAULT now(),
                released_by text NOT NULL
            );
            CREATE TABLE taksi_replicas (
                replica text PRIMARY KEY,
                bundle text,
                since timestamptz,
                refused_bundle text,
                refusal text,
                seen timestamptz NOT NULL
            )
            """
        ),
        (
            3, "revisions of bundles",
            """
            CREATE TABLE taksi_revisions (
                revision text NOT NULL,
                bundle text NOT NULL REFERENCES taksi_bundles (id),
                PRIMARY KEY (revision, bundle)
            )
            """
        ),
        (
            4, "exposures",
            """
            CREATE TABLE taksi_exposures (
                experiment text NOT NULL,
                user_id text NOT NULL,
                alternative text NOT NULL,
                app_version text,
                platform text,
                screen text NOT NULL,
                variant text NOT NULL,
                exposed_at timestamptz NOT NULL,
                request_id text NOT NULL
            );
            CREATE INDEX taksi_exposures_experiment ON taksi_exposures (experiment, exposed_at);
            CREATE INDEX taksi_exposures_user ON taksi_exposures (user_id);
            CREATE TABLE taksi_exposure_windows (
                experiment text NOT NULL,
                user_id text NOT NULL,
                last_at timestamptz NOT NULL,
                PRIMARY KEY (experiment, user_id)
            )
            """
        ),
        (
            5, "cdn purges",
            """
            CREATE TABLE taksi_purges (
                bundle text PRIMARY KEY,
                screens text[] NOT NULL,
                recorded_at timestamptz NOT NULL DEFAULT now(),
                sent_at timestamptz
            )
            """
        ),
    ]

    /// The advisory lock migrations hold: one replica migrates, the others wait and find it done.
    static let migrationLock: Int64 = 0x7461_6B73_6900_0001

    /// Brings the schema to the newest version this build knows, in one transaction under the lock.
    func migrate() async throws {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: self.logger)
            do {
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS taksi_migrations (
                        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                    """, logger: self.logger)
                var applied = 0
                for try await version in try await connection.query(
                    "SELECT coalesce(max(version), 0) FROM taksi_migrations", logger: self.logger
                ).decode(Int.self) { applied = version }
                for migration in Self.migrations where migration.version > applied {
                    for part in migration.sql.components(separatedBy: ";\n") {
                        try await connection.query(PostgresQuery(unsafeSQL: part), logger: self.logger)
                    }
                    try await connection.query(
                        "INSERT INTO taksi_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: self.logger
                    )
                    self.logger.info("store: migrated", metadata: ["version": "\(migration.version)", "name": .string(migration.name)])
                }
                try await connection.query("COMMIT", logger: self.logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: self.logger)
                throw error
            }
        }
    }
}
