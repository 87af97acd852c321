package dev.pubsubworker.backend.datastore;

import com.google.cloud.NoCredentials;
import com.google.cloud.ServiceOptions;
import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.DatastoreOptions;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.KeyFactory;
import com.google.cloud.datastore.Query;
import com.google.cloud.datastore.QueryResults;
import com.google.cloud.datastore.StructuredQuery.PropertyFilter;
import com.google.cloud.datastore.Transaction;
import com.google.cloud.http.HttpTransportOptions;
import com.google.datastore.v1.TransactionOptions;
import com.google.protobuf.ByteString;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LockBackend} and {@link LockAdmin} on Firestore in Datastore mode (and legacy Cloud
 * Datastore), through {@code google-cloud-datastore} (its default HTTP transport).
 *
 * <h2>Data layout</h2>
 *
 * One entity per lock key, of the configured kind in the configured namespace and database, named
 * after the key ({@link KeyNames}: verbatim, except that a key of the reserved form {@code __*__}
 * or starting with {@code ~} is stored with one {@code ~} prepended). Properties: {@code state}
 * (string CLAIMED|DONE), {@code fence} (integer), {@code leaseExpiry} (timestamp), {@code
 * expiresAt} (timestamp, the only indexed property, suitable for a Datastore TTL policy), {@code
 * claimToken} (string, absent once released), {@code fingerprint} (string, optional). Times are
 * stored at millisecond precision.
 *
 * <h2>Transactions and retries</h2>
 *
 * Every mutating verb is one read-write transaction: begin, lookup, decide (SPEC §3) against the
 * configured {@link Clock}, then commit the change or roll back when nothing changes. A transaction
 * that fails with contention (ABORTED) or a transient error (UNAVAILABLE, DEADLINE_EXCEEDED,
 * INTERNAL, RESOURCE_EXHAUSTED) is retried with jittered exponential backoff, up to {@link
 * DatastoreLockSettings#maxAttempts()} attempts; a retry after ABORTED names the aborted
 * transaction so Firestore keeps its lock priority. Any other error, or an exhausted budget, is a
 * {@link LockBackendException} with the cause, except for {@code claim}: when its budget is
 * exhausted it reads the record once more (outside a transaction) and answers {@code HeldByOther}
 * or {@code AlreadyDone} only if that read shows a live record, or {@code Won} if the read shows
 * that an earlier attempt of this very call committed (same claim token). An outage therefore
 * always surfaces as an exception, never as "held by another".
 *
 * <h2>RPCs per verb (no contention)</h2>
 *
 * {@code claim}, {@code complete}, {@code release}, {@code extend} and {@code forget}: 3 (begin,
 * lookup, then commit or rollback); {@code inspect}: 1 lookup; {@code purgeExpired(n)}: 1 query
 * plus 3 per batch of up to {@value #PURGE_BATCH_SIZE} expired records. Each retry repeats the
 * transaction's RPCs (its failed rollback included); an exhausted {@code claim} adds one lookup.
 *
 * <h2>Keys, clock, threads</h2>
 *
 * Keys of up to {@value #MAX_KEY_BYTES} UTF-8 bytes; longer, empty or ill-formed keys are rejected
 * before any I/O. Expiry is judged on {@link DatastoreLockSettings#clock()}: Datastore has no
 * server clock a transaction can read, so workers sharing a kind must keep their clocks
 * synchronised (see the module README for the skew this tolerates). Thread-safe: one instance
 * serves the whole process.
 */
public final class DatastoreLockBackend implements LockBackend, LockAdmin {

  /**
   * The longest key accepted, in UTF-8 bytes: Datastore's 1,500-byte name limit less the one byte
   * an escaped key needs.
   */
  public static final int MAX_KEY_BYTES = 1499;

  /** How many in-process locks single-key transactions are spread over. */
  static final int KEY_STRIPES = 1024;

  /**
   * How many expired records one purge transaction re-checks and deletes at most: legacy Datastore
   * (and its emulator) allow 25 entity groups per transaction.
   */
  static final int PURGE_BATCH_SIZE = 25;

  private static final Logger log = LoggerFactory.getLogger(DatastoreLockBackend.class);

  private final DatastoreLockSettings settings;
  private final Datastore datastore;
  private final KeyFactory keyFactory;
  private final Clock clock;
  private final String where;
  private final RpcCounters rpcs = new RpcCounters();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ReentrantLock[] stripes = new ReentrantLock[KEY_STRIPES];

  /**
   * Opens a backend with its own Datastore client. No RPC is made here: an unreachable service
   * shows on the first verb, as a {@link LockBackendException}.
   *
   * @throws NullPointerException if settings is null
   * @throws IllegalStateException if no project id was set and none can be found in the environment
   */
  public DatastoreLockBackend(DatastoreLockSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.clock = settings.clock();
    for (int i = 0; i < KEY_STRIPES; i++) {
      stripes[i] = new ReentrantLock();
    }
    this.datastore = openClient(settings);
    this.keyFactory =
        datastore.newKeyFactory().setKind(settings.kind()).setNamespace(settings.namespace());
    this.where =
        "datastore kind '"
            + settings.kind()
            + "' (namespace '"
            + settings.namespace()
            + "', database '"
            + (settings.databaseId().isEmpty() ? "(default)" : settings.databaseId())
            + "')";
  }

  private static Datastore openClient(DatastoreLockSettings s) {
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, s.rpcTimeout().toMillis());
    // The client's default HTTP transport: its gRPC transport is experimental in this version and
    // ignores an emulator host (googleapis/java-datastore#2022). One attempt per RPC, bounded by
    // the
    // connect and read timeouts: retries happen once, in this class, around whole transactions.
    DatastoreOptions.Builder b =
        DatastoreOptions.newBuilder()
            .setTransportOptions(
                HttpTransportOptions.newBuilder()
                    .setConnectTimeout(timeoutMillis)
                    .setReadTimeout(timeoutMillis)
                    .build())
            .setRetrySettings(ServiceOptions.getNoRetrySettings())
            .setDatabaseId(s.databaseId())
            .setNamespace(s.namespace());
    if (s.projectId() != null) {
      b.setProjectId(s.projectId());
    }
    if (s.emulatorHost().isPresent()) {
      b.setHost("http://" + s.emulatorHost().get()).setCredentials(NoCredentials.getInstance());
    } else {
      s.credentials().ifPresent(b::setCredentials);
    }
    DatastoreOptions options;
    try {
      options = b.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "cannot configure the Datastore client (set a project id, or GOOGLE_CLOUD_PROJECT): "
              + e.getMessage(),
          e);
    }
    if (options.getProjectId() == null || options.getProjectId().isBlank()) {
      throw new IllegalStateException(
          "no Google Cloud project id: set DatastoreLockSettings.Builder.setProjectId or"
              + " GOOGLE_CLOUD_PROJECT");
    }
    return options.getService();
  }

  /** The settings this backend was opened with. */
  public DatastoreLockSettings settings() {
    return settings;
  }

  @Override
  public int maxKeyBytes() {
    return MAX_KEY_BYTES;
  }

  // ---------------------------------------------------------------------------------------------
  // The port.
  // ---------------------------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>One read-write transaction (begin, lookup, commit; rollback instead of commit when the
   * answer is HeldByOther or AlreadyDone), retried on contention and transient errors within the
   * retry budget. When the budget is exhausted, one more lookup decides: a live record held by
   * another claim gives HeldByOther, a live DONE record AlreadyDone, this call's own committed
   * claim Won; anything else (absent, reclaimable, the read failing) a {@link
   * LockBackendException}.
   */
  @Override
  public ClaimResult claim(ClaimRequest request) {
    validateKey(request.key());
    Key key = keyOf(request.key());
    try {
      return transact(
          "claim",
          List.of(key),
          (found, now) -> decideClaim(request, key, found, now),
          () -> answerFromRead(request, key));
    } catch (RetriesExhausted exhausted) {
      Optional<ClaimResult> answer;
      try {
        answer = answerFromRead(request, key);
      } catch (RuntimeException readFailure) {
        exhausted.getCause().addSuppressed(readFailure);
        throw exhausted.toBackendException();
      }
      return answer.orElseThrow(exhausted::toBackendException);
    }
  }

  private Decision<ClaimResult> decideClaim(
      ClaimRequest r, Key key, Map<String, Entity> found, Instant now) {
    Entity entity = found.get(key.getName());
    StoredRecord current = entity == null ? null : StoredRecord.fromEntity(entity);
    long fence;
    if (current == null) {
      fence = 1;
    } else if (current.state() == LockState.CLAIMED
        && r.claimToken().equals(current.claimToken())
        && now.isBefore(current.expiresAt())) {
      // The caller's own claim, retried after a lost response: same fence, lease renewed.
      fence = current.fence();
    } else if (current.liveAt(now)) {
      return Decision.readOnly(
          current.state() == LockState.DONE
              ? new ClaimResult.AlreadyDone(current.fingerprint())
              : new ClaimResult.HeldByOther(current.leaseExpiry(), current.fingerprint()));
    } else {
      fence = current.fence() + 1;
    }
    Instant leaseExpiry = now.plusMillis(r.lease().toMillis());
    Instant expiresAt = leaseExpiry.plusMillis(r.ttl().toMillis());
    StoredRecord next =
        new StoredRecord(
            LockState.CLAIMED, fence, leaseExpiry, expiresAt, r.claimToken(), r.fingerprint());
    return Decision.put(
        new ClaimResult.Won(new Claim(r.key(), fence, leaseExpiry, r.claimToken())),
        next.toEntity(key, settings.indexExpiresAt()));
  }

  /**
   * Answers a claim from one plain (strongly consistent, lock-free) lookup when that needs no
   * write: a live record held by another claim (HeldByOther), a live DONE record (AlreadyDone), or
   * this very call's claim, committed by an attempt whose response was lost (Won, as stored). Empty
   * when the claim must be decided in a transaction (absent, reclaimable).
   */
  private Optional<ClaimResult> answerFromRead(ClaimRequest r, Key key) {
    Entity entity = lookup(key);
    Instant now = now();
    if (entity == null) {
      return Optional.empty();
    }
    StoredRecord current = StoredRecord.fromEntity(entity);
    if (current.state() == LockState.CLAIMED
        && r.claimToken().equals(current.claimToken())
        && now.isBefore(current.expiresAt())) {
      return Optional.of(
          new ClaimResult.Won(
              new Claim(r.key(), current.fence(), current.leaseExpiry(), r.claimToken())));
    }
    if (current.liveAt(now)) {
      return Optional.of(
          current.state() == LockState.DONE
              ? new ClaimResult.AlreadyDone(current.fingerprint())
              : new ClaimResult.HeldByOther(current.leaseExpiry(), current.fingerprint()));
    }
    return Optional.empty();
  }

  /**
   * {@inheritDoc}
   *
   * <p>One read-write transaction (begin, lookup, commit; rollback when nothing changes), retried
   * within the retry budget; retrying after an unseen commit is safe (a DONE record answers true).
   */
  @Override
  public boolean complete(Claim claim, Duration ttl) {
    validateKey(claim.key());
    Objects.requireNonNull(ttl, "ttl");
    Key key = keyOf(claim.key());
    return transactOrFail(
        "complete",
        key,
        (current, now) -> {
          if (current == null) {
            return Decision.readOnly(false);
          }
          if (current.state() == LockState.DONE) {
            return Decision.readOnly(true);
          }
          if (current.fence() != claim.fence()) {
            return Decision.readOnly(false);
          }
          StoredRecord done =
              new StoredRecord(
                  LockState.DONE,
                  current.fence(),
                  current.leaseExpiry(),
                  now.plusMillis(ttl.toMillis()),
                  current.claimToken(),
                  current.fingerprint());
          return Decision.put(true, done.toEntity(key, settings.indexExpiresAt()));
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One read-write transaction (begin, lookup, commit; rollback when nothing changes).
   */
  @Override
  public void release(Claim claim) {
    validateKey(claim.key());
    Key key = keyOf(claim.key());
    transactOrFail(
        "release",
        key,
        (current, now) -> {
          if (current == null
              || current.state() != LockState.CLAIMED
              || current.fence() != claim.fence()) {
            return Decision.readOnly(Boolean.FALSE);
          }
          StoredRecord released =
              new StoredRecord(
                  LockState.CLAIMED,
                  current.fence() + 1,
                  now,
                  current.expiresAt(),
                  null,
                  current.fingerprint());
          return Decision.put(Boolean.TRUE, released.toEntity(key, settings.indexExpiresAt()));
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One read-write transaction (begin, lookup, commit; rollback when nothing changes). The
   * record's retention past its lease ({@code expiresAt - leaseExpiry}) is kept.
   */
  @Override
  public boolean extend(Claim claim, Duration lease) {
    validateKey(claim.key());
    Objects.requireNonNull(lease, "lease");
    Key key = keyOf(claim.key());
    return transactOrFail(
        "extend",
        key,
        (current, now) -> {
          if (current == null
              || current.state() != LockState.CLAIMED
              || current.fence() != claim.fence()) {
            return Decision.readOnly(false);
          }
          Duration retention = Duration.between(current.leaseExpiry(), current.expiresAt());
          Instant leaseExpiry = now.plusMillis(lease.toMillis());
          StoredRecord extended =
              new StoredRecord(
                  LockState.CLAIMED,
                  current.fence(),
                  leaseExpiry,
                  leaseExpiry.plus(retention),
                  current.claimToken(),
                  current.fingerprint());
          return Decision.put(true, extended.toEntity(key, settings.indexExpiresAt()));
        });
  }

  // ---------------------------------------------------------------------------------------------
  // Admin.
  // ---------------------------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>One strongly consistent lookup, outside any transaction; {@code observedAt} is this
   * backend's clock right after the read.
   *
   * @throws LockBackendException if the lookup failed (not retried)
   */
  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    Entity entity;
    try {
      entity = lookup(keyOf(key));
    } catch (RuntimeException e) {
      throw new LockBackendException("inspect failed on " + where, e);
    }
    Instant now = now();
    if (entity == null) {
      return Optional.empty();
    }
    StoredRecord r = StoredRecord.fromEntity(entity);
    return Optional.of(
        new LockRecord(
            key,
            r.state(),
            r.fence(),
            r.leaseExpiry(),
            r.expiresAt(),
            r.claimToken(),
            r.fingerprint(),
            now));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One read-write transaction (begin, lookup, commit the delete; rollback if absent). If a
   * commit's outcome was not seen and the retry finds the record gone, the answer is false even
   * though this call deleted it.
   */
  @Override
  public boolean forget(String key) {
    validateKey(key);
    Key k = keyOf(key);
    return transactOrFail(
        "forget",
        k,
        (current, now) -> current == null ? Decision.readOnly(false) : Decision.delete(true, k));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Finds up to {@code limit} records with {@code expiresAt <= now}: one keys-only query on the
   * indexed {@code expiresAt}, or, when the settings leave it unindexed, a scan of the kind. Then
   * deletes them in transactions of up to {@value #PURGE_BATCH_SIZE} records (begin, lookup,
   * commit), each record re-checked in its transaction so that one renewed since the query (a claim
   * after its window lapsed) is kept.
   *
   * @throws LockBackendException if a query or transaction failed; batches committed before it stay
   *     deleted
   */
  @Override
  public int purgeExpired(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, but was " + limit);
    }
    if (closed.get()) {
      throw new IllegalStateException("the backend on " + where + " is closed");
    }
    List<Key> candidates;
    try {
      candidates = expiredCandidates(limit, now());
    } catch (RuntimeException e) {
      throw new LockBackendException("purgeExpired failed on " + where, e);
    }
    int removed = 0;
    for (int from = 0; from < candidates.size(); from += PURGE_BATCH_SIZE) {
      List<Key> batch =
          candidates.subList(from, Math.min(candidates.size(), from + PURGE_BATCH_SIZE));
      removed += purgeBatch(batch);
    }
    return removed;
  }

  private List<Key> expiredCandidates(int limit, Instant now) {
    List<Key> keys = new ArrayList<>();
    if (settings.indexExpiresAt()) {
      Query<Key> query =
          Query.newKeyQueryBuilder()
              .setNamespace(settings.namespace())
              .setKind(settings.kind())
              .setFilter(PropertyFilter.le(StoredRecord.EXPIRES_AT, StoredRecord.toTimestamp(now)))
              .setLimit(limit)
              .build();
      rpcs.query.increment();
      QueryResults<Key> results = datastore.run(query);
      results.forEachRemaining(keys::add);
      return keys;
    }
    Query<Entity> scan =
        Query.newEntityQueryBuilder()
            .setNamespace(settings.namespace())
            .setKind(settings.kind())
            .build();
    rpcs.query.increment();
    QueryResults<Entity> results = datastore.run(scan);
    while (keys.size() < limit && results.hasNext()) {
      Entity e = results.next();
      if (!now.isBefore(StoredRecord.fromEntity(e).expiresAt())) {
        keys.add(e.getKey());
      }
    }
    return keys;
  }

  /** Deletes those of {@code batch} still expired when re-read in one transaction. */
  int purgeBatch(List<Key> batch) {
    return transactOrFail(
        "purgeExpired",
        batch,
        (found, now) -> {
          List<Key> expired = new ArrayList<>();
          for (Entity e : found.values()) {
            if (!now.isBefore(StoredRecord.fromEntity(e).expiresAt())) {
              expired.add(e.getKey());
            }
          }
          return expired.isEmpty()
              ? Decision.readOnly(0)
              : new Decision<>(expired.size(), List.of(), expired);
        });
  }

  /**
   * Closes the backend; later verbs throw {@link IllegalStateException}. Idempotent; records are
   * untouched. The HTTP transport the client uses holds no connection of this backend's own (its
   * pool is the process-wide default transport), so nothing else needs releasing.
   */
  @Override
  public void close() {
    closed.set(true);
  }

  @Override
  public String toString() {
    return "DatastoreLockBackend{" + where + "}";
  }

  /** The RPCs issued so far, by method. */
  RpcCounters.Snapshot rpcCounts() {
    return rpcs.snapshot();
  }

  // ---------------------------------------------------------------------------------------------
  // Transactions.
  // ---------------------------------------------------------------------------------------------

  /** What a transaction decided: its answer and the mutations to commit (none: roll back). */
  private record Decision<T>(T value, List<Entity> puts, List<Key> deletes) {
    static <T> Decision<T> readOnly(T value) {
      return new Decision<>(value, List.of(), List.of());
    }

    static <T> Decision<T> put(T value, Entity entity) {
      return new Decision<>(value, List.of(entity), List.of());
    }

    static <T> Decision<T> delete(T value, Key key) {
      return new Decision<>(value, List.of(), List.of(key));
    }

    boolean writes() {
      return !puts.isEmpty() || !deletes.isEmpty();
    }
  }

  /** Decides a transaction's outcome from what its lookup found (by key name), at {@code now}. */
  @FunctionalInterface
  private interface Decider<T> {
    Decision<T> decide(Map<String, Entity> found, Instant now);
  }

  /** Decides a single-record transaction's outcome from the record (null: absent), at now. */
  @FunctionalInterface
  private interface RecordDecider<T> {
    Decision<T> decide(StoredRecord current, Instant now);
  }

  /** The retry budget ran out; carries the last failure. */
  private final class RetriesExhausted extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String verb;
    private final Failure failure;

    RetriesExhausted(String verb, Failure failure, RuntimeException last) {
      super(last);
      this.verb = verb;
      this.failure = failure;
    }

    LockBackendException toBackendException() {
      String why =
          failure == Failure.CONTENTION
              ? "contention (ABORTED) on every one of "
              : "a transient error on every one of ";
      return new LockBackendException(
          verb
              + " failed on "
              + where
              + ": "
              + why
              + settings.maxAttempts()
              + " attempts; the outcome is unknown",
          getCause());
    }
  }

  private <T> T transactOrFail(String verb, Key key, RecordDecider<T> decider) {
    return transactOrFail(
        verb,
        List.of(key),
        (found, now) -> {
          Entity e = found.get(key.getName());
          return decider.decide(e == null ? null : StoredRecord.fromEntity(e), now);
        });
  }

  private <T> T transactOrFail(String verb, List<Key> keys, Decider<T> decider) {
    try {
      return transact(verb, keys, decider, Optional::empty);
    } catch (RetriesExhausted exhausted) {
      throw exhausted.toBackendException();
    }
  }

  /**
   * Runs one read-write transaction over {@code keys}, retrying contention and transient failures
   * within the budget. Before each retry, {@code beforeRetry} may answer without a transaction (its
   * failures count like the transaction's).
   *
   * @throws RetriesExhausted if every attempt failed retryably
   * @throws LockBackendException on a permanent failure
   */
  private <T> T transact(
      String verb, List<Key> keys, Decider<T> decider, Supplier<Optional<T>> beforeRetry) {
    ByteString abortedTransaction = null;
    for (int attempt = 1; ; attempt++) {
      Transaction txn = null;
      boolean committing = false;
      try {
        if (attempt > 1) {
          Optional<T> answer = beforeRetry.get();
          if (answer.isPresent()) {
            return answer.get();
          }
        }
        ReentrantLock local = keys.size() == 1 ? stripeOf(keys.get(0)) : null;
        if (local != null) {
          local.lockInterruptibly();
        }
        try {
          txn = begin(abortedTransaction);
          Map<String, Entity> found = lookup(txn, keys);
          Decision<T> decision = decider.decide(found, now());
          if (decision.writes()) {
            decision.puts().forEach(txn::put);
            decision.deletes().forEach(txn::delete);
            committing = true;
            rpcs.commit.increment();
            txn.commit();
          } else {
            rollback(txn);
          }
          return decision.value();
        } finally {
          if (local != null) {
            local.unlock();
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LockBackendException(verb + " on " + where + " was interrupted", e);
      } catch (RuntimeException e) {
        Failure failure = Failure.classify(e);
        if (!(committing && failure == Failure.CONTENTION)) {
          // An aborted commit ended the transaction; anything else may have left it open, holding
          // locks (Firestore) until it expires: give them back now.
          rollbackQuietly(txn);
        }
        if (failure == Failure.PERMANENT) {
          throw new LockBackendException(verb + " failed on " + where, e);
        }
        if (attempt >= settings.maxAttempts()) {
          log.debug("{} on {} gave up after {} attempts ({})", verb, where, attempt, failure);
          throw new RetriesExhausted(verb, failure, e);
        }
        log.debug("{} on {}: attempt {} failed ({}), retrying", verb, where, attempt, failure);
        // Firestore keeps a retried transaction's lock priority when told the aborted one's id.
        abortedTransaction =
            failure == Failure.CONTENTION && txn != null ? txn.getTransactionId() : null;
        backoff(verb, attempt, e);
      }
    }
  }

  /**
   * The in-process lock for a key's transactions. Threads of one process that would contend for the
   * same entity take turns here instead of in the store, where contention costs aborted
   * transactions (and, on the Firestore emulator, lock timeouts); processes still contend in the
   * store, which is what decides.
   */
  private ReentrantLock stripeOf(Key key) {
    return stripes[Math.floorMod(key.getName().hashCode(), KEY_STRIPES)];
  }

  private Transaction begin(ByteString abortedTransaction) {
    rpcs.begin.increment();
    if (abortedTransaction == null) {
      return datastore.newTransaction();
    }
    return datastore.newTransaction(
        TransactionOptions.newBuilder()
            .setReadWrite(
                TransactionOptions.ReadWrite.newBuilder()
                    .setPreviousTransaction(abortedTransaction))
            .build());
  }

  private Map<String, Entity> lookup(Transaction txn, List<Key> keys) {
    rpcs.lookup.increment();
    Iterator<Entity> it = txn.get(keys.toArray(new Key[0]));
    Map<String, Entity> found = new HashMap<>();
    it.forEachRemaining(e -> found.put(e.getKey().getName(), e));
    return found;
  }

  private Entity lookup(Key key) {
    rpcs.lookup.increment();
    return datastore.get(key);
  }

  private void rollback(Transaction txn) {
    rpcs.rollback.increment();
    txn.rollback();
  }

  private void rollbackQuietly(Transaction txn) {
    if (txn == null || !txn.isActive()) {
      return;
    }
    try {
      rollback(txn);
    } catch (RuntimeException ignored) {
      // Best effort: the transaction expires on its own; the original failure is what matters.
      log.trace("rollback after a failed attempt failed too on {}", where, ignored);
    }
  }

  private void backoff(String verb, int attempt, RuntimeException last) {
    long cap = settings.maxBackoff().toMillis();
    long base = settings.initialBackoff().toMillis();
    long exp = attempt >= 31 ? cap : Math.min(cap, base << (attempt - 1));
    long delay = exp <= 1 ? exp : ThreadLocalRandom.current().nextLong(exp / 2, exp + 1);
    if (delay == 0) {
      return;
    }
    try {
      Thread.sleep(delay);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LockBackendException interrupted =
          new LockBackendException(verb + " on " + where + " was interrupted while retrying", e);
      interrupted.addSuppressed(last);
      throw interrupted;
    }
  }

  /** The Datastore key of a lock key. */
  Key keyOf(String lockKey) {
    if (closed.get()) {
      throw new IllegalStateException("the backend on " + where + " is closed");
    }
    return keyFactory.newKey(KeyNames.toName(lockKey));
  }

  private Instant now() {
    return Instant.ofEpochMilli(clock.millis());
  }
}
