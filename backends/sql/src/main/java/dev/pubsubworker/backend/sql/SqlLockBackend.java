package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.TransactionalLockBackend;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link dev.pubsubworker.core.LockBackend} on a SQL table, over a JDBC {@link DataSource} the
 * caller owns (a HikariCP pool, typically): PostgreSQL, MySQL/MariaDB and H2 ({@link SqlDialect}).
 * Also the {@link LockAdmin} of that table and a {@link TransactionalLockBackend}.
 *
 * <pre>{@code
 * SqlLockBackend backend =
 *     SqlLockBackend.create(hikariDataSource, SqlLockBackendSettings.newBuilder()
 *         .tableName("pubsub_worker_locks")
 *         .build());
 * IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).build();
 * }</pre>
 *
 * <h2>Semantics</h2>
 *
 * One row per key, exactly the record and transitions of {@link dev.pubsubworker.core.LockBackend}.
 * Expiry is judged by the <b>database's clock</b>, read inside each statement, never the JVM's, so
 * every process sharing the table agrees on it. Times are stored as epoch milliseconds ({@code
 * BIGINT}): exact, time-zone free and the same in all three products. A claim is atomic (one
 * statement, or a compare-and-set on what it read): of concurrent claimers exactly one wins, also
 * when they all found the key absent (the unique key decides; the losers' conflict is handled,
 * never reported). A claim retried with the same claim token re-affirms its own claim.
 *
 * <h2>Statements per verb</h2>
 *
 * <table>
 *   <caption>Statements (each one round trip) per verb</caption>
 *   <tr><th>verb</th><th>PostgreSQL</th><th>MariaDB ≥ 10.5</th><th>MySQL, H2</th></tr>
 *   <tr><td>claim</td><td>1</td><td>1</td><td>2 (read, then insert or compare-and-set); 1 when
 *       held or done</td></tr>
 *   <tr><td>complete</td><td>1</td><td>1; 2 when the fence does not match</td><td>1; 2 when the
 *       fence does not match</td></tr>
 *   <tr><td>release</td><td>1</td><td>1</td><td>1</td></tr>
 *   <tr><td>extend</td><td>1</td><td>1; 2 when refused</td><td>1; 2 when refused</td></tr>
 *   <tr><td>inspect, forget, purgeExpired</td><td>1</td><td>1</td><td>1</td></tr>
 * </table>
 *
 * A claim that loses a race (a concurrent claim changed the row between its read and its write)
 * reads again, at most {@value #MAX_RACE_ROUNDS} times. Keys are always bound parameters.
 *
 * <h2>Errors</h2>
 *
 * Keys are checked before any I/O ({@link #validateKey}): 1 to {@value #MAX_KEY_BYTES} UTF-8 bytes,
 * well-formed, and on PostgreSQL free of U+0000. Transient store errors (serialization failure,
 * deadlock, lock timeout; classified by SQLState in one place) are retried inside the verb up to
 * {@link SqlLockBackendSettings#transientRetries()} times; every other failure, and a transient one
 * that outlasts the retries, is a {@link LockBackendException} naming the verb and the table (never
 * the key), with the driver's exception as its cause.
 *
 * <p>No statement of this backend waits forever: each runs under {@link
 * SqlLockBackendSettings#statementTimeout()} ({@link java.sql.Statement#setQueryTimeout}) and on a
 * connection whose reads give up after {@link SqlLockBackendSettings#socketTimeout()} ({@link
 * Connection#setNetworkTimeout}, set whenever the backend borrows or takes back a connection).
 * Either timeout is a {@link LockBackendException} too, not retried. Getting a connection is
 * bounded by the {@link DataSource} (its pool's connection timeout).
 *
 * <h2>Transactional mode</h2>
 *
 * See {@link #runAndComplete}: the work runs on the connection and inside the transaction that then
 * writes DONE, so the work's writes to this database and its DONE record commit together or not at
 * all.
 *
 * <p>Thread-safe and stateless apart from the {@link DataSource}; one instance serves a process.
 * {@link #close()} leaves the {@link DataSource} open: it belongs to the caller.
 */
public final class SqlLockBackend implements TransactionalLockBackend, LockAdmin {

  /** The longest key accepted, in UTF-8 bytes: {@value}. The DDL's key column is sized for it. */
  public static final int MAX_KEY_BYTES = 1024;

  /** How often a claim that lost a race to a concurrent claim reads and tries again. */
  static final int MAX_RACE_ROUNDS = 16;

  private static final Logger log = LoggerFactory.getLogger(SqlLockBackend.class);
  private static final String CLAIMED = LockState.CLAIMED.name();
  private static final String DONE = LockState.DONE.name();

  /**
   * Where a driver runs the work of applying a network timeout: on the calling thread (the
   * supported drivers only set a socket option).
   */
  private static final Executor DIRECT = Runnable::run;

  private final DataSource dataSource;
  private final SqlLockBackendSettings settings;
  private final SqlDialect dialect;
  private final SqlStatements sql;
  private final String namespace;
  private final int socketTimeoutMillis;

  private SqlLockBackend(
      DataSource dataSource, SqlLockBackendSettings settings, SqlDialect dialect) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.dialect = dialect;
    this.sql = new SqlStatements(dialect, settings.tableName());
    this.namespace = "SQL table '" + settings.tableName() + "' (" + dialect + ")";
    this.socketTimeoutMillis = (int) settings.socketTimeout().toMillis();
  }

  /**
   * A backend on {@code dataSource} with the {@linkplain SqlLockBackendSettings#defaults()
   * defaults}: table {@value SqlLockBackendSettings#DEFAULT_TABLE_NAME}, dialect detected.
   *
   * @throws LockBackendException if the dialect could not be detected (the database is down)
   * @throws IllegalArgumentException if the database is not one of the supported products
   */
  public static SqlLockBackend create(DataSource dataSource) {
    return create(dataSource, SqlLockBackendSettings.defaults());
  }

  /**
   * A backend on {@code dataSource}. Opens one connection at construction if the dialect must be
   * detected or the table created, none otherwise; the table is then not checked until first use.
   *
   * @param dataSource the pool to borrow connections from; not closed by this backend. Its
   *     connections may be in either auto-commit mode (one in manual mode costs one more round trip
   *     per verb to switch it)
   * @throws LockBackendException if detecting the dialect or creating the table failed in the store
   * @throws IllegalArgumentException if the database is not one of the supported products and no
   *     dialect was set
   */
  public static SqlLockBackend create(DataSource dataSource, SqlLockBackendSettings settings) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(settings, "settings");
    SqlDialect dialect = settings.dialect().orElse(null);
    if (dialect == null || settings.createTableIfMissing()) {
      String table = settings.tableName();
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
    return new SqlLockBackend(dataSource, settings, dialect);
  }

  /** The dialect this backend speaks. */
  public SqlDialect dialect() {
    return dialect;
  }

  /** The settings this backend was created with. */
  public SqlLockBackendSettings settings() {
    return settings;
  }

  /** {@value #MAX_KEY_BYTES}. */
  @Override
  public int maxKeyBytes() {
    return MAX_KEY_BYTES;
  }

  /**
   * Checks a key before any I/O: the core rules ({@link dev.pubsubworker.core.LockKeys}) with a
   * limit of {@value #MAX_KEY_BYTES} UTF-8 bytes, and on PostgreSQL no U+0000 (its text type cannot
   * store NUL). Other control characters, quotes and any SQL-looking text are fine: keys are bound
   * parameters.
   *
   * @throws IllegalArgumentException naming the problem (never echoing the key)
   */
  @Override
  public void validateKey(String key) {
    TransactionalLockBackend.super.validateKey(key);
    if (dialect == SqlDialect.POSTGRESQL) {
      int nul = key.indexOf('\0');
      if (nul >= 0) {
        throw new IllegalArgumentException(
            "lock key has a NUL character (U+0000) at index "
                + nul
                + "; PostgreSQL text cannot store it");
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement on PostgreSQL and MariaDB; a read and a write (insert or compare-and-set) on
   * MySQL and H2 when the claim wins, the read alone when it does not. A claim that loses a race to
   * a concurrent one reads again.
   *
   * @throws IllegalArgumentException also if the fingerprint contains NUL on PostgreSQL
   */
  @Override
  public ClaimResult claim(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    validateKey(request.key());
    if (dialect == SqlDialect.POSTGRESQL
        && request.fingerprint() != null
        && request.fingerprint().indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          "fingerprint has a NUL character (U+0000); PostgreSQL text cannot store it");
    }
    return execute(
        "claim",
        c ->
            switch (dialect) {
              case POSTGRESQL -> claimInOneStatement(c, request);
              case MARIADB -> claimInOneMariaDbStatement(c, request);
              case MYSQL, H2 -> claimByCompareAndSet(c, request);
            });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; on MySQL-family and H2 a second one when the fence does not match, to tell an
   * already DONE record (true) from a stale or missing one (false).
   */
  @Override
  public boolean complete(Claim claim, Duration ttl) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    long ttlMillis = millis(ttl, "ttl");
    return execute(
        "complete",
        c -> {
          SqlTemplate.Params p =
              params(claim.key()).set("ttl", ttlMillis).set("fence", claim.fence());
          if (sql.complete != null) {
            try (PreparedStatement ps = prepare(c, sql.complete, p);
                ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
          if (update(c, sql.markDone, p) > 0) {
            return true;
          }
          // Not CLAIMED under this fence: true only if it is DONE (under any fence).
          StateAndFence now = readState(c, claim.key());
          return now != null && DONE.equals(now.state());
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement.
   */
  @Override
  public void release(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    execute(
        "release", c -> update(c, sql.release, params(claim.key()).set("fence", claim.fence())));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; on MySQL-family and H2 a second one when it matched no row, to tell an
   * unchanged row (a connection counting changed rows only) from a refused extension.
   */
  @Override
  public boolean extend(Claim claim, Duration lease) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    long leaseMillis = millis(lease, "lease");
    return execute(
        "extend",
        c -> {
          SqlTemplate.Params p =
              params(claim.key()).set("lease", leaseMillis).set("fence", claim.fence());
          if (update(c, sql.extend, p) > 0) {
            return true;
          }
          if (dialect == SqlDialect.POSTGRESQL) {
            return false;
          }
          // A MySQL connection with useAffectedRows=true counts changed rows only, and a lease
          // renewed within the same millisecond does not change: ask whether the row matched.
          StateAndFence now = readState(c, claim.key());
          return now != null && CLAIMED.equals(now.state()) && now.fence() == claim.fence();
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; {@code observedAt} is the database clock (plus the test offset) at the read.
   */
  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    return execute(
        "inspect",
        c -> {
          try (PreparedStatement ps = prepare(c, sql.inspect, params(key));
              ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return Optional.empty();
            }
            return Optional.of(
                new LockRecord(
                    key,
                    LockState.valueOf(rs.getString("state")),
                    rs.getLong("fence"),
                    Instant.ofEpochMilli(rs.getLong("lease_expiry")),
                    Instant.ofEpochMilli(rs.getLong("expires_at")),
                    rs.getString("claim_token"),
                    rs.getString("fingerprint"),
                    Instant.ofEpochMilli(rs.getLong("now_ms"))));
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code DELETE}.
   */
  @Override
  public boolean forget(String key) {
    validateKey(key);
    return execute("forget", c -> update(c, sql.forget, params(key)) > 0);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code DELETE} over the {@code expires_at} index; on PostgreSQL rows locked by a
   * concurrent verb are skipped ({@code SKIP LOCKED}) and left for the next call.
   */
  @Override
  public int purgeExpired(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, but was " + limit);
    }
    return execute(
        "purgeExpired",
        c ->
            update(
                c,
                sql.purge,
                new SqlTemplate.Params().set("offset", offset()).set("limit", limit)));
  }

  /**
   * Runs {@code body} on one connection inside one transaction, then, as the transaction's last
   * statement, marks the claim DONE until now + ttl if the record is still CLAIMED under the
   * claim's fence, and commits. The work sees the connection through {@code
   * WorkContext.resource(java.sql.Connection.class)}.
   *
   * <p><b>Guaranteed:</b> the work's writes through that connection and the DONE record commit
   * together or not at all.
   *
   * <ul>
   *   <li>The work returns and the fence still matches: both commit ({@code COMMITTED}).
   *   <li>The work throws: both roll back, the exception propagates, and the guard releases the
   *       claim, so the key is reclaimable at once.
   *   <li>The fence is stale (the lease lapsed and another claim took the key, or the key was
   *       forgotten): both roll back ({@code FENCED_OUT_ROLLED_BACK}); the new holder runs the
   *       work.
   *   <li>The process or the connection dies before the commit: the database rolls both back; the
   *       key is claimable again once the lease lapses.
   *   <li>The commit itself fails with an unknown outcome: a {@link LockBackendException}; the
   *       writes and DONE either both exist or neither does.
   * </ul>
   *
   * <p><b>Not guaranteed:</b> anything the work does outside this connection (an HTTP call, an
   * email, writes through another connection or to another database) is not rolled back and stays
   * at-least-once across a crash. The DONE update is the transaction's last statement, so the lock
   * row is locked only from then until the commit and the heartbeat's extensions are not blocked
   * while the work runs. The connection refuses {@code commit()}, {@code rollback()} and {@code
   * setAutoCommit(true)} (savepoints work) and its {@code close()} does nothing. The work should
   * not write this lock table itself. On H2 the DONE record's window starts at the transaction's
   * start, because H2 fixes {@code CURRENT_TIMESTAMP} per transaction.
   *
   * <p>Statements: the work's own, plus one {@code UPDATE} and the commit (plus switching
   * auto-commit off and back on, which is a round trip each on MySQL/MariaDB and free on
   * PostgreSQL). Transient errors are not retried here: the work cannot be replayed.
   *
   * @throws Exception whatever the body threw, after the rollback
   * @throws LockBackendException if the transaction could not begin, mark DONE or commit
   */
  @Override
  public <T> Result<T> runAndComplete(Claim claim, Duration ttl, TransactionBody<T> body)
      throws Exception {
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(body, "body");
    validateKey(claim.key());
    long ttlMillis = millis(ttl, "ttl");
    String verb = "runAndComplete";
    Connection c;
    boolean autoCommit;
    try {
      c = dataSource.getConnection();
    } catch (SQLException e) {
      throw failure(verb, e);
    }
    try {
      // Our statements (beginning, DONE, commit) are bounded by the socket timeout; the work's own
      // run with the pool's network timeout, as they would on any other connection of the pool.
      int poolNetworkTimeout = networkTimeoutOf(c);
      boundSocket(c);
      autoCommit = c.getAutoCommit();
      if (autoCommit) {
        c.setAutoCommit(false);
      }
      setNetworkTimeout(c, poolNetworkTimeout);
    } catch (SQLException e) {
      closeQuietly(c, e);
      throw failure(verb, e);
    }
    WorkConnection work = WorkConnection.wrap(c);
    try {
      T value;
      try {
        value = body.run(work.proxy());
      } catch (Throwable t) {
        work.end();
        boundSocketQuietly(c, t);
        rollbackQuietly(c, t);
        throw t;
      }
      work.end();
      try {
        boundSocket(c);
      } catch (SQLException e) {
        rollbackQuietly(c, e);
        throw failure(verb + " (bounding the connection; the work's writes were rolled back)", e);
      }
      int marked;
      try {
        marked =
            update(
                c,
                sql.markDone,
                params(claim.key()).set("ttl", ttlMillis).set("fence", claim.fence()));
      } catch (SQLException e) {
        rollbackQuietly(c, e);
        throw failure(verb + " (marking DONE; the work's writes were rolled back)", e);
      }
      if (marked == 0) {
        try {
          c.rollback();
        } catch (SQLException e) {
          throw failure(verb + " (rolling back after a stale fence)", e);
        }
        return new Result<>(value, TransactionOutcome.FENCED_OUT_ROLLED_BACK);
      }
      try {
        c.commit();
      } catch (SQLException e) {
        rollbackQuietly(c, e);
        throw failure(
            verb + " (commit; the work's writes and DONE either both committed or neither did)", e);
      }
      return new Result<>(value, TransactionOutcome.COMMITTED);
    } finally {
      work.end();
      try {
        if (autoCommit && !c.isClosed()) {
          c.setAutoCommit(true);
        }
      } catch (SQLException e) {
        log.debug(
            "{}: could not restore auto-commit on {}; the pool resets it", verb, namespace, e);
      }
      closeQuietly(c, null);
    }
  }

  /** Leaves the {@link DataSource} open: it belongs to the caller. */
  @Override
  public void close() {}

  @Override
  public String toString() {
    return "SqlLockBackend{" + namespace + "}";
  }

  // ---------------------------------------------------------------------------------------------
  // claim, per dialect
  // ---------------------------------------------------------------------------------------------

  /**
   * PostgreSQL: the upsert wins, or the same statement returns the row as its snapshot saw it. No
   * row at all means a concurrent claim inserted the key after the snapshot was taken; a
   * reclaimable snapshot row that the upsert did not take means a concurrent claim took it first.
   * Both are asked again.
   */
  private ClaimResult claimInOneStatement(Connection c, ClaimRequest r) throws SQLException {
    for (int round = 0; round < MAX_RACE_ROUNDS; round++) {
      try (PreparedStatement ps = prepare(c, sql.claim, claimParams(r));
          ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          log.debug("claim on {}: the key was inserted concurrently; asking again", namespace);
          continue;
        }
        if (rs.getBoolean("won")) {
          return won(r, rs.getLong("fence"), rs.getLong("lease_expiry"));
        }
        ClaimResult answer =
            contended(
                rs.getString("state"),
                rs.getLong("now_ms"),
                rs.getLong("lease_expiry"),
                rs.getLong("expires_at"),
                rs.getString("fingerprint"));
        if (answer != null) {
          return answer;
        }
        log.debug("claim on {}: a concurrent claim took the key first; asking again", namespace);
      }
    }
    throw raceLost();
  }

  /** MariaDB: one upsert that returns the row as it now stands; this token on CLAIMED means won. */
  private ClaimResult claimInOneMariaDbStatement(Connection c, ClaimRequest r) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql.claim, claimParams(r));
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("INSERT ... RETURNING returned no row");
      }
      String state = rs.getString("state");
      long fence = rs.getLong("fence");
      long leaseExpiry = rs.getLong("lease_expiry");
      String fingerprint = rs.getString("fingerprint");
      if (CLAIMED.equals(state) && r.claimToken().equals(rs.getString("claim_token"))) {
        return won(r, fence, leaseExpiry);
      }
      if (CLAIMED.equals(state)) {
        return new ClaimResult.HeldByOther(Instant.ofEpochMilli(leaseExpiry), fingerprint);
      }
      return new ClaimResult.AlreadyDone(fingerprint);
    }
  }

  /**
   * MySQL and H2: read the row and the clock, decide, then insert (the unique key lets only one of
   * several claimers that all saw it absent succeed) or overwrite the row only if it is still
   * exactly as read. Losing either race means another claim changed the row: read again.
   */
  private ClaimResult claimByCompareAndSet(Connection c, ClaimRequest r) throws SQLException {
    long leaseMillis = r.lease().toMillis();
    long ttlMillis = r.ttl().toMillis();
    for (int round = 0; round < MAX_RACE_ROUNDS; round++) {
      long now;
      String state;
      long fence;
      long leaseExpiry;
      long expiresAt;
      String token;
      String fingerprint;
      try (PreparedStatement ps = prepare(c, sql.claimRead, params(r.key()));
          ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the clock query returned no row");
        }
        now = rs.getLong("now_ms");
        state = rs.getString("state");
        fence = rs.getLong("fence");
        leaseExpiry = rs.getLong("lease_expiry");
        expiresAt = rs.getLong("expires_at");
        token = rs.getString("claim_token");
        fingerprint = rs.getString("fingerprint");
      }
      long newLease = now + leaseMillis;
      long newExpires = newLease + ttlMillis;
      if (state == null) {
        try {
          update(
              c,
              sql.claimInsert,
              params(r.key())
                  .set("lease_expiry", newLease)
                  .set("expires_at", newExpires)
                  .set("token", r.claimToken())
                  .set("fingerprint", r.fingerprint()));
          return won(r, 1, newLease);
        } catch (SQLException e) {
          if (SqlErrors.isDuplicateKey(e)) {
            // Both saw the key absent and the other claim inserted first.
            log.debug("claim on {}: the key was inserted concurrently; asking again", namespace);
            continue;
          }
          throw e;
        }
      }
      long newFence;
      if (CLAIMED.equals(state) && r.claimToken().equals(token) && now < expiresAt) {
        newFence = fence; // The caller's own claim, retried: same fence, lease renewed.
        if (leaseExpiry == newLease
            && expiresAt == newExpires
            && Objects.equals(fingerprint, r.fingerprint())) {
          return won(r, fence, newLease); // Already exactly so; an UPDATE would change nothing.
        }
      } else {
        ClaimResult answer = contended(state, now, leaseExpiry, expiresAt, fingerprint);
        if (answer != null) {
          return answer;
        }
        newFence = fence + 1;
      }
      int updated =
          update(
              c,
              sql.claimUpdate,
              params(r.key())
                  .set("new_fence", newFence)
                  .set("lease_expiry", newLease)
                  .set("expires_at", newExpires)
                  .set("token", r.claimToken())
                  .set("fingerprint", r.fingerprint())
                  .set("old_state", state)
                  .set("old_fence", fence)
                  .set("old_lease_expiry", leaseExpiry)
                  .set("old_expires_at", expiresAt));
      if (updated > 0) {
        return won(r, newFence, newLease);
      }
      log.debug("claim on {}: the record changed since it was read; asking again", namespace);
    }
    throw raceLost();
  }

  /** HeldByOther or AlreadyDone for a live record; null if it is reclaimable. */
  private static ClaimResult contended(
      String state, long now, long leaseExpiry, long expiresAt, String fingerprint) {
    if (CLAIMED.equals(state) && now < leaseExpiry) {
      return new ClaimResult.HeldByOther(Instant.ofEpochMilli(leaseExpiry), fingerprint);
    }
    if (DONE.equals(state) && now < expiresAt) {
      return new ClaimResult.AlreadyDone(fingerprint);
    }
    return null;
  }

  private SqlTemplate.Params claimParams(ClaimRequest r) {
    return params(r.key())
        .set("lease", r.lease().toMillis())
        .set("ttl", r.ttl().toMillis())
        .set("token", r.claimToken())
        .set("fingerprint", r.fingerprint());
  }

  private static ClaimResult won(ClaimRequest r, long fence, long leaseExpiry) {
    return new ClaimResult.Won(
        new Claim(r.key(), fence, Instant.ofEpochMilli(leaseExpiry), r.claimToken()));
  }

  private LockBackendException raceLost() {
    return new LockBackendException(
        "claim failed on "
            + namespace
            + ": lost "
            + MAX_RACE_ROUNDS
            + " races in a row to concurrent claims on the same key");
  }

  // ---------------------------------------------------------------------------------------------
  // plumbing
  // ---------------------------------------------------------------------------------------------

  /** One SQL step of a verb, on a borrowed connection in auto-commit mode. */
  @FunctionalInterface
  private interface SqlCall<R> {
    R run(Connection c) throws SQLException;
  }

  private record StateAndFence(String state, long fence) {}

  /**
   * Runs a verb on a pooled connection, retrying it as a whole after a transient error (each
   * statement of a verb commits on its own and is safe to repeat: the claim token makes a claim
   * idempotent, the fence the other verbs).
   */
  private <R> R execute(String verb, SqlCall<R> call) {
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

  private StateAndFence readState(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql.readState, params(key));
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? new StateAndFence(rs.getString("state"), rs.getLong("fence")) : null;
    }
  }

  private int update(Connection c, SqlTemplate template, SqlTemplate.Params p) throws SQLException {
    try (PreparedStatement ps = prepare(c, template, p)) {
      return ps.executeUpdate();
    }
  }

  /** Prepares one of this backend's statements, bounded by the statement timeout. */
  private PreparedStatement prepare(Connection c, SqlTemplate template, SqlTemplate.Params p)
      throws SQLException {
    PreparedStatement ps = template.prepare(c, p);
    try {
      ps.setQueryTimeout(settings.statementTimeoutSeconds());
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /**
   * Bounds every wait for the database's bytes on {@code c} by the socket timeout. A driver that
   * cannot (none of the supported ones) leaves it to the pool's own settings.
   */
  private void boundSocket(Connection c) throws SQLException {
    setNetworkTimeout(c, socketTimeoutMillis);
  }

  private static void setNetworkTimeout(Connection c, int millis) throws SQLException {
    try {
      c.setNetworkTimeout(DIRECT, millis);
    } catch (SQLFeatureNotSupportedException e) {
      log.debug("the JDBC driver has no network timeout; the pool's settings apply");
    }
  }

  /** The connection's network timeout in milliseconds, 0 for none (or a driver without one). */
  private static int networkTimeoutOf(Connection c) throws SQLException {
    try {
      return c.getNetworkTimeout();
    } catch (SQLFeatureNotSupportedException e) {
      return 0;
    }
  }

  /** Parameters with the key (as text or UTF-8 bytes, per dialect) and the clock offset. */
  private SqlTemplate.Params params(String key) {
    SqlTemplate.Params p = new SqlTemplate.Params().set("offset", offset());
    return dialect.storesKeysAsBytes()
        ? p.set("key", key.getBytes(StandardCharsets.UTF_8))
        : p.set("key", key);
  }

  private long offset() {
    return settings.clockOffsetMillis().getAsLong();
  }

  private LockBackendException failure(String verb, SQLException e) {
    return new LockBackendException(verb + " failed on " + namespace + stateOf(e), e);
  }

  private static String stateOf(SQLException e) {
    return e.getSQLState() == null ? "" : " (SQLState " + e.getSQLState() + ")";
  }

  private static void pause(int attempt) {
    long maxMillis = 10L << Math.min(attempt, 6);
    LockSupport.parkNanos(
        TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(1, maxMillis + 1)));
  }

  private static long millis(Duration d, String name) {
    Objects.requireNonNull(d, name);
    long ms = d.toMillis();
    if (ms < 1) {
      throw new IllegalArgumentException(name + " must be >= 1ms, but was " + d);
    }
    return ms;
  }

  private void boundSocketQuietly(Connection c, Throwable primary) {
    try {
      boundSocket(c);
    } catch (SQLException e) {
      primary.addSuppressed(e);
    }
  }

  /**
   * Rolls back; if that fails (the database stopped answering), aborts the connection, so that
   * nothing later on it — restoring auto-commit, which commits an open transaction, or the pool's
   * reset — can commit the work's writes and DONE after this call reported them rolled back.
   */
  private void rollbackQuietly(Connection c, Throwable primary) {
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

  private void closeQuietly(Connection c, Throwable primary) {
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
            + " SqlLockBackendSettings.Builder.dialect to force one)");
  }
}
