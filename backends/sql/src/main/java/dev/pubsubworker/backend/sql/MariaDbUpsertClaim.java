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

/**
 * MariaDB (10.5 and later): one upsert ({@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING})
 * that returns the row as it now stands; this claim's token on a CLAIMED row means it won. The row
 * is read strictly: an unreadable one is reported, never answered for.
 */
final class MariaDbUpsertClaim implements ClaimStrategy {

  private final LockTable table;

  MariaDbUpsertClaim(LockTable table) {
    this.table = table;
  }

  @Override
  public ClaimResult claim(Connection c, ClaimRequest r) throws SQLException {
    try (PreparedStatement ps =
            table.prepare(c, table.sql().claim, ClaimStrategy.claimParams(table, r));
        ResultSet rs = table.query(ps)) {
      if (!rs.next()) {
        throw new SQLException("INSERT ... RETURNING returned no row");
      }
      // The row as it now stands: this claim's own if it won, else untouched (an unreadable row
      // included, which never wins).
      LockRecord row = StoredRow.read(rs, r.key(), Instant.EPOCH, table, "claim");
      if (row.state() == LockState.CLAIMED && r.claimToken().equals(row.claimToken())) {
        return ClaimStrategy.won(r, row.fence(), row.leaseExpiry().toEpochMilli());
      }
      return ClaimStrategy.refused(row);
    }
  }
}
