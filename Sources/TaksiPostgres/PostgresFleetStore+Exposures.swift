import Foundation
import PostgresNIO
import TaksiScreens
public import TaksiServer

// Experiments' exposures, once per user and window for the fleet (``ExposureLedger``): tables
// `taksi_exposure_windows` and `taksi_exposures`.
extension PostgresFleetStore {
    public func recordExposures(_ records: [ExposureRecorder.Record], window: Duration) async throws -> [ExposureRecorder.Record] {
        guard !records.isEmpty else { return [] }
        exposureWindow.withLockedValue { $0 = window }
        let seconds = window.timeInterval
        let experiments = records.map(\.experiment)
        let users = records.map(\.user)
        let alternatives = records.map(\.alternative)
        let versions = records.map { $0.appVersion ?? "" }
        let platforms = records.map { $0.platform ?? "" }
        let screens = records.map(\.screen)
        let variants = records.map(\.variant)
        let times = records.map(\.time)
        let requests = records.map(\.requestID)
        let positions = records.indices.map { Int64($0) }
        return try await statement { client in
            // One statement decides for the fleet: the first of the batch's records of a user and
            // experiment claims the pair's window row (new, or past the window); only a claimed
            // pair's record is inserted, and only those are returned. Rows are claimed in the
            // order of their keys, so two replicas' batches over the same users wait for each
            // other instead of deadlocking.
            let rows = try await client.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(
                        \(experiments)::text[], \(users)::text[], \(alternatives)::text[], \(versions)::text[], \(platforms)::text[],
                        \(screens)::text[], \(variants)::text[], \(times)::bigint[], \(requests)::text[], \(positions)::bigint[])
                    AS i (experiment, user_id, alternative, app_version, platform, screen, variant, time_ms, request_id, position)),
                firsts AS (SELECT DISTINCT ON (experiment, user_id) * FROM input ORDER BY experiment, user_id, position),
                claimed AS (
                    INSERT INTO taksi_exposure_windows AS w (experiment, user_id, last_at)
                    SELECT experiment, user_id, now() FROM firsts ORDER BY experiment, user_id
                    ON CONFLICT (experiment, user_id) DO UPDATE SET last_at = excluded.last_at
                        WHERE w.last_at < now() - make_interval(secs => \(seconds))
                    RETURNING experiment, user_id),
                kept AS (
                    INSERT INTO taksi_exposures
                        (experiment, user_id, alternative, app_version, platform, screen, variant, exposed_at, request_id)
                    SELECT f.experiment, f.user_id, f.alternative, NULLIF(f.app_version, ''), NULLIF(f.platform, ''), f.screen,
                        f.variant, to_timestamp(f.time_ms / 1000.0), f.request_id
                    FROM firsts AS f JOIN claimed AS c USING (experiment, user_id)
                    RETURNING experiment, user_id)
                SELECT f.position FROM firsts AS f JOIN kept AS k USING (experiment, user_id) ORDER BY f.position
                """)
            var kept: [ExposureRecorder.Record] = []
            for try await position in rows.decode(Int64.self) {
                // One of the positions sent, unless the store is not the one this code wrote for.
                guard let index = Int(exactly: position), records.indices.contains(index) else {
                    throw StoreError("the store answered position \(position) for a batch of \(records.count) exposures")
                }
                kept.append(records[index])
            }
            return kept
        }
    }
}
