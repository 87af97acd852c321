package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.DurationChecks;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.TransactionalLockBackend;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * A {@link dev.pubsubworker.core.LockBackend} on a SQL table, over a JDBC {@link DataSource} the
 * caller owns (a HikariCP pool, typically): PostgreSQL, MySQL/MariaDB and H2 ({@link SqlDialect}).
 * Also the {@link LockAdmin} of that table and a {@link TransactionalLockBackend}.
 *
 * <pre>{@code
 * SqlLockBackend backend =
 *     SqlLockBackend.create(
 *         SqlLockSettings.newBuilder()
 *             .dataSource(hikariDataSource)
 *             .table("pubsub_worker_locks")
 *             .build());
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
 *   <tr><td>claim</td><td>1 on an absent key; 2 (insert, then the upsert) when the key exists,
 *       1 while most claims find it existing</td><td>1</td><td>2 (read, then insert or
 *       compare-and-set); 1 when held or done</td></tr>
 *   <tr><td>complete</td><td>1; 2 when the fence does not match</td><td>1; 2 when the fence does
 *       not match</td><td>1; 2 when the fence does not match</td></tr>
 *   <tr><td>release</td><td>1; 2 when a no-op</td><td>1; 2 when a no-op</td><td>1; 2 when a
 *       no-op</td></tr>
 *   <tr><td>extend</td><td>1; 2 when refused</td><td>1; 2 when refused</td><td>1; 2 when
 *       refused</td></tr>
 *   <tr><td>inspect, forget, purgeExpired</td><td>1</td><td>1</td><td>1</td></tr>
 * </table>
 *
 * A claim that loses a race (a concurrent claim changed the row between its read and its write)
 * reads again, at most 16 times. Keys are always bound parameters.
 *
 * <h2>Rows read strictly</h2>
 *
 * Every statement that writes requires the row to be readable ({@link
 * dev.pubsubworker.core.LockBackend}, "Reading strictly": state exactly {@code 'CLAIMED'} or {@code
 * 'DONE'}, compared byte-wise on MySQL-family whatever the column's collation; fence, times and
 * claim token in range; no NULL where the DDL says NOT NULL), so none writes over an unreadable
 * row, and every row a verb reads to decide (the one a claim found live, the one a write did not
 * match) is read strictly: the verb throws {@link dev.pubsubworker.core.InvalidLockRecordException}
 * for that key, in a batch for that entry only. The shipped DDL's {@code CHECK} on {@code state}
 * (PostgreSQL, H2) keeps most of them out in the first place; a table created from other DDL is
 * read the same way. A reclaim or release at {@link dev.pubsubworker.core.LockBackend#MAX_FENCE}
 * writes fence 1.
 *
 * <h2>Batch verbs</h2>
 *
 * A {@link BatchLockBackend}: {@link #claimAll} and {@link #completeAll} decide up to {@value
 * #MAX_BATCH_SIZE} entries, each exactly as its single verb, in one round trip and one commit on
 * PostgreSQL (a claim statement; the completes as one JDBC batch) and MariaDB (one statement;
 * MySQL: an upsert and a read in one transaction; H2: the single claim's statements per entry in
 * one transaction). See their documentation for the statements. The guard keeps one batch of a verb
 * in flight ({@link #maxConcurrentBatches()}), so concurrent callers share the next commit.
 *
 * <h2>Errors</h2>
 *
 * Keys are checked before any I/O ({@link #validateKey}): 1 to {@value #MAX_KEY_BYTES} UTF-8 bytes,
 * well-formed, and on PostgreSQL free of U+0000. Transient store errors (serialization failure,
 * deadlock, lock timeout; classified by SQLState in one place) are retried inside the verb up to
 * {@link SqlLockSettings#transientRetries()} times; every other failure, and a transient one that
 * outlasts the retries, is a {@link LockBackendException} naming the verb and the table (never the
 * key), with the driver's exception as its cause.
 *
 * <p>No statement of this backend waits forever: each runs under {@link
 * SqlLockSettings#statementTimeout()} (on PostgreSQL the server's {@code statement_timeout}, set
 * for that statement's transaction in the same round trip; elsewhere {@link
 * java.sql.Statement#setQueryTimeout}) and on a connection whose reads give up after {@link
 * SqlLockSettings#socketTimeout()} ({@link Connection#setNetworkTimeout}, set whenever the backend
 * borrows or takes back a connection), which also frees the caller when the database stops
 * answering altogether. Either timeout is a {@link LockBackendException} too, not retried. Getting
 * a connection is bounded by the {@link DataSource} (its pool's connection timeout).
 *
 * <h2>Transactional mode</h2>
 *
 * See {@link #runAndComplete}: the work runs on the connection and inside the transaction that then
 * writes DONE, so the work's writes to this database and its DONE record commit together or not at
 * all.
 *
 * <p>Thread-safe and stateless apart from the {@link DataSource}; one instance serves a process.
 * {@link #close()} leaves the {@link DataSource} open: it belongs to the caller.
 *
 * <p>This class holds the verbs' semantics; the plumbing is package-private: the table access
 * (connections, timeouts, retries) in {@code LockTable}, the claim of each dialect in a {@code
 * ClaimStrategy}, the transactional mode in {@code TransactionalRun}.
 */
public final class SqlLockBackend implements TransactionalLockBackend, BatchLockBackend, LockAdmin {

  /** The longest key accepted, in UTF-8 bytes: {@value}. The DDL's key column is sized for it. */
  public static final int MAX_KEY_BYTES = 1024;

  /** The most entries of one {@link #claimAll} or {@link #completeAll} batch: {@value}. */
  public static final int MAX_BATCH_SIZE = SqlStatements.MAX_BATCH;

  private final LockTable table;
  private final SqlDialect dialect;
  private final SqlStatements sql;
  private final ClaimStrategy claims;
  private final TransactionalRun transactions;
  private final BatchVerbs batches;

  private SqlLockBackend(LockTable table) {
    this.table = table;
    this.dialect = table.dialect();
    this.sql = table.sql();
    this.claims = ClaimStrategy.of(table);
    this.transactions = new TransactionalRun(table);
    this.batches = new BatchVerbs(table, claims);
  }

  /**
   * A backend on the {@linkplain SqlLockSettings#dataSource() data source} of {@code settings}.
   * Opens one connection at construction if the dialect must be detected or the table created, none
   * otherwise; the table is then not checked until first use.
   *
   * @throws NullPointerException if settings is null
   * @throws IllegalArgumentException if the settings have no data source, or the database is not
   *     one of the supported products and no dialect was set
   * @throws LockBackendException if detecting the dialect or creating the table failed in the store
   */
  public static SqlLockBackend create(SqlLockSettings settings) {
    Objects.requireNonNull(settings, "settings");
    return new SqlLockBackend(LockTable.open(settings));
  }

  /** The dialect this backend speaks. */
  public SqlDialect dialect() {
    return dialect;
  }

  /** The settings this backend was created with. */
  public SqlLockSettings settings() {
    return table.settings();
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
    validateClaim(request);
    return table.execute("claim", c -> claims.claim(c, request));
  }

  private void validateClaim(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    validateKey(request.key());
    if (dialect == SqlDialect.POSTGRESQL
        && request.fingerprint() != null
        && request.fingerprint().indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          "fingerprint has a NUL character (U+0000); PostgreSQL text cannot store it");
    }
  }

  /** {@value #MAX_BATCH_SIZE}. */
  @Override
  public int maxBatchSize() {
    return MAX_BATCH_SIZE;
  }

  /**
   * 1: classic group commit, one batch of a verb in flight while the next one gathers. Every batch
   * ends in a durable commit, whose flush dominates its latency and costs the server far more than
   * one more entry does, so callers gain more from sharing the next commit than from sending their
   * own beside the one in flight. Measured with the end-to-end benchmark on PostgreSQL (20 handler
   * threads, 2 cores): 1 in flight drained 1.6 times as fast as 8, and 1.1 times as fast as 2.
   */
  @Override
  public int maxConcurrentBatches() {
    return 1;
  }

  /**
   * 8: when round trips are long for a reason other than the server's work (a network between the
   * worker and the database), the guard lets up to 8 calls of a verb (each a connection of the
   * pool) run side by side instead of serialising every caller behind one batch's round trip; while
   * the server's commits or CPU are the bottleneck, round trips lengthen with their number and the
   * guard stays at 1, sharing commits.
   */
  @Override
  public int maxConcurrentCalls() {
    return 8;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The entries with a valid key (and, on PostgreSQL, a fingerprint without NUL) are written in
   * key order, so that concurrent batches take row locks in the same order; the others fail alone
   * with the {@link IllegalArgumentException} {@link #claim} would throw. Statements per batch:
   *
   * <ul>
   *   <li>PostgreSQL: one ({@code INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE ...
   *       RETURNING} joined with the rows its snapshot saw, each looked up by key); a further one
   *       for the entries that lost a race to a concurrent claim, as the single claim asks again.
   *   <li>MariaDB: one multi-row {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}.
   *   <li>MySQL: that upsert and one {@code SELECT} of the rows, in one transaction.
   *   <li>H2: the single claim's statements for every entry, in one transaction.
   * </ul>
   *
   * One commit per batch in every dialect. A deadlock or serialization failure is retried as for
   * the single verbs ({@link SqlLockSettings#transientRetries()}); an entry that loses {@value
   * ClaimStrategy#MAX_RACE_ROUNDS} races in a row fails alone with a {@link LockBackendException}.
   */
  @Override
  public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    return run(requests, ClaimRequest::key, this::validateClaim, valid -> batches.claimAll(valid));
  }

  /**
   * {@inheritDoc}
   *
   * <p>PostgreSQL: the single complete's {@code UPDATE} once per claim, sent as one JDBC batch (one
   * round trip, one implicit transaction), and a read of each claim it did not match, to tell an
   * entry already DONE (true) from a stale claim (false). MariaDB, MySQL and H2: one {@code UPDATE}
   * over all claims, and, only when it marked fewer than all of them, one {@code SELECT} to tell
   * them apart. One commit per batch. An entry whose DONE window (its {@code ttl}) runs out and is
   * reclaimed between the update and the read reads false there.
   */
  @Override
  public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    return run(
        requests,
        r -> r.claim().key(),
        r -> validateKey(r.claim().key()),
        valid -> batches.completeAll(valid));
  }

  /**
   * Checks the batch as a whole (before any I/O), fails the entries whose own checks fail, and runs
   * the others, sorted by key, as one batch; maps the results back to request order.
   */
  private <Q, T> List<BatchResult<T>> run(
      List<Q> requests,
      Function<Q, String> keyOf,
      Consumer<Q> validate,
      Function<List<Q>, List<BatchResult<T>>> batch) {
    Objects.requireNonNull(requests, "requests");
    if (requests.isEmpty() || requests.size() > MAX_BATCH_SIZE) {
      throw new IllegalArgumentException(
          "a batch has 1 to " + MAX_BATCH_SIZE + " entries, but this one has " + requests.size());
    }
    Set<String> keys = new HashSet<>();
    for (Q r : requests) {
      Objects.requireNonNull(r, "a batch entry is null");
      if (!keys.add(Objects.requireNonNull(keyOf.apply(r), "key"))) {
        throw new IllegalArgumentException("a batch has two entries for the same key");
      }
    }
    List<BatchResult<T>> out = new ArrayList<>(requests.size());
    List<Integer> valid = new ArrayList<>(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      out.add(null);
      try {
        validate.accept(requests.get(i));
        valid.add(i);
      } catch (IllegalArgumentException e) {
        out.set(i, BatchResult.failed(e));
      }
    }
    if (valid.isEmpty()) {
      return out;
    }
    valid.sort(Comparator.comparing(i -> keyOf.apply(requests.get(i))));
    List<BatchResult<T>> results = batch.apply(valid.stream().map(requests::get).toList());
    for (int j = 0; j < valid.size(); j++) {
      out.set(valid.get(j), results.get(j));
    }
    return out;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; a second one when the fence does not match, to tell an already DONE record
   * (true) from a stale or missing one (false) and from an unreadable one.
   */
  @Override
  public boolean complete(Claim claim, Duration ttl) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    long ttlMillis = DurationChecks.requireAtLeastOneMilli("ttl", ttl).toMillis();
    return table.execute(
        "complete",
        c -> {
          SqlTemplate.Params p =
              table.params(claim.key()).set("ttl", ttlMillis).set("fence", claim.fence());
          if (table.update(c, sql.markDone, p) > 0) {
            return true;
          }
          // Not CLAIMED under this fence: true only if it is DONE (under any fence).
          LockRecord now = table.readRecord(c, claim.key(), "complete");
          return now != null && now.state() == LockState.DONE;
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; a second one, to tell an unreadable row from a no-op, when it matched none.
   */
  @Override
  public void release(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    table.execute(
        "release",
        c -> {
          if (table.update(c, sql.release, table.params(claim.key()).set("fence", claim.fence()))
              == 0) {
            // A no-op (stale, DONE, absent), unless the row is unreadable: then say so.
            table.readRecord(c, claim.key(), "release");
          }
          return null;
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; a second one when it matched no row, to tell an unreadable row from a refused
   * extension, and on MySQL-family and H2 an unchanged row (a connection counting changed rows
   * only) from a refused one.
   */
  @Override
  public boolean extend(Claim claim, Duration lease) {
    Objects.requireNonNull(claim, "claim");
    validateKey(claim.key());
    long leaseMillis = DurationChecks.requireAtLeastOneMilli("lease", lease).toMillis();
    return table.execute(
        "extend",
        c -> {
          SqlTemplate.Params p =
              table.params(claim.key()).set("lease", leaseMillis).set("fence", claim.fence());
          if (table.update(c, sql.extend, p) > 0) {
            return true;
          }
          // Refused, unless the row is unreadable (then say so). And a MySQL connection with
          // useAffectedRows=true counts changed rows only, and a lease renewed within the same
          // millisecond does not change: ask whether the row matched.
          LockRecord now = table.readRecord(c, claim.key(), "extend");
          return dialect != SqlDialect.POSTGRESQL
              && now != null
              && now.state() == LockState.CLAIMED
              && now.fence() == claim.fence();
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement; {@code observedAt} is the database clock (plus the test offset) at the read.
   * An unreadable row's stored fields are its non-NULL columns, as text, by the record's field
   * names ({@code lease_expiry} as {@code leaseExpiry}, and so on).
   */
  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    return table.execute("inspect", c -> Optional.ofNullable(table.readRecord(c, key, "inspect")));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code DELETE}.
   */
  @Override
  public boolean forget(String key) {
    validateKey(key);
    return table.execute("forget", c -> table.update(c, sql.forget, table.params(key)) > 0);
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
    return table.execute(
        "purgeExpired",
        c ->
            table.update(
                c,
                sql.purge,
                new SqlTemplate.Params().set("offset", table.offset()).set("limit", limit)));
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
    long ttlMillis = DurationChecks.requireAtLeastOneMilli("ttl", ttl).toMillis();
    return transactions.run(claim, ttlMillis, body);
  }

  /** Leaves the {@link DataSource} open: it belongs to the caller. */
  @Override
  public void close() {}

  @Override
  public String toString() {
    return "SqlLockBackend{" + table.namespace() + "}";
  }
}
