package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MySQL and H2: read the row and the clock, decide, then insert (the unique key lets only one of
 * several claimers that all saw it absent succeed) or overwrite the row only if it is still exactly
 * as read. Losing either race means another claim changed the row: read again.
 */
final class CompareAndSetClaim implements ClaimStrategy {

  private static final Logger log = LoggerFactory.getLogger(CompareAndSetClaim.class);

  private final LockTable table;

  CompareAndSetClaim(LockTable table) {
    this.table = table;
  }

  @Override
  public ClaimResult claim(Connection c, ClaimRequest r) throws SQLException {
    SqlStatements sql = table.sql();
    long leaseMillis = r.lease().toMillis();
    long ttlMillis = r.ttl().toMillis();
    for (int round = 0; round < MAX_RACE_ROUNDS; round++) {
      long now;
      LockRecord row;
      try (PreparedStatement ps = table.prepare(c, sql.claimRead, table.params(r.key()));
          ResultSet rs = table.query(ps)) {
        if (!rs.next()) {
          throw new SQLException("the clock query returned no row");
        }
        now = rs.getLong("now_ms");
        // Read strictly: an unreadable row is reported and never written over.
        row =
            rs.getBoolean("found")
                ? StoredRow.read(rs, r.key(), Instant.ofEpochMilli(now), table, "claim")
                : null;
      }
      long newLease = now + leaseMillis;
      long newExpires = newLease + ttlMillis;
      if (row == null) {
        try {
          table.update(
              c,
              sql.claimInsert,
              table
                  .params(r.key())
                  .set("lease_expiry", newLease)
                  .set("expires_at", newExpires)
                  .set("token", r.claimToken())
                  .set("fingerprint", r.fingerprint()));
          return ClaimStrategy.won(r, 1, newLease);
        } catch (SQLException e) {
          if (SqlErrors.isDuplicateKey(e)) {
            // Both saw the key absent and the other claim inserted first.
            log.debug(
                "claim on {}: the key was inserted concurrently; asking again", table.namespace());
            continue;
          }
          throw e;
        }
      }
      String state = row.state().name();
      long fence = row.fence();
      long leaseExpiry = row.leaseExpiry().toEpochMilli();
      long expiresAt = row.expiresAt().toEpochMilli();
      long newFence;
      if (row.state() == LockState.CLAIMED
          && r.claimToken().equals(row.claimToken())
          && now < expiresAt) {
        newFence = fence; // The caller's own claim, retried: same fence, lease renewed.
        if (leaseExpiry == newLease
            && expiresAt == newExpires
            && Objects.equals(row.fingerprint(), r.fingerprint())) {
          // Already exactly so; an UPDATE would change nothing.
          return ClaimStrategy.won(r, fence, newLease);
        }
      } else {
        ClaimResult answer = ClaimStrategy.contended(row, now);
        if (answer != null) {
          return answer;
        }
        newFence = ClaimStrategy.nextFence(fence);
      }
      int updated =
          table.update(
              c,
              sql.claimUpdate,
              table
                  .params(r.key())
                  .set("new_fence", newFence)
                  .set("lease_expiry", newLease)
                  .set("expires_at", newExpires)
                  .set("token", r.claimToken())
                  .set("fingerprint", r.fingerprint())
                  .set("old_state", state)
                  .set("old_fence", fence)
                  .set("old_lease_expiry", leaseExpiry)
                  .set("old_expires_at", expiresAt));
      if (updated > 0) {
        return ClaimStrategy.won(r, newFence, newLease);
      }
      log.debug(
          "claim on {}: the record changed since it was read; asking again", table.namespace());
    }
    throw ClaimStrategy.raceLost(table);
  }
}
