import Foundation
import PostgresNIO
import TaksiScreens
import TaksiServer

// CDN purges that outlive their sender (``PurgeLedger``): table `taksi_purges`.
extension PostgresFleetStore {
    public func recordPurge(bundle: String, screens: [String]) async throws {
        // Kept sorted and once each, as the update below keeps them.
        let screens = Array(Set(screens)).sorted()
        _ = try await statement { client in
            // A replica that adds a screen the others did not find makes the purge unsent again.
            try await client.query(
                """
                INSERT INTO taksi_purges AS p (bundle, screens) VALUES (\(bundle), \(screens)::text[])
                ON CONFLICT (bundle) DO UPDATE
                    SET screens = ARRAY(SELECT DISTINCT s FROM unnest(p.screens || excluded.screens) AS s ORDER BY s),
                        sent_at = CASE WHEN excluded.screens <@ p.screens THEN p.sent_at END
                """)
        }
    }

    public func unsentPurges(recordedWithin window: Duration, before age: Duration) async throws -> [(bundle: String, screens: [String])] {
        try await statement { client in
            let rows = try await client.query(
                """
                SELECT bundle, screens FROM taksi_purges
                WHERE sent_at IS NULL AND recorded_at < now() - make_interval(secs => \(age.timeInterval))
                  AND recorded_at > now() - make_interval(secs => \(window.timeInterval))
                ORDER BY recorded_at
                """)
            var found: [(bundle: String, screens: [String])] = []
            for try await (bundle, screens) in rows.decode((String, [String]).self) { found.append((bundle, screens)) }
            return found
        }
    }

    public func purgeSent(bundle: String, screens: [String]) async throws {
        _ = try await statement { client in
            try await client.query(
                "UPDATE taksi_purges SET sent_at = now() WHERE bundle = \(bundle) AND sent_at IS NULL AND screens <@ \(screens)::text[]")
        }
    }
}
