package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.TransactionalLockBackend;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the SQL backend promises beyond the shared contract, on one dialect: statements per verb,
 * transactional mode, outages, transient errors, hostile keys, the both-absent race and the DDL. A
 * dialect's test extends this class and supplies the fixture and the dialect's particulars.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SqlBackendBehaviour {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(1);

  /** The verb and path whose statements are counted. */
  enum Case {
    CLAIM_ABSENT,
    CLAIM_HELD,
    CLAIM_DONE,
    CLAIM_RECLAIM,
    CLAIM_RETRY_SAME_TOKEN,
    COMPLETE,
    COMPLETE_STALE,
    RELEASE,
    RELEASE_STALE,
    EXTEND,
    EXTEND_STALE,
    INSPECT,
    FORGET,
    PURGE
  }

  private final AtomicInteger keys = new AtomicInteger();
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  SqlFixture fixture;
  SqlLockBackend backend;
  String handlerTable;

  /** The fixture (table, clock) of this class. */
  abstract SqlFixture createFixture();

  /** The dialect detection must find on this database. */
  abstract SqlDialect detectedDialect();

  /** Statements per verb and path, as documented in the module README. */
  abstract Map<Case, Integer> documentedStatements();

  /**
   * Kills the database session behind {@code connection} from another connection, as a crash or an
   * operator would, and returns once it is gone.
   */
  abstract void killSession(Connection connection) throws SQLException;

  /** A JDBC URL for this product on which nobody listens. */
  abstract String unreachableJdbcUrl();

  /** A statement that makes a session's lock waits time out after at most a second. */
  abstract String shortLockTimeoutSql();

  @BeforeAll
  void open() throws SQLException {
    fixture = createFixture();
    backend = fixture.backend();
    handlerTable = Databases.uniqueName("handler");
    Databases.execute(
        fixture.dataSource(),
        "CREATE TABLE "
            + handlerTable
            + " (id VARCHAR(200) NOT NULL PRIMARY KEY, fence BIGINT NOT NULL)");
  }

  @AfterAll
  void close() throws SQLException {
    if (fixture != null) {
      Databases.execute(fixture.dataSource(), "DROP TABLE " + handlerTable);
      fixture.close();
    }
  }

  String newKey(String name) {
    return "behaviour-" + run + "-" + name + "-" + keys.incrementAndGet();
  }

  static String token() {
    return UUID.randomUUID().toString();
  }

  Claim claimWon(LockBackend b, String key) {
    ClaimResult r = b.claim(new ClaimRequest(key, LEASE, TTL, token(), null));
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }

  // ---------------------------------------------------------------------------------------------
  // Dialect, DDL
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("the dialect is detected from the connection's metadata")
  void dialect_is_detected_from_metadata() {
    SqlLockBackend detected =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(fixture.table())
                .dataSource(fixture.dataSource())
                .build());
    assertThat(detected.dialect()).isEqualTo(detectedDialect());
  }

  @Test
  @DisplayName("the DDL file runs as it is, has the purge index, and auto-create is idempotent")
  void ddl_file_runs_as_is_and_has_the_purge_index() throws Exception {
    SqlDialect dialect = backend.dialect();
    String table = Databases.uniqueName("ddl");
    String ddl;
    try (InputStream in =
        getClass().getClassLoader().getResourceAsStream(dialect.schemaResource())) {
      assertThat(in).as(dialect.schemaResource()).isNotNull();
      ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    // What a user does with psql/mysql: drop the comment lines, run each statement.
    StringBuilder code = new StringBuilder();
    for (String line : ddl.split("\n")) {
      if (!line.strip().startsWith("--")) {
        code.append(line).append('\n');
      }
    }
    try {
      for (String statement : code.toString().split(";")) {
        if (!statement.isBlank()) {
          Databases.execute(fixture.dataSource(), statement.replace("pubsub_worker_locks", table));
        }
      }
      try (Connection c = fixture.dataSource().getConnection()) {
        DatabaseMetaData md = c.getMetaData();
        String name = md.storesUpperCaseIdentifiers() ? table.toUpperCase(Locale.ROOT) : table;
        List<String> indexed = new ArrayList<>();
        try (ResultSet rs = md.getIndexInfo(null, null, name, false, false)) {
          while (rs.next()) {
            indexed.add(String.valueOf(rs.getString("COLUMN_NAME")).toLowerCase(Locale.ROOT));
          }
        }
        assertThat(indexed).contains("expires_at", "lock_key");
      }
      SqlLockSettings settings =
          SqlLockSettings.newBuilder()
              .dataSource(fixture.dataSource())
              .table(table)
              .dialect(dialect)
              .createTableIfMissing(true)
              .build();
      SqlLockBackend.create(settings);
      SqlLockBackend again = SqlLockBackend.create(settings);
      Claim c = claimWon(again, "ddl-key");
      assertThat(again.complete(c, TTL)).isTrue();
      assertThat(again.inspect("ddl-key").orElseThrow().state()).isEqualTo(LockState.DONE);
    } finally {
      Databases.execute(fixture.dataSource(), "DROP TABLE " + table);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Statements per verb
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("each verb costs the documented number of statements, on one connection")
  void statements_per_verb_are_as_documented() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockBackend counted =
        SqlLockBackend.create(
            fixture.settings().toBuilder()
                .dialect(backend.dialect())
                .createTableIfMissing(false)
                .dataSource(counting.dataSource())
                .build());
    Map<Case, Integer> measured = new EnumMap<>(Case.class);
    for (Case c : Case.values()) {
      String key = newKey("count-" + c);
      Runnable verb = prepare(c, key, counted);
      counting.reset();
      verb.run();
      assertThat(counting.connections()).as("connections borrowed by %s", c).isEqualTo(1);
      assertThat(counting.commits() + counting.rollbacks() + counting.autoCommitSwitches())
          .as("transaction control in %s", c)
          .isZero();
      measured.put(c, counting.statements());
    }
    assertThat(measured).isEqualTo(documentedStatements());

    // Transactional mode: the work's statements, one UPDATE, one commit, auto-commit off and on.
    String key = newKey("count-tx");
    Claim claim = claimWon(backend, key);
    counting.reset();
    try {
      TransactionalLockBackend.Result<Integer> r =
          counted.runAndComplete(
              claim, TTL, resource -> insertHandlerRow((Connection) resource, key, claim.fence()));
      assertThat(r.outcome()).isEqualTo(TransactionalLockBackend.TransactionOutcome.COMMITTED);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertThat(counting.statements()).as("work + DONE").isEqualTo(2);
    assertThat(counting.commits()).isEqualTo(1);
    assertThat(counting.rollbacks()).isZero();
    assertThat(counting.autoCommitSwitches()).isEqualTo(2);
    assertThat(counting.connections()).isEqualTo(1);
  }

  /** Sets up the record for {@code c} with the uncounted backend; returns the counted verb. */
  private Runnable prepare(Case c, String key, SqlLockBackend counted) {
    return switch (c) {
      case CLAIM_ABSENT -> () -> assertWon(counted.claim(key, LEASE, token()));
      case CLAIM_HELD -> {
        claimWon(backend, key);
        yield () ->
            assertThat(counted.claim(key, LEASE, token()))
                .isInstanceOf(ClaimResult.HeldByOther.class);
      }
      case CLAIM_DONE -> {
        assertThat(backend.complete(claimWon(backend, key), TTL)).isTrue();
        yield () ->
            assertThat(counted.claim(key, LEASE, token()))
                .isInstanceOf(ClaimResult.AlreadyDone.class);
      }
      case CLAIM_RECLAIM -> {
        backend.release(claimWon(backend, key));
        yield () -> assertThat(assertWon(counted.claim(key, LEASE, token())).fence()).isEqualTo(3);
      }
      case CLAIM_RETRY_SAME_TOKEN -> {
        String t = token();
        ClaimRequest request = new ClaimRequest(key, LEASE, TTL, t, null);
        Claim first = assertWon(backend.claim(request));
        // A retry a moment later renews the lease (the same instant would change nothing).
        fixture.advanceClock(Duration.ofSeconds(1));
        yield () -> assertThat(assertWon(counted.claim(request)).fence()).isEqualTo(first.fence());
      }
      case COMPLETE -> {
        Claim claim = claimWon(backend, key);
        yield () -> assertThat(counted.complete(claim, TTL)).isTrue();
      }
      case COMPLETE_STALE -> {
        Claim claim = claimWon(backend, key);
        backend.release(claim);
        yield () -> assertThat(counted.complete(claim, TTL)).isFalse();
      }
      case RELEASE -> {
        Claim claim = claimWon(backend, key);
        yield () -> counted.release(claim);
      }
      case RELEASE_STALE -> {
        Claim claim = claimWon(backend, key);
        backend.release(claim);
        yield () -> counted.release(claim);
      }
      case EXTEND -> {
        Claim claim = claimWon(backend, key);
        yield () -> assertThat(counted.extend(claim, LEASE)).isTrue();
      }
      case EXTEND_STALE -> {
        Claim claim = claimWon(backend, key);
        backend.release(claim);
        yield () -> assertThat(counted.extend(claim, LEASE)).isFalse();
      }
      case INSPECT -> {
        claimWon(backend, key);
        yield () -> assertThat(counted.inspect(key)).isPresent();
      }
      case FORGET -> {
        claimWon(backend, key);
        yield () -> assertThat(counted.forget(key)).isTrue();
      }
      case PURGE -> () -> assertThat(counted.purgeExpired(10)).isNotNegative();
    };
  }

  private static Claim assertWon(ClaimResult r) {
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }

  // ---------------------------------------------------------------------------------------------
  // Transactional mode
  // ---------------------------------------------------------------------------------------------

  IdempotencyGuard guard(LockBackend b, boolean heartbeat) {
    return IdempotencyGuard.newBuilder(b)
        .lease(LEASE)
        .ttl(TTL)
        .heartbeat(heartbeat)
        .claimRetries(0)
        .transactional(true)
        .build();
  }

  @Test
  @DisplayName("transactional: a successful work's row and DONE commit together")
  void transactional_success_commits_the_row_and_done() throws Exception {
    String key = newKey("tx-ok");
    try (IdempotencyGuard guard = guard(backend, true)) {
      LockResult<Integer> r =
          guard.lock(
              key,
              ctx ->
                  insertHandlerRow(
                      ctx.resource(Connection.class).orElseThrow(), key, ctx.fencingToken()));
      assertThat(r).isInstanceOf(LockResult.Executed.class);
      assertThat(((LockResult.Executed<Integer>) r).completion()).isEqualTo(Completion.COMPLETED);
      assertThat(handlerRows(key)).isEqualTo(1);
      assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(guard.lock(key, ctx -> 0)).isInstanceOf(LockResult.Duplicate.class);
    }
  }

  @Test
  @DisplayName("transactional: a throwing work leaves neither row nor DONE, and the key is free")
  void transactional_throwing_work_rolls_back_and_frees_the_key() throws Exception {
    String key = newKey("tx-throws");
    try (IdempotencyGuard guard = guard(backend, true)) {
      assertThatThrownBy(
              () ->
                  guard.lock(
                      key,
                      ctx -> {
                        insertHandlerRow(
                            ctx.resource(Connection.class).orElseThrow(), key, ctx.fencingToken());
                        throw new IllegalStateException("handler failed after its insert");
                      }))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("handler failed after its insert");
      assertThat(handlerRows(key)).isZero();
      LockRecord r = backend.inspect(key).orElseThrow();
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.reclaimable()).isTrue();
      // Reclaimable at once: the retry runs and commits.
      LockResult<Integer> retry =
          guard.lock(
              key,
              ctx ->
                  insertHandlerRow(
                      ctx.resource(Connection.class).orElseThrow(), key, ctx.fencingToken()));
      assertThat(retry.executed()).isTrue();
      assertThat(handlerRows(key)).isEqualTo(1);
    }
  }

  @Test
  @DisplayName(
      "transactional: a crash between the work and the commit leaves neither; claimable after the"
          + " lease")
  void transactional_crash_before_commit_leaves_neither() throws Exception {
    String key = newKey("tx-crash");
    Claim claim = claimWon(backend, key);
    // The process "dies" after its work: the session is killed before DONE and the commit, and
    // nobody releases the claim. (A pool of its own, so the killed session never serves others.)
    try (HikariDataSource pool = fixture.target().newPool("crash", 1, null)) {
      SqlLockBackend dying = ownBackend(pool);
      assertThatThrownBy(
              () ->
                  dying.runAndComplete(
                      claim,
                      TTL,
                      resource -> {
                        Connection c = (Connection) resource;
                        insertHandlerRow(c, key, claim.fence());
                        killSession(c);
                        return "done";
                      }))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("runAndComplete")
          .hasMessageContaining(fixture.table())
          .hasMessageNotContaining(key);
    }
    assertThat(handlerRows(key)).isZero();
    LockRecord r = backend.inspect(key).orElseThrow();
    assertThat(r.state()).isEqualTo(LockState.CLAIMED);
    assertThat(r.fence()).isEqualTo(claim.fence());
    assertThat(backend.claim(key, LEASE, token())).isInstanceOf(ClaimResult.HeldByOther.class);
    fixture.advanceClock(LEASE);
    Claim next = claimWon(backend, key);
    assertThat(next.fence()).isEqualTo(claim.fence() + 1);
    try (IdempotencyGuard guard = guard(backend, true)) {
      backend.release(next);
      LockResult<Integer> again =
          guard.lock(
              key,
              ctx ->
                  insertHandlerRow(
                      ctx.resource(Connection.class).orElseThrow(), key, ctx.fencingToken()));
      assertThat(again.executed()).isTrue();
    }
    assertThat(handlerRows(key)).isEqualTo(1);
  }

  @Test
  @DisplayName("transactional: fenced out at commit, the work's row is rolled back with DONE")
  void transactional_fenced_out_rolls_back() throws Exception {
    String key = newKey("tx-fenced");
    try (IdempotencyGuard guard = guard(backend, false)) {
      LockResult<Integer> r =
          guard.lock(
              key,
              ctx -> {
                int n =
                    insertHandlerRow(
                        ctx.resource(Connection.class).orElseThrow(), key, ctx.fencingToken());
                // The lease lapses and another worker takes the key while this work runs.
                fixture.advanceClock(LEASE);
                claimWon(fixture.secondInstance(), key);
                return n;
              });
      assertThat(((LockResult.Executed<Integer>) r).completion())
          .isEqualTo(Completion.FENCED_OUT_ROLLED_BACK);
    }
    assertThat(handlerRows(key)).isZero();
    LockRecord r = backend.inspect(key).orElseThrow();
    assertThat(r.state()).isEqualTo(LockState.CLAIMED);
    assertThat(r.fence()).isEqualTo(2);
  }

  @Test
  @DisplayName(
      "transactional: the work's connection refuses commit and rollback and ends with the work")
  void transactional_connection_refuses_commit_and_ends_with_the_work() throws Exception {
    String key = newKey("tx-commit");
    AtomicReference<Connection> seen = new AtomicReference<>();
    try (IdempotencyGuard guard = guard(backend, true)) {
      assertThatThrownBy(
              () ->
                  guard.lock(
                      key,
                      ctx -> {
                        Connection c = ctx.resource(Connection.class).orElseThrow();
                        insertHandlerRow(c, key, ctx.fencingToken());
                        c.commit();
                        return 0;
                      }))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("commit is not allowed");
      assertThat(handlerRows(key)).isZero();
      LockResult<Integer> r =
          guard.lock(
              key,
              ctx -> {
                Connection c = ctx.resource(Connection.class).orElseThrow();
                seen.set(c);
                assertThatThrownBy(c::rollback).isInstanceOf(SQLException.class);
                assertThatThrownBy(() -> c.setAutoCommit(true)).isInstanceOf(SQLException.class);
                c.close(); // harmless: the backend still commits the insert below
                return insertHandlerRow(c, key, ctx.fencingToken());
              });
      assertThat(r.executed()).isTrue();
    }
    assertThat(handlerRows(key)).isEqualTo(1);
    assertThat(seen.get().isClosed()).isTrue();
    assertThatThrownBy(() -> seen.get().createStatement()).isInstanceOf(SQLException.class);
  }

  // ---------------------------------------------------------------------------------------------
  // Outages and transient errors
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("outage: the session killed mid-claim is a LockBackendException; the guard rethrows")
  void session_killed_mid_verb_is_a_lock_backend_exception() throws Exception {
    String key = newKey("killed");
    try (HikariDataSource pool = fixture.target().newPool("killed", 2, null)) {
      CountingDataSource counting = new CountingDataSource(pool);
      SqlLockBackend b = ownBackend(counting.dataSource());
      counting.beforeNextExecute(this::killSession);
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard =
          IdempotencyGuard.newBuilder(b).lease(LEASE).ttl(TTL).claimRetries(0).build()) {
        assertThatThrownBy(() -> guard.lock(key, ctx -> runs.incrementAndGet()))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("claim failed on SQL table '" + fixture.table() + "'")
            .hasMessageNotContaining(key)
            .hasCauseInstanceOf(SQLException.class);
      }
      assertThat(runs).hasValue(0);
      assertThat(backend.inspect(key)).isEmpty();
    }
    // Killed while marking DONE in transactional mode: the work's row goes with it.
    try (HikariDataSource pool = fixture.target().newPool("killed-tx", 1, null)) {
      CountingDataSource counting = new CountingDataSource(pool);
      SqlLockBackend b = ownBackend(counting.dataSource());
      Claim claim = claimWon(backend, key);
      assertThatThrownBy(
              () ->
                  b.runAndComplete(
                      claim,
                      TTL,
                      resource -> {
                        int n = insertHandlerRow((Connection) resource, key, claim.fence());
                        counting.beforeNextExecute(this::killSession);
                        return n;
                      }))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("marking DONE");
      assertThat(handlerRows(key)).isZero();
      assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
    }
  }

  @Test
  @DisplayName("outage: an unreachable database is a LockBackendException, never an answer")
  void unreachable_database_is_a_lock_backend_exception() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(unreachableJdbcUrl());
    config.setConnectionTimeout(250);
    config.setInitializationFailTimeout(-1);
    config.setMaximumPoolSize(1);
    try (HikariDataSource down = new HikariDataSource(config)) {
      // With the dialect named, construction does no I/O, so a worker can start during an outage.
      SqlLockBackend b =
          SqlLockBackend.create(
              SqlLockSettings.newBuilder()
                  .table(fixture.table())
                  .dialect(backend.dialect())
                  .dataSource(down)
                  .build());
      String key = newKey("down");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = IdempotencyGuard.newBuilder(b).claimRetries(0).build()) {
        assertThatThrownBy(() -> guard.lock(key, ctx -> runs.incrementAndGet()))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("claim failed on SQL table '" + fixture.table() + "'")
            .hasMessageNotContaining(key);
      }
      assertThat(runs).hasValue(0);
      Claim claim = new Claim(key, 1, java.time.Instant.EPOCH, "t");
      assertThatThrownBy(() -> b.complete(claim, TTL)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.extend(claim, LEASE)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.release(claim)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.inspect(key)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.purgeExpired(1)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.runAndComplete(claim, TTL, r -> 1))
          .isInstanceOf(LockBackendException.class);
      // Detecting the dialect needs the database.
      assertThatThrownBy(
              () -> SqlLockBackend.create(SqlLockSettings.newBuilder().dataSource(down).build()))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("start-up failed");
    }
  }

  @Test
  @DisplayName("transient errors are retried inside the verb; others fail at once")
  void transient_errors_are_retried_a_bounded_number_of_times() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockSettings base =
        fixture.settings().toBuilder()
            .dialect(backend.dialect())
            .createTableIfMissing(false)
            .build();
    SqlLockBackend retrying =
        SqlLockBackend.create(base.toBuilder().dataSource(counting.dataSource()).build());
    SqlLockBackend notRetrying =
        SqlLockBackend.create(
            base.toBuilder().transientRetries(0).dataSource(counting.dataSource()).build());

    String key = newKey("transient");
    counting.beforeNextExecute(
        c -> {
          throw new SQLException("injected deadlock", "40001");
        });
    assertThat(retrying.claim(key, LEASE, token())).isInstanceOf(ClaimResult.Won.class);
    assertThat(counting.connections()).isEqualTo(2);

    counting.reset();
    counting.beforeNextExecute(
        c -> {
          throw new SQLException("injected deadlock", "40001");
        });
    assertThatThrownBy(() -> notRetrying.inspect(key))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("inspect failed")
        .hasMessageContaining("SQLState 40001");
    assertThat(counting.connections()).isEqualTo(1);

    counting.reset();
    counting.beforeNextExecute(
        c -> {
          throw new SQLException("injected syntax error", "42000");
        });
    assertThatThrownBy(() -> retrying.inspect(key))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("SQLState 42000");
    assertThat(counting.connections()).isEqualTo(1);
  }

  @Test
  @DisplayName("a real lock timeout is retried, then surfaces as LockBackendException")
  void lock_timeout_is_retried_then_surfaces() throws Exception {
    String key = newKey("lock-timeout");
    Claim claim = claimWon(backend, key);
    try (HikariDataSource impatient =
            fixture.target().newPool("impatient", 2, shortLockTimeoutSql());
        HikariDataSource holderPool = fixture.target().newPool("holder", 1, null);
        Connection holder = holderPool.getConnection()) {
      CountingDataSource counting = new CountingDataSource(impatient);
      SqlLockBackend b =
          SqlLockBackend.create(
              fixture.settings().toBuilder()
                  .dialect(backend.dialect())
                  .createTableIfMissing(false)
                  .transientRetries(1)
                  .dataSource(counting.dataSource())
                  .build());
      holder.setAutoCommit(false);
      try (PreparedStatement ps =
          holder.prepareStatement(
              "UPDATE " + fixture.table() + " SET fence = fence WHERE lock_key = ?")) {
        bindKey(ps, 1, key);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      try {
        assertThatThrownBy(() -> b.extend(claim, LEASE))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("extend failed")
            .satisfies(
                e ->
                    assertThat(SqlErrors.isTransient((SQLException) e.getCause()))
                        .as("%s", e.getCause())
                        .isTrue());
        assertThat(counting.connections()).as("attempts").isEqualTo(2);
      } finally {
        holder.rollback();
      }
      assertThat(b.extend(claim, LEASE)).isTrue();
    }
  }

  @Test
  @DisplayName(
      "a duplicate claim reads without locking (PostgreSQL, MySQL, H2); MariaDB's upsert locks")
  void duplicate_claims_do_not_wait_for_row_locks() throws Exception {
    String key = newKey("dup-nolock");
    assertThat(backend.complete(claimWon(backend, key), TTL)).isTrue();
    try (HikariDataSource impatient =
            fixture.target().newPool("impatient-dup", 1, shortLockTimeoutSql());
        HikariDataSource holderPool = fixture.target().newPool("holder-dup", 1, null);
        Connection holder = holderPool.getConnection()) {
      SqlLockBackend b =
          SqlLockBackend.create(
              fixture.settings().toBuilder()
                  .dialect(backend.dialect())
                  .createTableIfMissing(false)
                  .transientRetries(0)
                  .dataSource(impatient)
                  .build());
      holder.setAutoCommit(false);
      try (PreparedStatement ps =
          holder.prepareStatement(
              "UPDATE " + fixture.table() + " SET fence = fence WHERE lock_key = ?")) {
        bindKey(ps, 1, key);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      try {
        if (backend.dialect() == SqlDialect.MARIADB) {
          assertThatThrownBy(() -> b.claim(key, LEASE, token()))
              .isInstanceOf(LockBackendException.class);
        } else {
          assertThat(b.claim(key, LEASE, token())).isInstanceOf(ClaimResult.AlreadyDone.class);
        }
      } finally {
        holder.rollback();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Keys
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("hostile keys round-trip as data and leave the table intact")
  void hostile_keys_round_trip() {
    String base = newKey("hostile");
    StringBuilder controls = new StringBuilder(base);
    for (char c = 1; c < 0x20; c++) {
      controls.append(c);
    }
    controls.append('\u007f');
    StringBuilder long1024 = new StringBuilder(base);
    while (long1024.toString().getBytes(StandardCharsets.UTF_8).length + 4 <= 1024) {
      long1024.append("😀");
    }
    while (long1024.toString().getBytes(StandardCharsets.UTF_8).length < 1024) {
      long1024.append('x');
    }
    List<String> hostile =
        List.of(
            base + "'; DROP TABLE " + fixture.table() + "; --",
            "'; DROP TABLE " + fixture.table() + "; --" + base,
            base + "\" OR \"1\"=\"1",
            base + "' OR '1'='1",
            base + "\\'; SELECT 1; --",
            base + " ? :key $1 %s %",
            base + "`backticks`",
            controls.toString(),
            long1024.toString());
    assertThat(long1024.toString().getBytes(StandardCharsets.UTF_8)).hasSize(1024);
    for (String key : hostile) {
      Claim c = claimWon(backend, key);
      assertThat(c.key()).isEqualTo(key);
      assertThat(backend.complete(c, TTL)).isTrue();
      assertThat(backend.inspect(key).orElseThrow().key()).isEqualTo(key);
      assertThat(backend.claim(key, LEASE, token())).isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(backend.forget(key)).isTrue();
      assertThat(backend.inspect(key)).isEmpty();
    }
    assertThatThrownBy(() -> backend.claim(long1024 + "x", LEASE, token()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1024");
    // The table is still there and still works.
    String after = newKey("after-hostile");
    assertThat(backend.complete(claimWon(backend, after), TTL)).isTrue();
  }

  @Test
  @DisplayName("keys that differ only in case or trailing spaces are different keys")
  void keys_differing_in_case_or_trailing_space_are_distinct() {
    String base = newKey("case");
    List<String> keys = List.of(base + "-key", base + "-KEY", base + "-key ", base + "-key  ");
    for (String key : keys) {
      assertThat(claimWon(backend, key).fence()).as(key).isEqualTo(1);
    }
    for (String key : keys) {
      assertThat(backend.inspect(key).orElseThrow().key()).isEqualTo(key);
    }
  }

  @Test
  @DisplayName("NUL in a key: rejected before any I/O where the store cannot hold it")
  void nul_in_keys() {
    String key = newKey("nul") + "\u0000after";
    if (backend.dialect() == SqlDialect.POSTGRESQL) {
      assertThatThrownBy(() -> backend.claim(key, LEASE, token()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("NUL")
          .hasMessageNotContaining(key);
      assertThatThrownBy(() -> backend.inspect(key)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(
              () ->
                  backend.claim(
                      new ClaimRequest(newKey("nul-fp"), LEASE, TTL, token(), "fp\u0000")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("fingerprint");
    } else {
      Claim c = claimWon(backend, key);
      assertThat(backend.complete(c, TTL)).isTrue();
      assertThat(backend.inspect(key).orElseThrow().key()).isEqualTo(key);
      assertThat(backend.inspect(key.replace("\u0000", ""))).isEmpty();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Races
  // ---------------------------------------------------------------------------------------------

  @Test
  @DisplayName("of concurrent claimers that all find the key absent, exactly one wins, every time")
  void exactly_one_winner_among_concurrent_claimers_of_an_absent_key() throws Exception {
    int claimers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(claimers);
    try {
      for (int round = 0; round < 20; round++) {
        String key = newKey("race");
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimResult>> futures = new ArrayList<>();
        for (int i = 0; i < claimers; i++) {
          LockBackend b = i % 2 == 0 ? backend : fixture.secondInstance();
          futures.add(
              pool.submit(
                  () -> {
                    go.await();
                    return b.claim(key, LEASE, token());
                  }));
        }
        go.countDown();
        int won = 0;
        for (Future<ClaimResult> f : futures) {
          ClaimResult r = f.get(60, TimeUnit.SECONDS);
          if (r instanceof ClaimResult.Won w) {
            won++;
            assertThat(w.claim().fence()).isEqualTo(1);
          } else {
            assertThat(r).isInstanceOf(ClaimResult.HeldByOther.class);
          }
        }
        assertThat(won).as("winners in round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------------

  /** A backend of its own on {@code ds}, on the fixture's table and clock. */
  SqlLockBackend ownBackend(DataSource ds) {
    return SqlLockBackend.create(
        fixture.settings().toBuilder()
            .dialect(backend.dialect())
            .createTableIfMissing(false)
            .dataSource(ds)
            .build());
  }

  int insertHandlerRow(Connection c, String key, long fence) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + handlerTable + " (id, fence) VALUES (?, ?)")) {
      ps.setString(1, handlerId(key));
      ps.setLong(2, fence);
      return ps.executeUpdate();
    }
  }

  int handlerRows(String key) throws SQLException {
    try (Connection c = fixture.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT COUNT(*) FROM " + handlerTable + " WHERE id = ?")) {
      ps.setString(1, handlerId(key));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Handler rows are keyed by a short ASCII id, so any key fits the handler's table. */
  private static String handlerId(String key) {
    return Integer.toHexString(key.hashCode()) + "-" + key.length();
  }

  void bindKey(PreparedStatement ps, int index, String key) throws SQLException {
    if (backend.dialect().storesKeysAsBytes()) {
      ps.setBytes(index, key.getBytes(StandardCharsets.UTF_8));
    } else {
      ps.setString(index, key);
    }
  }
}
