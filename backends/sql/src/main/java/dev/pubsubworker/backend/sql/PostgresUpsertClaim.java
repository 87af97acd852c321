package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL: the upsert wins, or the same statement returns the row as its snapshot saw it. No row
 * at all means a concurrent claim inserted the key after the snapshot was taken; a reclaimable
 * snapshot row that the upsert did not take means a concurrent claim took it first. Both are asked
 * again.
 */
final class PostgresUpsertClaim implements ClaimStrategy {

  private static final Logger log = LoggerFactory.getLogger(PostgresUpsertClaim.class);

  private final LockTable table;

  PostgresUpsertClaim(LockTable table) {
    this.table = table;
  }

  @Override
  public ClaimResult claim(Connection c, ClaimRequest r) throws SQLException {
    for (int round = 0; round < MAX_RACE_ROUNDS; round++) {
      try (PreparedStatement ps =
              table.prepare(c, table.sql().claim, ClaimStrategy.claimParams(table, r));
          ResultSet rs = table.query(ps)) {
        if (!rs.next()) {
          log.debug(
              "claim on {}: the key was inserted concurrently; asking again", table.namespace());
          continue;
        }
        if (rs.getBoolean("won")) {
          return ClaimStrategy.won(r, rs.getLong("fence"), rs.getLong("lease_expiry"));
        }
        // The snapshot row, read strictly: an unreadable one is the answer (the upsert left it).
        LockRecord row = StoredRow.read(rs, r.key(), Instant.EPOCH, table, "claim");
        ClaimResult answer = ClaimStrategy.contended(row, rs.getLong("now_ms"));
        if (answer != null) {
          return answer;
        }
        log.debug(
            "claim on {}: a concurrent claim took the key first; asking again", table.namespace());
      }
    }
    throw ClaimStrategy.raceLost(table);
  }
}
