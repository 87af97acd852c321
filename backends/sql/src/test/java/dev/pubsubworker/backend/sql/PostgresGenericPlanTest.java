package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The backend's statements run the plan the server prepared for them, not one made anew per call,
 * under the server's default {@code plan_cache_mode} ({@code auto}), which plans a prepared
 * statement anew for its first five executions and then whenever the generic plan looks dearer than
 * the custom ones (as it may over the batch verbs' arrays): here 6 custom plans of the 40 batch
 * claims, end to end 15 % of the server's CPU per message. The counts come from {@code
 * pg_prepared_statements} of the one pooled session the backend used; the setting must also be gone
 * from that session after each verb.
 */
class PostgresGenericPlanTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);
  private static final int BATCHES = 20;

  private HikariDataSource pool;
  private SqlLockBackend backend;
  private String table;
  private int keys;

  @BeforeEach
  void open() {
    // prepareThreshold=1: server-side prepared from the first use, so every execution is counted.
    pool = Databases.postgres().withUrlParameter("prepareThreshold=1").newPool("generic", 1, null);
    table = Databases.uniqueName("generic_plans");
    backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .dataSource(pool)
                .createTableIfMissing(true)
                .build());
  }

  @AfterEach
  void close() throws SQLException {
    if (pool != null) {
      Databases.execute(pool, "DROP TABLE IF EXISTS " + table);
      pool.close();
    }
  }

  @Test
  void batch_claims_run_their_prepared_generic_plan_and_leave_the_session_mode_alone()
      throws SQLException {
    assumeTrue(
        Databases.serverVersionNum(pool) >= 140000,
        "needs PostgreSQL 14+ (pg_prepared_statements counts plans by kind)");
    for (int i = 0; i < BATCHES; i++) {
      List<ClaimRequest> fresh = new ArrayList<>();
      for (int k = 0; k < 1 + i % 5; k++) {
        fresh.add(
            new ClaimRequest("g-" + (keys++), LEASE, TTL, UUID.randomUUID().toString(), null));
      }
      List<CompleteRequest> completes = new ArrayList<>();
      for (BatchResult<ClaimResult> r : backend.claimAll(fresh)) {
        completes.add(new CompleteRequest(((ClaimResult.Won) r.get()).claim(), TTL));
      }
      assertThat(backend.completeAll(completes)).allSatisfy(r -> assertThat(r.get()).isTrue());
      // The same keys again: every entry is DONE (the batch claim's read path).
      assertThat(backend.claimAll(fresh))
          .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.AlreadyDone.class));
    }
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      long generic = 0;
      try (ResultSet rs =
          st.executeQuery(
              "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
                  + " WHERE statement LIKE '%unnest(%'")) {
        int statements = 0;
        while (rs.next()) {
          statements++;
          assertThat(rs.getLong("custom_plans")).as(rs.getString("statement")).isZero();
          generic += rs.getLong("generic_plans");
        }
        assertThat(statements).as("batch statements prepared on the session").isPositive();
      }
      // Two batch claims per round (fresh, then DONE), each one execution of an array statement.
      assertThat(generic).isGreaterThanOrEqualTo(2L * BATCHES);
      try (ResultSet rs = st.executeQuery("SHOW plan_cache_mode")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("auto");
      }
    }
  }
}
