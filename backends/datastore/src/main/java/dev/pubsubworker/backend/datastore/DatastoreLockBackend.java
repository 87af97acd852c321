package dev.pubsubworker.backend.datastore;

import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.KeyFactory;
import com.google.cloud.datastore.Query;
import com.google.cloud.datastore.QueryResults;
import com.google.cloud.datastore.StructuredQuery.PropertyFilter;
import dev.pubsubworker.backend.datastore.DatastoreTransactions.Decision;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * stored at millisecond precision. Entities are read strictly ({@link LockBackend}, "Reading
 * strictly"): a property of another type than these, or a value out of range, makes the entity
 * unreadable, and every verb throws {@link InvalidLockRecordException} for its key and commits
 * nothing ({@link #inspect} with every property as text; {@link #forget} deletes it whatever it
 * holds). A reclaim or release at {@link LockBackend#MAX_FENCE} writes fence 1.
 *
 * <h2>Transactions and retries</h2>
 *
 * Every mutating verb is one read-write transaction: begin, lookup, decide (the table of {@link
 * LockBackend}) against the configured {@link Clock}, then commit the change or roll back when
 * nothing changes. A transaction that fails with contention (ABORTED) or a transient error
 * (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED) is retried with jittered
 * exponential backoff, up to {@link DatastoreLockSettings#maxAttempts()} attempts; a retry after
 * ABORTED names the aborted transaction so Firestore keeps its lock priority. Any other error, or
 * an exhausted budget, is a {@link LockBackendException} with the cause, except for {@code claim}:
 * when its budget is exhausted it reads the record once more (outside a transaction) and answers
 * {@code HeldByOther} or {@code AlreadyDone} only if that read shows a live record, or {@code Won}
 * if the read shows that an earlier attempt of this very call committed (same claim token). An
 * outage therefore always surfaces as an exception, never as "held by another".
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

  /**
   * How many expired records one purge transaction re-checks and deletes at most: legacy Datastore
   * (and its emulator) allow 25 entity groups per transaction.
   */
  static final int PURGE_BATCH_SIZE = 25;

  private final DatastoreLockSettings settings;
  private final KeyFactory keyFactory;
  private final String where;
  private final DatastoreTransactions transactions;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Opens a backend with its own Datastore client. No RPC is made here: an unreachable service
   * shows on the first verb, as a {@link LockBackendException}.
   *
   * @throws NullPointerException if settings is null
   * @throws IllegalStateException if no project id was set and none can be found in the environment
   */
  public static DatastoreLockBackend create(DatastoreLockSettings settings) {
    return new DatastoreLockBackend(Objects.requireNonNull(settings, "settings"));
  }

  private DatastoreLockBackend(DatastoreLockSettings settings) {
    this.settings = settings;
    Datastore datastore = DatastoreTransactions.openClient(settings);
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
    this.transactions = new DatastoreTransactions(datastore, settings, where);
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
      return transactions.transact(
          "claim",
          List.of(key),
          (found, now) -> decideClaim(request, key, found, now),
          () -> answerFromRead(request, key));
    } catch (DatastoreTransactions.RetriesExhausted exhausted) {
      Optional<ClaimResult> answer;
      try {
        answer = answerFromRead(request, key);
      } catch (InvalidLockRecordException unreadable) {
        throw unreadable;
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
    StoredRecord current = entity == null ? null : StoredRecord.fromEntity(entity, failed("claim"));
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
      fence = current.nextFence();
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
    Entity entity = transactions.lookup(key);
    Instant now = transactions.now();
    if (entity == null) {
      return Optional.empty();
    }
    StoredRecord current = StoredRecord.fromEntity(entity, failed("claim"));
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
    return transactions.transactOrFail(
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
    transactions.transactOrFail(
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
                  current.nextFence(),
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
    return transactions.transactOrFail(
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
      entity = transactions.lookup(keyOf(key));
    } catch (RuntimeException e) {
      throw new LockBackendException("inspect failed on " + where, e);
    }
    Instant now = transactions.now();
    if (entity == null) {
      return Optional.empty();
    }
    // Read strictly: an unreadable entity's error carries its every property as text.
    StoredRecord r = StoredRecord.fromEntity(entity, failed("inspect"));
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
    // Looks at the raw entity only: an unreadable record is forgotten like any other.
    return transactions.transactOrFail(
        "forget",
        List.of(k),
        (found, now) ->
            found.containsKey(k.getName()) ? Decision.delete(true, k) : Decision.readOnly(false));
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
      candidates = expiredCandidates(limit, transactions.now());
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
      QueryResults<Key> results = transactions.run(query);
      results.forEachRemaining(keys::add);
      return keys;
    }
    Query<Entity> scan =
        Query.newEntityQueryBuilder()
            .setNamespace(settings.namespace())
            .setKind(settings.kind())
            .build();
    QueryResults<Entity> results = transactions.run(scan);
    while (keys.size() < limit && results.hasNext()) {
      Entity e = results.next();
      if (StoredRecord.expiresAtOf(e).filter(at -> !now.isBefore(at)).isPresent()) {
        keys.add(e.getKey());
      }
    }
    return keys;
  }

  /** Deletes those of {@code batch} still expired when re-read in one transaction. */
  int purgeBatch(List<Key> batch) {
    return transactions.transactOrFail(
        "purgeExpired",
        batch,
        (found, now) -> {
          List<Key> expired = new ArrayList<>();
          for (Entity e : found.values()) {
            if (StoredRecord.expiresAtOf(e).filter(at -> !now.isBefore(at)).isPresent()) {
              expired.add(e.getKey());
            }
          }
          return expired.isEmpty()
              ? Decision.readOnly(0)
              : Decision.deleteAll(expired.size(), expired);
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
    return transactions.rpcCounts();
  }

  /** "{@code verb} failed on kind ...", the start of an error's message. */
  private String failed(String verb) {
    return verb + " failed on " + where;
  }

  /** The Datastore key of a lock key. */
  Key keyOf(String lockKey) {
    if (closed.get()) {
      throw new IllegalStateException("the backend on " + where + " is closed");
    }
    return keyFactory.newKey(KeyNames.toName(lockKey));
  }
}
