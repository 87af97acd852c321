package dev.pubsubworker.backend.sql;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
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
    // Matched no row: a second statement tells a stale claim from an unreadable row.
    m.put(Case.RELEASE_STALE, 2);
    m.put(Case.EXTEND_STALE, 2);
    return m;
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
