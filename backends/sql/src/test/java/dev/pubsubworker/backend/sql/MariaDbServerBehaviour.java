package dev.pubsubworker.backend.sql;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/** What the MariaDB server needs of a behaviour test, whichever dialect speaks to it. */
abstract class MariaDbServerBehaviour extends SqlBackendBehaviour {

  @Override
  SqlDialect detectedDialect() {
    return SqlDialect.MARIADB;
  }

  @Override
  void killSession(Connection connection) throws SQLException {
    long id;
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT CONNECTION_ID()")) {
      rs.next();
      id = rs.getLong(1);
    }
    try (Connection admin = fixture.target().shared().getConnection()) {
      try (Statement st = admin.createStatement()) {
        st.execute("KILL CONNECTION " + id);
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                try (PreparedStatement ps =
                    admin.prepareStatement(
                        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?")) {
                  ps.setLong(1, id);
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
    return "jdbc:mariadb://127.0.0.1:1/test";
  }

  @Override
  String shortLockTimeoutSql() {
    return "SET SESSION innodb_lock_wait_timeout = 1";
  }
}
