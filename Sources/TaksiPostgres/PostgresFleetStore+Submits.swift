public import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import TaksiScreens
public import TaksiServer

// Keyed submits (``SubmitClaims``): table `taksi_submits`.
extension PostgresFleetStore {
    public func claimSubmit(key: String, fingerprint: [UInt8], lease: Duration, window: Duration) async throws -> SubmitClaim {
        let token = UUID()
        let print = ByteBuffer(bytes: fingerprint)
        let leaseSeconds = lease.timeInterval
        let windowSeconds = window.timeInterval
        return try await statement { client in
            // One statement decides: a new key is inserted; an answer older than the window, or a
            // claim whose lease ran out with the same request, is taken over; anything else
            // stays, and the row as it is says what to do.
            let rows = try await client.query(
                """
                WITH claim AS (
                    INSERT INTO taksi_submits AS s (key, fingerprint, claim, lease_until, created_at)
                    VALUES (\(key), sha256(\(print)), \(token), now() + make_interval(secs => \(leaseSeconds)), now())
                    ON CONFLICT (key) DO UPDATE
                        SET fingerprint = excluded.fingerprint, claim = excluded.claim, lease_until = excluded.lease_until,
                            created_at = excluded.created_at, status = NULL, headers = NULL, body = NULL
                        WHERE s.created_at < now() - make_interval(secs => \(windowSeconds))
                           OR (s.status IS NULL AND s.lease_until < now() AND s.fingerprint = excluded.fingerprint)
                    RETURNING claim)
                SELECT (SELECT claim FROM claim) IS NOT NULL, s.fingerprint = sha256(\(print)), s.status, s.headers, s.body
                FROM (SELECT 1) AS one LEFT JOIN taksi_submits AS s ON s.key = \(key)
                """)
            for try await (won, same, status, headers, body) in rows.decode((Bool, Bool?, Int?, String?, ByteBuffer?).self) {
                if won { return .claimed(token: token) }
                guard let same else { break }
                guard same else { return .mismatch }
                guard let status, let headers else { return .running }
                // A row is outside the process: a status no HTTP answer has is refused, not replayed
                // (and never reaches NIO's status, which traps on a negative one).
                guard Self.replayableStatuses.contains(status) else {
                    throw StoreError("the answer stored for this key has status \(status), which is no HTTP status; it is not replayed")
                }
                return .answered(
                    SubmitAnswer(
                        status: HTTPResponseStatus(statusCode: status), headers: Self.decodeHeaders(headers),
                        body: body.map { Array($0.readableBytesView) } ?? []))
            }
            // Not seen by this statement's snapshot: a claim committed while the insert waited on it
            // (or a row pruned since). Running, for now; the caller asks again.
            return .running
        }
    }

    public func finishSubmit(key: String, token: UUID, answer: SubmitAnswer?) async throws -> Bool {
        try await statement { client in
            let rows: PostgresRowSequence
            if let answer {
                let body = ByteBuffer(bytes: answer.body)
                // The claim stays on the answered row: a retry of this statement (its first run
                // committed, but its answer was lost) finds it and writes the same answer again,
                // so an answer recorded is never counted as one that was not.
                rows = try await client.query(
                    """
                    UPDATE taksi_submits SET status = \(Int(answer.status.code)), headers = \(Self.encodeHeaders(answer.headers)),
                        body = \(body), lease_until = NULL
                    WHERE key = \(key) AND claim = \(token)
                    RETURNING 1
                    """)
            } else {
                // Forgetting is done once the key is not claimed with this token, whoever deleted it.
                _ = try await client.query("DELETE FROM taksi_submits WHERE key = \(key) AND claim = \(token) AND status IS NULL")
                return true
            }
            var found = false
            for try await _ in rows { found = true }
            return found
        }
    }
}
