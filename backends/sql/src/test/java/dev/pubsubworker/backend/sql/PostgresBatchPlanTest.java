package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL caches a statement's plan per connection, and a generic plan made while the lock table
 * was still empty (a fresh deployment, a benchmark) stays until the table is analysed again. The
 * batch verbs must find their rows through the key's index whatever that plan saw: a sequential
 * scan per batch costs a read of the whole table, and grows with it. This test caches the batch
 * statements' generic plans on an empty table, fills the table with autovacuum off (so nothing
 * re-plans them), and counts the server's sequential scans of the table while batches run.
 */
class PostgresBatchPlanTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);

  private HikariDataSource pool;
  private SqlLockBackend backend;
  private String table;
  private int keys;

  @BeforeEach
  void open() {
    // prepareThreshold=1: server-side prepared from the first use, so plans are cached at once;
    // force_generic_plan: the plan the server would settle on after five executions.
    pool =
        Databases.postgres()
            .withUrlParameter("prepareThreshold=1")
            .newPool("plans", 1, "SET plan_cache_mode = force_generic_plan");
    table = Databases.uniqueName("plans");
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
  @DisplayName("batch claims and completes use the key index with plans cached on an empty table")
  void batches_never_scan_the_whole_table() throws SQLException {
    assumeTrue(
        Databases.serverVersionNum(pool) >= 150000,
        "needs PostgreSQL 15+ (pg_stat_force_next_flush) to read the scan counts");
    Databases.execute(pool, "ALTER TABLE " + table + " SET (autovacuum_enabled = false)");
    // Every batch size used below is planned (and cached) on the empty table first.
    for (int i = 0; i < 3; i++) {
      claimAndComplete(4);
      claimAndComplete(8);
    }
    Databases.execute(
        pool,
        "INSERT INTO "
            + table
            + " (lock_key, state, fence, lease_expiry, expires_at)"
            + " SELECT 'filler-' || i, 'DONE', 1, 0, 9000000000000 FROM generate_series(1, 20000) i");
    long before = sequentialScans();
    for (int i = 0; i < 10; i++) {
      List<ClaimRequest> fresh = claimAndComplete(8);
      // The same keys again: every entry is refused as DONE (the read path of the batch claim).
      assertThat(backend.claimAll(fresh))
          .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.AlreadyDone.class));
    }
    assertThat(sequentialScans() - before).as("sequential scans of the lock table").isZero();
  }

  private List<ClaimRequest> claimAndComplete(int n) {
    List<ClaimRequest> requests = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      requests.add(
          new ClaimRequest("plan-" + (keys++), LEASE, TTL, UUID.randomUUID().toString(), null));
    }
    List<CompleteRequest> completes = new ArrayList<>();
    for (BatchResult<ClaimResult> r : backend.claimAll(requests)) {
      completes.add(new CompleteRequest(((ClaimResult.Won) r.get()).claim(), TTL));
    }
    assertThat(backend.completeAll(completes)).allSatisfy(r -> assertThat(r.get()).isTrue());
    return requests;
  }

  /** The table's sequential scans so far, this session's included (one pooled connection). */
  private long sequentialScans() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute("SELECT pg_stat_force_next_flush()");
      return Databases.sequentialScans(c, table);
    }
  }
}
