package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.Backoff;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.StoreRefusedException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock table as the verbs reach it: connections borrowed from the {@link DataSource} with the
 * socket timeout set, statements prepared from {@link SqlStatements} with the statement timeout and
 * the key and clock offset bound, a verb retried as a whole after a transient error, and failures
 * turned into {@link LockBackendException}s that name the verb and the table (never the key).
 *
 * <p>The statement timeout: on PostgreSQL (with its own driver) the server enforces it. Each
 * statement prepared here is preceded, in the same text and so the same round trip, by {@code
 * SELECT set_config('statement_timeout', '<ms>', true);} (from PostgreSQL 12 with {@code
 * set_config('plan_cache_mode', 'force_generic_plan', true)} in the same {@code SELECT}): the
 * driver pipelines both before one Sync, so they run in one transaction (the implicit one of an
 * auto-commit statement, or the open one), the settings apply to the statement after it and lapse
 * when that transaction ends. No session setting is left on the pooled connection (a pool shared
 * with other code, a connection proxy that pools per transaction and a transactional-mode work all
 * keep their own), no client timer is armed and no cancel request is sent; a statement that runs
 * too long fails with SQLState {@code 57014} as a driver-cancelled one did. Read such a statement's
 * results with {@link #query} and {@link #executeUpdate}, which step over the {@code set_config}
 * row. The other dialects, and PostgreSQL's JDBC batches ({@link #updateEach}: one timer per
 * batch), keep {@link java.sql.Statement#setQueryTimeout}; MariaDB's driver already turns it into
 * the server's {@code max_statement_time} without a timer.
 *
 * <p>Thread-safe and stateless apart from the {@link DataSource}.
 */
final class LockTable {

  private static final Logger log = LoggerFactory.getLogger(LockTable.class);

  /**
   * Where a driver runs the work of applying a network timeout: on the calling thread (the
   * supported drivers only set a socket option).
   */
  private static final Executor DIRECT = Runnable::run;

  /** {@code DatabaseMetaData.getDriverName()} of PostgreSQL's own JDBC driver (pgjdbc). */
  private static final String PGJDBC = "PostgreSQL JDBC Driver";

  /**
   * The wait before retrying a verb after a transient error: full jitter (uniform below the
   * ceiling) under a ceiling of 10 ms doubling per retry up to 640 ms, so that two verbs that
   * deadlocked each other do not collide again in step.
   */
  static final Backoff TRANSIENT_RETRY_BACKOFF =
      Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(640))
          .withJitter(Backoff.Jitter.FULL);

  /** One SQL step of a verb, on a borrowed connection in auto-commit mode. */
  @FunctionalInterface
  interface SqlCall<R> {
    R run(Connection c) throws SQLException;
  }

  private final DataSource dataSource;
  private final SqlLockSettings settings;
  private final SqlDialect dialect;
  private final SqlStatements sql;
  private final String namespace;
  private final int socketTimeoutMillis;

  /**
   * PostgreSQL: the statement sent ahead of each of the backend's statements that sets the server's
   * statement timeout for the rest of the transaction, without its end; null on the other dialects.
   */
  private final String serverTimeout;

  /**
   * PostgreSQL 12 and later: what {@link #serverTimeout} adds so that the statement after it runs
   * its prepared generic plan. Under the default {@code plan_cache_mode} ({@code auto}) the server
   * plans a prepared statement anew (a custom plan) for its first five executions and then whenever
   * the generic plan's estimated cost exceeds the custom plans' average, which over arrays of
   * unknown length (the batch verbs) it may; in the end-to-end benchmark that planning took 15 % of
   * the server's CPU per message. The generic plans are lookups on the primary key whatever the
   * arrays hold. Like the timeout, the setting lapses with the statement's transaction.
   */
  private static final String GENERIC_PLAN =
      ", set_config('plan_cache_mode', 'force_generic_plan', true)";

  /** {@link #serverTimeout} as sent, decided with {@link #serverTimeoutState}. */
  private volatile String serverPrefix;

  /**
   * Whether statements carry {@link #serverTimeout}: 0 until the first statement is prepared, then
   * 1 (PostgreSQL's own driver, which pipelines a text of several statements) or -1 (any other
   * dialect or driver: {@code setQueryTimeout}). A data source hands out one driver's connections.
   */
  private volatile int serverTimeoutState;

  private LockTable(DataSource dataSource, SqlLockSettings settings, SqlDialect dialect) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.dialect = dialect;
    this.sql = new SqlStatements(dialect, settings.table());
    this.namespace = "SQL table '" + settings.table() + "' (" + dialect + ")";
    this.socketTimeoutMillis = (int) settings.socketTimeout().toMillis();
    this.serverTimeout =
        dialect == SqlDialect.POSTGRESQL
            ? "SELECT set_config('statement_timeout', '"
                + settings.statementTimeout().toMillis()
                + "', true)"
            : null;
  }

  /**
   * The table of {@code settings}. Opens one connection if the dialect must be detected or the
   * table created, none otherwise.
   *
   * @throws IllegalArgumentException if the settings have no data source, or the database is not
   *     one of the supported products and no dialect was set
   * @throws LockBackendException if detecting the dialect or creating the table failed in the store
   */
  static LockTable open(SqlLockSettings settings) {
    DataSource dataSource =
        settings
            .dataSource()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "SqlLockSettings have no dataSource; set one with"
                            + " SqlLockSettings.Builder.dataSource"));
    SqlDialect dialect = settings.dialect().orElse(null);
    if (dialect == null || settings.createTableIfMissing()) {
      String table = settings.table();
      try (Connection c = dataSource.getConnection()) {
        setNetworkTimeout(c, (int) settings.socketTimeout().toMillis());
        if (dialect == null) {
          dialect = SqlDialect.detect(c.getMetaData()).orElseThrow(() -> unsupported(c, table));
          log.debug("SQL table '{}': detected dialect {}", table, dialect);
        }
        if (settings.createTableIfMissing()) {
          createTable(c, dialect, table);
        }
      } catch (SQLException e) {
        throw new LockBackendException(
            "start-up failed on SQL table '"
                + table
                + "'"
                + (dialect == null ? " while detecting the dialect" : " (" + dialect + ")")
                + stateOf(e),
            e);
      }
    }
    return new LockTable(dataSource, settings, dialect);
  }

  SqlDialect dialect() {
    return dialect;
  }

  SqlLockSettings settings() {
    return settings;
  }

  /** The table's statements in its dialect. */
  SqlStatements sql() {
    return sql;
  }

  /** "SQL table 'name' (DIALECT)", for messages and logs. */
  String namespace() {
    return namespace;
  }

  /**
   * Runs a verb on a pooled connection, retrying it as a whole after a transient error (each
   * statement of a verb commits on its own and is safe to repeat: the claim token makes a claim
   * idempotent, the fence the other verbs).
   *
   * @throws LockBackendException for any other failure, or a transient one that outlasts the
   *     retries
   */
  <R> R execute(String verb, SqlCall<R> call) {
    for (int attempt = 0; ; attempt++) {
      try (Connection c = dataSource.getConnection()) {
        boundSocket(c);
        if (!c.getAutoCommit()) {
          c.setAutoCommit(true);
        }
        return call.run(c);
      } catch (SQLException e) {
        if (attempt < settings.transientRetries() && SqlErrors.isTransient(e)) {
          log.debug(
              "{} on {} hit a transient error (SQLState {}); retry {} of {}",
              verb,
              namespace,
              e.getSQLState(),
              attempt + 1,
              settings.transientRetries());
          pause(attempt);
          continue;
        }
        throw failure(verb, e);
      }
    }
  }

  /**
   * Runs a verb's statements in one transaction on a pooled connection and commits once (the batch
   * verbs of the dialects that need more than one statement); rolls back on any failure and retries
   * the whole transaction after a transient error, as {@link #execute} does. The call must compute
   * its answer afresh on each attempt.
   *
   * @throws LockBackendException for any other failure (including a failed commit), or a transient
   *     one that outlasts the retries
   */
  <R> R executeInTransaction(String verb, SqlCall<R> call) {
    return execute(
        verb,
        c -> {
          c.setAutoCommit(false);
          R result;
          try {
            result = call.run(c);
            c.commit();
          } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c, e);
            restoreAutoCommitQuietly(c, e);
            throw e;
          }
          c.setAutoCommit(true);
          return result;
        });
  }

  private static void restoreAutoCommitQuietly(Connection c, Throwable primary) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      primary.addSuppressed(e);
    }
  }

  /** A connection from the pool, as it comes (for the transactional run). */
  Connection borrow() throws SQLException {
    return dataSource.getConnection();
  }

  /**
   * The key's record, read strictly, or null if there is no row.
   *
   * @param verb the verb reading it, for the error's message
   * @throws InvalidLockRecordException if the row is unreadable
   */
  LockRecord readRecord(Connection c, String key, String verb) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql.inspect, params(key));
        ResultSet rs = query(ps)) {
      if (!rs.next()) {
        return null;
      }
      return StoredRow.read(rs, key, Instant.ofEpochMilli(rs.getLong("now_ms")), this, verb);
    }
  }

  int update(Connection c, SqlTemplate template, SqlTemplate.Params p) throws SQLException {
    try (PreparedStatement ps = prepare(c, template, p)) {
      return executeUpdate(ps);
    }
  }

  /**
   * Runs one statement once per parameter set as one JDBC batch: the driver sends them together
   * and, on a connection in auto-commit mode, PostgreSQL runs them in one implicit transaction (one
   * round trip, one commit; all or none). Returns each execution's update count, in order. Bounded
   * with {@code setQueryTimeout} on every dialect (a batch cannot carry the PostgreSQL prefix): one
   * timer for the whole batch.
   */
  int[] updateEach(Connection c, SqlTemplate template, List<SqlTemplate.Params> each)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(template.sql())) {
      ps.setQueryTimeout(settings.statementTimeoutSeconds());
      for (SqlTemplate.Params p : each) {
        template.bind(ps, p);
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      if (counts.length != each.size()) {
        throw new SQLException(
            "the batch returned " + counts.length + " update counts for " + each.size());
      }
      return counts;
    }
  }

  /**
   * Prepares one of this table's statements, bounded by the statement timeout: on PostgreSQL by the
   * server (the {@code set_config} prefix, see the class comment), elsewhere by {@code
   * setQueryTimeout}. Execute it with {@link #query} or {@link #executeUpdate}.
   */
  PreparedStatement prepare(Connection c, SqlTemplate template, SqlTemplate.Params p)
      throws SQLException {
    if (serverTimeout(c)) {
      return template.after(serverPrefix).prepare(c, p);
    }
    PreparedStatement ps = template.prepare(c, p);
    try {
      ps.setQueryTimeout(settings.statementTimeoutSeconds());
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /** Runs a statement from {@link #prepare} that returns rows, and returns them. */
  ResultSet query(PreparedStatement ps) throws SQLException {
    if (serverTimeoutState <= 0) {
      return ps.executeQuery();
    }
    ps.execute(); // the set_config row, then the statement's own result
    if (!ps.getMoreResults()) {
      throw new SQLException("the statement returned no result set");
    }
    return ps.getResultSet();
  }

  /** Runs a statement from {@link #prepare} that returns no rows; its update count. */
  int executeUpdate(PreparedStatement ps) throws SQLException {
    if (serverTimeoutState <= 0) {
      return ps.executeUpdate();
    }
    ps.execute();
    if (ps.getMoreResults()) {
      throw new SQLException("the statement returned a result set where none was expected");
    }
    return ps.getUpdateCount();
  }

  /** Whether the server enforces the statement timeout on {@code c}'s statements (PostgreSQL). */
  private boolean serverTimeout(Connection c) throws SQLException {
    int state = serverTimeoutState;
    if (state == 0) {
      DatabaseMetaData meta = c.getMetaData();
      state = serverTimeout != null && PGJDBC.equals(meta.getDriverName()) ? 1 : -1;
      if (state > 0) {
        serverPrefix =
            serverTimeout + (meta.getDatabaseMajorVersion() >= 12 ? GENERIC_PLAN : "") + "; ";
      }
      serverTimeoutState = state;
      log.debug(
          "{}: the statement timeout is enforced by {}",
          namespace,
          state > 0 ? "the server (statement_timeout)" : "the driver (setQueryTimeout)");
    }
    return state > 0;
  }

  /** Parameters with the key (as text or UTF-8 bytes, per dialect) and the clock offset. */
  SqlTemplate.Params params(String key) {
    SqlTemplate.Params p = new SqlTemplate.Params().set("offset", offset());
    return dialect.storesKeysAsBytes()
        ? p.set("key", key.getBytes(StandardCharsets.UTF_8))
        : p.set("key", key);
  }

  /** Sets parameter {@code name} to {@code key}, as text or UTF-8 bytes per dialect. */
  SqlTemplate.Params setKey(SqlTemplate.Params p, String name, String key) {
    return dialect.storesKeysAsBytes()
        ? p.set(name, key.getBytes(StandardCharsets.UTF_8))
        : p.set(name, key);
  }

  /** The test clock offset in milliseconds, zero outside tests. */
  long offset() {
    return settings.clockOffsetMillis().getAsLong();
  }

  /**
   * Bounds every wait for the database's bytes on {@code c} by the socket timeout. A driver that
   * cannot (none of the supported ones) leaves it to the pool's own settings.
   */
  void boundSocket(Connection c) throws SQLException {
    setNetworkTimeout(c, socketTimeoutMillis);
  }

  void boundSocketQuietly(Connection c, Throwable primary) {
    try {
      boundSocket(c);
    } catch (SQLException e) {
      primary.addSuppressed(e);
    }
  }

  static void setNetworkTimeout(Connection c, int millis) throws SQLException {
    try {
      c.setNetworkTimeout(DIRECT, millis);
    } catch (SQLFeatureNotSupportedException e) {
      log.debug("the JDBC driver has no network timeout; the pool's settings apply");
    }
  }

  /** The connection's network timeout in milliseconds, 0 for none (or a driver without one). */
  static int networkTimeoutOf(Connection c) throws SQLException {
    try {
      return c.getNetworkTimeout();
    } catch (SQLFeatureNotSupportedException e) {
      return 0;
    }
  }

  /**
   * Rolls back; if that fails (the database stopped answering), aborts the connection, so that
   * nothing later on it — restoring auto-commit, which commits an open transaction, or the pool's
   * reset — can commit the work's writes and DONE after the caller reported them rolled back.
   */
  static void rollbackQuietly(Connection c, Throwable primary) {
    try {
      c.rollback();
    } catch (SQLException e) {
      primary.addSuppressed(e);
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException abortFailed) {
        primary.addSuppressed(abortFailed);
      }
    }
  }

  void closeQuietly(Connection c, Throwable primary) {
    try {
      c.close();
    } catch (SQLException e) {
      if (primary != null) {
        primary.addSuppressed(e);
      } else {
        log.debug("closing a connection of {} failed", namespace, e);
      }
    }
  }

  /** A failure of {@code verb}: a {@link StoreRefusedException} when the database refused it. */
  LockBackendException failure(String verb, SQLException e) {
    String message = verb + " failed on " + namespace + stateOf(e);
    return SqlErrors.isRefusal(e)
        ? new StoreRefusedException(message, e)
        : new LockBackendException(message, e);
  }

  private static String stateOf(SQLException e) {
    return e.getSQLState() == null ? "" : " (SQLState " + e.getSQLState() + ")";
  }

  private static void pause(int attempt) {
    LockSupport.parkNanos(TRANSIENT_RETRY_BACKOFF.delay(attempt).toNanos());
  }

  private static void createTable(Connection c, SqlDialect dialect, String table)
      throws SQLException {
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    try {
      Schema.create(c, dialect, table);
    } catch (SQLException e) {
      // Another process may have created it at the same moment (PostgreSQL's IF NOT EXISTS is not
      // race-free): fine if the table is there now.
      SqlStatements probe = new SqlStatements(dialect, table);
      try (PreparedStatement ps = c.prepareStatement(probe.probe.sql())) {
        ps.executeQuery().close();
        log.debug("SQL table '{}' ({}): created concurrently by another process", table, dialect);
      } catch (SQLException notThere) {
        e.addSuppressed(notThere);
        throw e;
      }
    }
  }

  private static IllegalArgumentException unsupported(Connection c, String table) {
    String product;
    try {
      product = c.getMetaData().getDatabaseProductName();
    } catch (SQLException e) {
      product = "unknown";
    }
    return new IllegalArgumentException(
        "SQL table '"
            + table
            + "': the database product '"
            + product
            + "' is not supported; supported are PostgreSQL, MariaDB, MySQL and H2 (set"
            + " SqlLockSettings.Builder.dialect to force one)");
  }
}
