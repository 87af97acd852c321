package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A plan PostgreSQL cached while the table was empty keeps serving the verbs by primary key once
 * the table is large. The session prepares every statement on the server from its first use and
 * always runs the generic plan (as it does after five calls of a statement on an unanalysed table);
 * the verbs run on the empty table, then on 20,000 rows nobody analysed. Before the fix, a
 * complete's cached plan read the {@code expires_at} index over its whole range, every row of the
 * table, on every call (the strict-read range test was served by that index); the index's own
 * statistics show what each plan read.
 */
class PostgresPlanStabilityTest {

  private static final int ROWS = 20_000;
  private static final int CYCLES = 50;

  private Databases.Target target;
  private HikariDataSource pool;
  private String table;
  private SqlLockBackend backend;

  @BeforeEach
  void open() {
    target = Databases.postgres().withUrlParameter("prepareThreshold=1");
    pool = target.newPool("plan-stability", 1, "SET plan_cache_mode = force_generic_plan");
    table = Databases.uniqueName("plan_stability");
    backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .createTableIfMissing(true)
                .dataSource(pool)
                .build());
  }

  @AfterEach
  void close() throws SQLException {
    if (pool != null) {
      pool.close();
    }
    if (table != null) {
      target.dropTable(table);
    }
  }

  private void cycles(String prefix, int n) {
    for (int i = 0; i < n; i++) {
      ClaimResult r =
          backend.claim(ClaimRequest.of(prefix + i, Duration.ofSeconds(30), "token-" + i));
      assertThat(r).isInstanceOf(ClaimResult.Won.class);
      assertThat(backend.complete(((ClaimResult.Won) r).claim(), Duration.ofMinutes(10))).isTrue();
      // A duplicate, and a complete that finds its claim gone: the other statements a verb runs.
      assertThat(backend.claim(ClaimRequest.of(prefix + i, Duration.ofSeconds(30), "other")))
          .isInstanceOf(ClaimResult.AlreadyDone.class);
    }
  }

  private long expiresIndexTuplesRead(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelname = ?")) {
      ps.setString(1, table + "_expires_idx");
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("index " + table + "_expires_idx").isTrue();
        return rs.getLong(1);
      }
    }
  }

  /** The store's session (the pool's one connection) reports its statistics now. */
  private void flushStoreStatistics() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SELECT pg_stat_force_next_flush()");
      s.execute("SELECT 1");
    }
  }

  /** The table's sequential scans so far, as the statistics last reported them. */
  private long sequentialScans() throws SQLException {
    try (Connection c = target.shared().getConnection()) {
      return Databases.sequentialScans(c, table);
    }
  }

  private long primaryKeyScans(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COALESCE(SUM(idx_scan), 0) FROM pg_stat_user_indexes"
                + " WHERE relname = ? AND indexrelname <> ?")) {
      ps.setString(1, table);
      ps.setString(2, table + "_expires_idx");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Test
  void plans_cached_on_an_empty_table_still_look_keys_up_by_primary_key_when_it_is_large()
      throws SQLException {
    cycles("early-", 10); // every statement prepared and its plan cached on the empty table
    try (Connection c = target.shared().getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO "
              + table
              + " (lock_key, state, fence, lease_expiry, expires_at)"
              + " SELECT 'filler-' || g, 'DONE', 1, 0, 4102444800000 + g"
              + " FROM generate_series(1, "
              + ROWS
              + ") g");
    }
    flushStoreStatistics(); // what the set-up and the early cycles did is counted before
    long scansBefore = sequentialScans();
    cycles("late-", CYCLES);
    flushStoreStatistics();
    try (Connection c = target.shared().getConnection();
        Statement s = c.createStatement()) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                s.execute("SELECT pg_stat_clear_snapshot()");
                return primaryKeyScans(c) >= 3L * CYCLES;
              });
      // A key lookup reads at most a row or two; a range scan would read ROWS per call.
      assertThat(expiresIndexTuplesRead(c)).isLessThan(ROWS);
      assertThat(sequentialScans() - scansBefore).as("sequential scans of the lock table").isZero();
    }
  }
}
