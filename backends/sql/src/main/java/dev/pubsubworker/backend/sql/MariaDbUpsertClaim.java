package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * MariaDB (10.5 and later): one upsert ({@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING})
 * that returns the row as it now stands; this claim's token on a CLAIMED row means it won.
 */
final class MariaDbUpsertClaim implements ClaimStrategy {

  private static final String CLAIMED = LockState.CLAIMED.name();

  private final LockTable table;

  MariaDbUpsertClaim(LockTable table) {
    this.table = table;
  }

  @Override
  public ClaimResult claim(Connection c, ClaimRequest r) throws SQLException {
    try (PreparedStatement ps =
            table.prepare(c, table.sql().claim, ClaimStrategy.claimParams(table, r));
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("INSERT ... RETURNING returned no row");
      }
      String state = rs.getString("state");
      long fence = rs.getLong("fence");
      long leaseExpiry = rs.getLong("lease_expiry");
      String fingerprint = rs.getString("fingerprint");
      if (CLAIMED.equals(state) && r.claimToken().equals(rs.getString("claim_token"))) {
        return ClaimStrategy.won(r, fence, leaseExpiry);
      }
      if (CLAIMED.equals(state)) {
        return new ClaimResult.HeldByOther(Instant.ofEpochMilli(leaseExpiry), fingerprint);
      }
      return new ClaimResult.AlreadyDone(fingerprint);
    }
  }
}
