package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.DurationChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * Settings of a {@link SqlLockBackend}: the {@link DataSource} it borrows connections from, the
 * table, the dialect and the bounds on each statement. Immutable and thread-safe; build with {@link
 * #newBuilder()}, whose setters validate their argument (an {@link IllegalArgumentException} naming
 * the setting and the value) and state their default; copy with {@link #toBuilder()}.
 *
 * <pre>{@code
 * SqlLockSettings settings =
 *     SqlLockSettings.newBuilder()
 *         .dataSource(hikariDataSource)
 *         .table("orders_locks")
 *         .createTableIfMissing(true)
 *         .build();
 * SqlLockBackend backend = SqlLockBackend.create(settings);
 * }</pre>
 *
 * The data source is the one setting without a default. Settings without it are valid as a template
 * (read from configuration before the pool exists, say) and are completed with {@code
 * toBuilder().dataSource(ds).build()}; {@link SqlLockBackend#create} refuses them.
 */
public final class SqlLockSettings {

  /** The default table: {@value}. */
  public static final String DEFAULT_TABLE = "pubsub_worker_locks";

  /**
   * The longest table name accepted: {@value}, so that the constraint and index names derived from
   * it (up to 12 more characters) fit PostgreSQL's 63 and MySQL's 64.
   */
  public static final int MAX_TABLE_LENGTH = 48;

  /** Default retries of a verb after a transient store error: {@value}. */
  public static final int DEFAULT_TRANSIENT_RETRIES = 3;

  /** The most transient retries accepted: {@value}. */
  public static final int MAX_TRANSIENT_RETRIES = 10;

  /** {@link #DEFAULT_STATEMENT_TIMEOUT} in seconds: {@value}. */
  public static final int DEFAULT_STATEMENT_TIMEOUT_SECONDS = 5;

  /**
   * Default bound on one statement of a verb: {@value #DEFAULT_STATEMENT_TIMEOUT_SECONDS} seconds,
   * the same as the Redis store's command timeout. A verb's statements take milliseconds; 5 s only
   * trips on a database that is stuck (lock waits, an overloaded server), and frees the handler
   * long before a message's ack deadline.
   */
  public static final Duration DEFAULT_STATEMENT_TIMEOUT =
      Duration.ofSeconds(DEFAULT_STATEMENT_TIMEOUT_SECONDS);

  /** {@link #DEFAULT_SOCKET_TIMEOUT} in seconds: {@value}. */
  public static final int DEFAULT_SOCKET_TIMEOUT_SECONDS = 7;

  /**
   * Default bound on one wait for the database's bytes on a verb's connection: {@value
   * #DEFAULT_SOCKET_TIMEOUT_SECONDS} seconds, the statement timeout plus 2 s, so that a slow
   * statement is cancelled by the server first (the connection stays usable) and the socket timeout
   * only fires when the database or the network stopped answering altogether (the connection is
   * then discarded).
   */
  public static final Duration DEFAULT_SOCKET_TIMEOUT =
      Duration.ofSeconds(DEFAULT_SOCKET_TIMEOUT_SECONDS);

  /** The longest statement or socket timeout accepted: {@value #MAX_TIMEOUT_SECONDS} seconds. */
  public static final int MAX_TIMEOUT_SECONDS = 3600;

  private static final Duration MIN_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration MAX_TIMEOUT = Duration.ofSeconds(MAX_TIMEOUT_SECONDS);

  private static final SqlLockSettings DEFAULTS = newBuilder().build();

  private final DataSource dataSource;
  private final String table;
  private final SqlDialect dialect;
  private final boolean createTableIfMissing;
  private final int transientRetries;
  private final Duration statementTimeout;
  private final Duration socketTimeout;
  private final LongSupplier clockOffsetMillis;

  private SqlLockSettings(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.dialect = b.dialect;
    this.createTableIfMissing = b.createTableIfMissing;
    this.transientRetries = b.transientRetries;
    this.statementTimeout = b.statementTimeout;
    this.socketTimeout = b.socketTimeout;
    this.clockOffsetMillis = b.clockOffsetMillis;
  }

  /**
   * The defaults: no data source (a template, see the class comment), table {@value
   * #DEFAULT_TABLE}, dialect detected, no auto-create, statement timeout {@value
   * #DEFAULT_STATEMENT_TIMEOUT_SECONDS} s, socket timeout {@value #DEFAULT_SOCKET_TIMEOUT_SECONDS}
   * s.
   */
  public static SqlLockSettings defaults() {
    return DEFAULTS;
  }

  /** A builder with every setting at its default. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** A builder initialised with these settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.dataSource = dataSource;
    b.table = table;
    b.dialect = dialect;
    b.createTableIfMissing = createTableIfMissing;
    b.transientRetries = transientRetries;
    b.statementTimeout = statementTimeout;
    b.socketTimeout = socketTimeout;
    b.clockOffsetMillis = clockOffsetMillis;
    return b;
  }

  /**
   * The pool the backend borrows connections from, or empty in a template that has none yet. The
   * backend never closes it.
   */
  public Optional<DataSource> dataSource() {
    return Optional.ofNullable(dataSource);
  }

  /** The lock table's name, a plain SQL identifier. */
  public String table() {
    return table;
  }

  /** The dialect, or empty to detect it from the connection's metadata. */
  public Optional<SqlDialect> dialect() {
    return Optional.ofNullable(dialect);
  }

  /** Whether the backend creates the table (and its index) at construction if it is missing. */
  public boolean createTableIfMissing() {
    return createTableIfMissing;
  }

  /** How often a verb is retried after a transient store error before it fails. */
  public int transientRetries() {
    return transientRetries;
  }

  /**
   * How long one statement of a verb may run before it is cancelled: on PostgreSQL by the server
   * ({@code statement_timeout}, set for that statement's transaction only), elsewhere by the driver
   * ({@link java.sql.Statement#setQueryTimeout}); the verb then fails with a {@link
   * dev.pubsubworker.core.LockBackendException}. See {@link Builder#statementTimeout}.
   */
  public Duration statementTimeout() {
    return statementTimeout;
  }

  /**
   * {@link #statementTimeout()} in JDBC's unit, whole seconds (rounded up), for the dialects
   * bounded with {@code setQueryTimeout}.
   */
  int statementTimeoutSeconds() {
    return (int) Math.max(1, (statementTimeout.toMillis() + 999) / 1000);
  }

  /**
   * How long a verb's connection waits for the database's next bytes before it gives the connection
   * up ({@link java.sql.Connection#setNetworkTimeout}); the verb then fails with a {@link
   * dev.pubsubworker.core.LockBackendException}.
   */
  public Duration socketTimeout() {
    return socketTimeout;
  }

  /**
   * The test-only clock offset in milliseconds, added to the database's clock in every statement.
   */
  LongSupplier clockOffsetMillis() {
    return clockOffsetMillis;
  }

  @Override
  public String toString() {
    return "SqlLockSettings{dataSource="
        + (dataSource == null ? "none" : dataSource.getClass().getSimpleName())
        + ", table="
        + table
        + ", dialect="
        + (dialect == null ? "detect" : dialect)
        + ", createTableIfMissing="
        + createTableIfMissing
        + ", transientRetries="
        + transientRetries
        + ", statementTimeout="
        + statementTimeout
        + ", socketTimeout="
        + socketTimeout
        + "}";
  }

  /** Builds {@link SqlLockSettings}. Not thread-safe. */
  public static final class Builder {
    private DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private SqlDialect dialect;
    private boolean createTableIfMissing;
    private int transientRetries = DEFAULT_TRANSIENT_RETRIES;
    private Duration statementTimeout = DEFAULT_STATEMENT_TIMEOUT;
    private Duration socketTimeout = DEFAULT_SOCKET_TIMEOUT;
    private LongSupplier clockOffsetMillis = () -> 0L;

    private Builder() {}

    /**
     * The pool to borrow connections from (a HikariCP pool, typically); the backend never closes
     * it. Its connections may be in either auto-commit mode (one in manual mode costs one more
     * round trip per verb to switch it). No default: {@link SqlLockBackend#create} requires it.
     */
    public Builder dataSource(DataSource value) {
      this.dataSource = Objects.requireNonNull(value, "dataSource");
      return this;
    }

    /**
     * The lock table's name. Default {@value #DEFAULT_TABLE}.
     *
     * @throws IllegalArgumentException if it is not a plain SQL identifier ({@code
     *     [A-Za-z_][A-Za-z0-9_]*}), is longer than {@value #MAX_TABLE_LENGTH} characters, or is a
     *     reserved word; the message says which
     */
    public Builder table(String value) {
      this.table = TableName.requireValid(value);
      return this;
    }

    /**
     * The dialect to speak. Default: detected from the connection's metadata at construction (which
     * then opens one connection); setting it avoids that and lets the backend start while the
     * database is down.
     */
    public Builder dialect(SqlDialect value) {
      this.dialect = Objects.requireNonNull(value, "dialect");
      return this;
    }

    /**
     * Whether to run the dialect's DDL ({@code CREATE TABLE IF NOT EXISTS} and its index) at
     * construction. Default false: production schemas are usually migrated by other means; the DDL
     * files are in this module's resources ({@link SqlDialect#schemaResource()}).
     */
    public Builder createTableIfMissing(boolean value) {
      this.createTableIfMissing = value;
      return this;
    }

    /**
     * How often a verb is retried, inside the call, after a transient store error (serialization
     * failure, deadlock, lock timeout) before it throws. Each retry waits a random time below a
     * ceiling of 10 ms that doubles per retry up to 640 ms (full jitter). Default {@value
     * #DEFAULT_TRANSIENT_RETRIES}.
     *
     * @throws IllegalArgumentException if negative or above {@value #MAX_TRANSIENT_RETRIES}
     */
    public Builder transientRetries(int value) {
      if (value < 0 || value > MAX_TRANSIENT_RETRIES) {
        throw new IllegalArgumentException(
            "transientRetries must be 0.." + MAX_TRANSIENT_RETRIES + ", but was " + value);
      }
      this.transientRetries = value;
      return this;
    }

    /**
     * How long one statement of a verb may run before it is cancelled. The verb then fails with a
     * {@link dev.pubsubworker.core.LockBackendException} carrying the driver's exception, and is
     * not retried. It bounds this backend's own statements only, never those a transactional-mode
     * work runs. Default {@value #DEFAULT_STATEMENT_TIMEOUT_SECONDS} s.
     *
     * <ul>
     *   <li>PostgreSQL (with its own JDBC driver): the server enforces it, to the millisecond. Each
     *       statement is sent, in the same round trip, after {@code SELECT
     *       set_config('statement_timeout', '<ms>', true)}, which holds for that statement's
     *       transaction only: nothing is left on the pooled session (the pool's other users, a
     *       transactional-mode work and a proxy that pools per transaction keep their own setting),
     *       and the driver arms no timer and sends no cancel request. A statement cut short fails
     *       with SQLState {@code 57014}. The completes of one {@link SqlLockBackend#completeAll}
     *       batch (one JDBC batch) are the exception: {@code setQueryTimeout}, one timer per batch.
     *   <li>MariaDB, MySQL and H2: {@link java.sql.Statement#setQueryTimeout}, in whole seconds (a
     *       fraction is rounded up). On a MariaDB server, MariaDB's driver runs the statement under
     *       the server's {@code max_statement_time} (no client timer either); H2 checks it while
     *       running.
     * </ul>
     *
     * @throws IllegalArgumentException if not between 1 s and {@value #MAX_TIMEOUT_SECONDS} s
     */
    public Builder statementTimeout(Duration value) {
      this.statementTimeout =
          DurationChecks.requireBetween("statementTimeout", value, MIN_TIMEOUT, MAX_TIMEOUT);
      return this;
    }

    /**
     * How long a verb's connection waits for the database's next bytes before it is given up, with
     * {@link java.sql.Connection#setNetworkTimeout} (a socket read timeout): what frees a handler
     * when the database or the network stops answering altogether, where a statement timeout cannot
     * (its cancel request does not get through either). The connection is then closed and the verb
     * fails with a {@link dev.pubsubworker.core.LockBackendException}. Set while this backend's own
     * statements run (claim, complete, release, extend, the admin verbs, and the DONE update and
     * commit of the transactional mode); while a transactional-mode work runs, the connection has
     * the pool's own network timeout. Must not be shorter than {@link #statementTimeout}, so that a
     * slow statement is cancelled (and its connection kept) before its socket gives up. Default
     * {@value #DEFAULT_SOCKET_TIMEOUT_SECONDS} s.
     *
     * @throws IllegalArgumentException if not between 1 s and {@value #MAX_TIMEOUT_SECONDS} s
     */
    public Builder socketTimeout(Duration value) {
      this.socketTimeout =
          DurationChecks.requireBetween("socketTimeout", value, MIN_TIMEOUT, MAX_TIMEOUT);
      return this;
    }

    /**
     * <b>For tests only.</b> An offset in milliseconds added to the database's clock in every
     * statement, read once per statement and bound as a parameter, so a test can move the backend's
     * clock forward without sleeping (the contract suites' {@code advanceClock}). Default: zero.
     * Never set it in production: every process sharing the table must see the same clock.
     */
    Builder clockOffset(LongSupplier millis) {
      this.clockOffsetMillis = Objects.requireNonNull(millis, "clockOffset");
      return this;
    }

    /**
     * Builds the settings.
     *
     * @throws IllegalArgumentException if the socket timeout is shorter than the statement timeout
     */
    public SqlLockSettings build() {
      if (socketTimeout.compareTo(statementTimeout) < 0) {
        throw new IllegalArgumentException(
            "socketTimeout must not be shorter than statementTimeout ("
                + statementTimeout.toMillis()
                + "ms), but was "
                + socketTimeout.toMillis()
                + "ms");
      }
      return new SqlLockSettings(this);
    }
  }
}
