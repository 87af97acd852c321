package dev.pubsubworker.backend.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;

class H2BehaviourTest extends SqlBackendBehaviour {

  /** MySQL and H2: a claim that writes reads first; a fence mismatch costs a second statement. */
  static Map<Case, Integer> compareAndSetStatements() {
    Map<Case, Integer> m = new EnumMap<>(Case.class);
    for (Case c : Case.values()) {
      m.put(c, 1);
    }
    m.put(Case.CLAIM_ABSENT, 2);
    m.put(Case.CLAIM_RECLAIM, 2);
    m.put(Case.CLAIM_RETRY_SAME_TOKEN, 2);
    m.put(Case.COMPLETE_STALE, 2);
    m.put(Case.RELEASE_STALE, 2);
    m.put(Case.EXTEND_STALE, 2);
    return m;
  }

  @Override
  SqlFixture createFixture() {
    return SqlFixture.h2();
  }

  @Override
  SqlDialect detectedDialect() {
    return SqlDialect.H2;
  }

  @Override
  Map<Case, Integer> documentedStatements() {
    return compareAndSetStatements();
  }

  @Override
  void killSession(Connection connection) throws SQLException {
    int id;
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT SESSION_ID()")) {
      rs.next();
      id = rs.getInt(1);
    }
    try (Connection admin = fixture.dataSource().getConnection();
        PreparedStatement ps = admin.prepareStatement("SELECT ABORT_SESSION(?)")) {
      ps.setInt(1, id);
      ps.executeQuery().close();
    }
  }

  @Override
  String unreachableJdbcUrl() {
    return "jdbc:h2:tcp://127.0.0.1:1/mem:unreachable";
  }

  @Override
  String shortLockTimeoutSql() {
    return "SET LOCK_TIMEOUT 200";
  }
}
