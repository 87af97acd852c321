package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.ClaimResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

class PostgresBehaviourTest extends SqlBackendBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.postgres();
  }

  @Override
  SqlDialect detectedDialect() {
    return SqlDialect.POSTGRESQL;
  }

  @Override
  Map<Case, Integer> documentedStatements() {
    Map<Case, Integer> m = new EnumMap<>(Case.class);
    for (Case c : Case.values()) {
      m.put(c, 1);
    }
    // The key exists: the plain insert wrote nothing, then the upsert decides.
    m.put(Case.CLAIM_HELD, 2);
    m.put(Case.CLAIM_DONE, 2);
    m.put(Case.CLAIM_RECLAIM, 2);
    m.put(Case.CLAIM_RETRY_SAME_TOKEN, 2);
    // Matched no row: a second statement tells a stale claim from an unreadable row.
    m.put(Case.COMPLETE_STALE, 2);
    m.put(Case.RELEASE_STALE, 2);
    m.put(Case.EXTEND_STALE, 2);
    return m;
  }

  @Test
  @DisplayName(
      "while most claims find their key existing, the upsert goes first; one claim in 16 tries the"
          + " insert again, and fresh keys bring the insert back")
  void claims_of_existing_keys_skip_the_plain_insert() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockBackend counted =
        SqlLockBackend.create(
            fixture.settings().toBuilder()
                .dialect(SqlDialect.POSTGRESQL)
                .createTableIfMissing(false)
                .dataSource(counting.dataSource())
                .build());
    String done = newKey("storm");
    assertThat(backend.complete(claimWon(backend, done), TTL)).isTrue();
    // A redelivery storm: every claim finds the key DONE.
    List<Integer> statements = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      counting.reset();
      assertThat(counted.claim(done, LEASE, token())).isInstanceOf(ClaimResult.AlreadyDone.class);
      statements.add(counting.statements());
    }
    // Insert first (2 statements) until a quarter of recent inserts found the key, then mostly 1.
    assertThat(statements.subList(0, 5)).containsOnly(2);
    assertThat(statements.subList(20, 40)).contains(1, 2);
    assertThat(statements.subList(20, 40).stream().filter(n -> n == 1).count())
        .isGreaterThanOrEqualTo(18);
    // A claim on a fresh key still wins while the insert is skipped (the upsert inserts), and
    // fresh keys, seen by the probes, bring the insert back.
    for (int i = 0; i < 400; i++) {
      assertThat(counted.claim(newKey("fresh-" + i), LEASE, token()))
          .isInstanceOf(ClaimResult.Won.class);
    }
    counting.reset();
    assertThat(counted.claim(newKey("fresh-last"), LEASE, token()))
        .isInstanceOf(ClaimResult.Won.class);
    assertThat(counting.statements()).isEqualTo(1);
    counting.reset();
    assertThat(counted.claim(done, LEASE, token())).isInstanceOf(ClaimResult.AlreadyDone.class);
    assertThat(counting.statements()).isEqualTo(2);
  }

  @Override
  void killSession(Connection connection) throws SQLException {
    int pid = connection.unwrap(PGConnection.class).getBackendPID();
    try (Connection admin = fixture.target().shared().getConnection()) {
      try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        ps.executeQuery().close();
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                try (PreparedStatement ps =
                    admin.prepareStatement("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?")) {
                  ps.setInt(1, pid);
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1) == 0;
                  }
                }
              });
    }
  }

  @Override
  String unreachableJdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:1/test";
  }

  @Override
  String shortLockTimeoutSql() {
    return "SET lock_timeout = '200ms'";
  }
}
