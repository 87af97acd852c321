package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL: one round trip per batch for either verb (a statement; a JDBC batch), in auto-commit.
 */
class PostgresBatchBehaviourTest extends SqlBatchBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.postgres();
  }

  @Override
  int claimStatements(int n) {
    return 1;
  }

  @Override
  boolean claimInTransaction() {
    return false;
  }

  @Test
  @DisplayName("the server sees one transaction per batch: every row it wrote has the same xmin")
  void one_server_transaction_per_batch() throws SQLException {
    List<ClaimRequest> requests = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      String key = newKey("xmin");
      keys.add(key);
      requests.add(request(key));
    }
    List<Claim> claims = backend.claimAll(requests).stream().map(SqlBatchBehaviour::won).toList();
    assertThat(writingTransactions(keys)).isEqualTo(1);
    backend.completeAll(claims.stream().map(c -> new CompleteRequest(c, TTL)).toList());
    assertThat(writingTransactions(keys)).isEqualTo(1);
  }

  /** How many transactions wrote the current versions of these keys' rows. */
  private long writingTransactions(List<String> keys) throws SQLException {
    try (Connection c = fixture.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(DISTINCT xmin::text) FROM "
                    + fixture.table()
                    + " WHERE lock_key = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("text", keys.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
