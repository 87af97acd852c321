package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.TransactionalLockBackend.Result;
import dev.pubsubworker.core.TransactionalLockBackend.TransactionOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * On PostgreSQL the server enforces the store's statement timeout: each of the store's statements
 * carries {@code statement_timeout} for its own transaction only. A statement stuck behind a row
 * lock is cancelled by the server (SQLState {@code 57014} with the server's "statement timeout"
 * reason, where a driver's cancel reads "user request"), no client timer is armed, the connection
 * survives, and the pooled session keeps the setting it had (here {@code 42s}, from the pool's init
 * SQL), also for a transactional-mode work.
 */
class PostgresServerStatementTimeoutTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);

  /** Generous: the verbs must return, how fast is not asserted. */
  private static final Duration RETURNS_WITHIN = Duration.ofSeconds(30);

  /** What the pool's sessions have of their own; the store's is 1 s. */
  private static final String SESSION_TIMEOUT = "42s";

  private final ExecutorService caller = Executors.newCachedThreadPool();
  private Databases.Target target;
  private HikariDataSource pool;
  private CountingDataSource counting;
  private String table;
  private SqlLockBackend backend;

  @BeforeEach
  void open() {
    target = Databases.postgres();
    // One connection: every verb and every check below runs on the same session.
    pool =
        target.newPool(
            "server-statement-timeout", 1, "SET statement_timeout = '" + SESSION_TIMEOUT + "'");
    counting = new CountingDataSource(pool);
    table = Databases.uniqueName("server_timeout");
    backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .createTableIfMissing(true)
                .statementTimeout(Duration.ofSeconds(1))
                .socketTimeout(Duration.ofSeconds(2))
                .dataSource(counting.dataSource())
                .build());
    counting.reset();
  }

  @AfterEach
  void close() throws SQLException {
    caller.shutdownNow();
    if (pool != null) {
      pool.close();
    }
    if (table != null) {
      target.dropTable(table);
    }
  }

  @Test
  @DisplayName(
      "a claim behind another transaction's row lock is cancelled by the server, the connection kept")
  void a_claim_behind_a_row_lock_is_cancelled_by_the_server() throws SQLException {
    int sessionBefore = backendPid();
    String key = "locked-" + UUID.randomUUID();
    ClaimRequest request = ClaimRequest.of(key, LEASE, token());
    try (Connection locker = target.shared().getConnection()) {
      locker.setAutoCommit(false);
      try (PreparedStatement ps =
          locker.prepareStatement(
              "INSERT INTO "
                  + table
                  + " (lock_key, state, fence, lease_expiry, expires_at)"
                  + " VALUES (?, 'CLAIMED', 1, 0, 0)")) {
        ps.setString(1, key);
        ps.executeUpdate();
      }
      CompletableFuture<ClaimResult> waiting =
          CompletableFuture.supplyAsync(() -> backend.claim(request), caller);
      await().atMost(RETURNS_WITHIN).until(waiting::isDone);
      assertThatThrownBy(waiting::join)
          .cause()
          .isInstanceOf(LockBackendException.class)
          .hasMessage("claim failed on SQL table '" + table + "' (POSTGRESQL) (SQLState 57014)")
          .cause()
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("canceling statement due to statement timeout");
      locker.rollback();
    }
    assertThat(counting.queryTimeouts()).as("no client-side timer").containsOnly(0);
    assertThat(backend.claim(request)).isInstanceOf(ClaimResult.Won.class);
    assertThat(backendPid())
        .as("the cancelled statement's session is still in use")
        .isEqualTo(sessionBefore);
    assertThat(sessionStatementTimeout()).isEqualTo(SESSION_TIMEOUT);
  }

  @Test
  @DisplayName("the verbs leave the pooled session's own statement_timeout as it was")
  void the_verbs_leave_the_session_setting_alone() throws SQLException {
    String key = "plain-" + UUID.randomUUID();
    Claim claim = won(backend.claim(ClaimRequest.of(key, LEASE, token())));
    assertThat(backend.extend(claim, LEASE)).isTrue();
    assertThat(backend.complete(claim, TTL)).isTrue();
    assertThat(backend.claim(ClaimRequest.of(key, LEASE, token())))
        .isInstanceOf(ClaimResult.AlreadyDone.class);
    assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.DONE);
    assertThat(backend.forget(key)).isTrue();
    assertThat(counting.statements()).as("the verbs reached the database").isPositive();
    assertThat(counting.queryTimeouts()).as("no client-side timer").containsOnly(0);

    assertThat(sessionStatementTimeout()).isEqualTo(SESSION_TIMEOUT);
  }

  @Test
  @DisplayName(
      "a transactional-mode work runs under the session's statement_timeout, not the store's")
  void a_transactional_work_keeps_the_session_setting() throws Exception {
    String key = "tx-" + UUID.randomUUID();
    Claim claim = won(backend.claim(ClaimRequest.of(key, LEASE, token())));

    Result<String> result =
        backend.runAndComplete(
            claim,
            TTL,
            resource -> {
              try (Statement s = ((Connection) resource).createStatement()) {
                // Longer than the store's 1 s: bounded by the session's 42 s only.
                s.execute("SELECT pg_sleep(1.2)");
                try (ResultSet rs = s.executeQuery("SHOW statement_timeout")) {
                  rs.next();
                  return rs.getString(1);
                }
              }
            });

    assertThat(result.outcome()).isEqualTo(TransactionOutcome.COMMITTED);
    assertThat(result.value()).isEqualTo(SESSION_TIMEOUT);
    assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.DONE);
    assertThat(sessionStatementTimeout()).isEqualTo(SESSION_TIMEOUT);
  }

  /** The pooled session's statement_timeout, read on the pool's one connection. */
  private String sessionStatementTimeout() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW statement_timeout")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private int backendPid() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static Claim won(ClaimResult result) {
    assertThat(result).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) result).claim();
  }

  private static String token() {
    return UUID.randomUUID().toString();
  }
}
