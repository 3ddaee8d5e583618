import Foundation
import PostgresNIO
import TaksiScreens
public import TaksiServer

// The replicas' reports (``ReplicaRegistry``): table `taksi_replicas`.
extension PostgresFleetStore {
    public func report(_ report: ReplicaReport) async throws {
        _ = try await statement { client in
            try await client.query(
                """
                INSERT INTO taksi_replicas (replica, bundle, since, refused_bundle, refusal, seen)
                VALUES (\(report.replica), \(report.bundle), \(report.since), \(report.refusedBundle), \(report.refusal), now())
                ON CONFLICT (replica) DO UPDATE SET bundle = excluded.bundle, since = excluded.since,
                    refused_bundle = excluded.refused_bundle, refusal = excluded.refusal, seen = now()
                """)
        }
    }

    public func replicas(seenWithin alive: Duration) async throws -> [ReplicaReport] {
        let seconds = alive.timeInterval
        return try await statement { client in
            let rows = try await client.query(
                """
                SELECT replica, bundle, since, refused_bundle, refusal, seen FROM taksi_replicas
                WHERE seen > now() - make_interval(secs => \(seconds)) ORDER BY replica
                """)
            var reports: [ReplicaReport] = []
            for try await (replica, bundle, since, refusedBundle, refusal, seen) in rows.decode(
                (String, String?, Date?, String?, String?, Date).self)
            {
                reports.append(
                    ReplicaReport(
                        replica: replica, bundle: bundle, since: since, refusedBundle: refusedBundle, refusal: refusal, seen: seen))
            }
            return reports
        }
    }
}
