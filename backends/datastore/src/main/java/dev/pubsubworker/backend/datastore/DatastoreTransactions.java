package dev.pubsubworker.backend.datastore;

import com.google.cloud.NoCredentials;
import com.google.cloud.ServiceOptions;
import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.DatastoreOptions;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.Query;
import com.google.cloud.datastore.QueryResults;
import com.google.cloud.datastore.Transaction;
import com.google.cloud.http.HttpTransportOptions;
import com.google.datastore.v1.TransactionOptions;
import com.google.protobuf.ByteString;
import dev.pubsubworker.core.Backoff;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction engine under {@link DatastoreLockBackend}: it owns the Datastore client and runs
 * a verb's decision inside one read-write transaction (begin, lookup, decide, commit or roll back),
 * retrying contention and transient failures with jittered exponential backoff within the settings'
 * budget, taking turns in process on a striped lock per key, and counting every RPC. The verbs'
 * semantics (what to decide) stay in the backend; this class knows nothing of lock states.
 * Thread-safe.
 */
final class DatastoreTransactions {

  /** How many in-process locks single-key transactions are spread over. */
  static final int KEY_STRIPES = 1024;

  private static final Logger log = LoggerFactory.getLogger(DatastoreTransactions.class);

  private final Datastore datastore;
  private final Clock clock;
  private final String where;
  private final int maxAttempts;
  private final Backoff backoff;
  private final RpcCounters rpcs = new RpcCounters();
  private final ReentrantLock[] stripes = new ReentrantLock[KEY_STRIPES];

  /**
   * @param where how errors name the store (kind, namespace, database)
   */
  DatastoreTransactions(Datastore datastore, DatastoreLockSettings settings, String where) {
    this.datastore = datastore;
    this.clock = settings.clock();
    this.where = where;
    this.maxAttempts = settings.maxAttempts();
    this.backoff = retryBackoff(settings);
    for (int i = 0; i < KEY_STRIPES; i++) {
      stripes[i] = new ReentrantLock();
    }
  }

  /**
   * Opens a Datastore client for these settings. No RPC is made.
   *
   * @throws IllegalStateException if no project id was set and none can be found in the environment
   */
  static Datastore openClient(DatastoreLockSettings s) {
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, s.rpcTimeout().toMillis());
    // The client's default HTTP transport: its gRPC transport is experimental in this version and
    // ignores an emulator host (googleapis/java-datastore#2022). One attempt per RPC, bounded by
    // the connect and read timeouts: retries happen once, in this class, around whole transactions.
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
          "no Google Cloud project id: set DatastoreLockSettings.Builder.projectId or"
              + " GOOGLE_CLOUD_PROJECT");
    }
    return options.getService();
  }

  /** What a transaction decided: its answer and the mutations to commit (none: roll back). */
  record Decision<T>(T value, List<Entity> puts, List<Key> deletes) {
    static <T> Decision<T> readOnly(T value) {
      return new Decision<>(value, List.of(), List.of());
    }

    static <T> Decision<T> put(T value, Entity entity) {
      return new Decision<>(value, List.of(entity), List.of());
    }

    static <T> Decision<T> delete(T value, Key key) {
      return new Decision<>(value, List.of(), List.of(key));
    }

    static <T> Decision<T> deleteAll(T value, List<Key> keys) {
      return new Decision<>(value, List.of(), keys);
    }

    boolean writes() {
      return !puts.isEmpty() || !deletes.isEmpty();
    }
  }

  /** Decides a transaction's outcome from what its lookup found (by key name), at {@code now}. */
  @FunctionalInterface
  interface Decider<T> {
    Decision<T> decide(Map<String, Entity> found, Instant now);
  }

  /** Decides a single-record transaction's outcome from the record (null: absent), at now. */
  @FunctionalInterface
  interface RecordDecider<T> {
    Decision<T> decide(StoredRecord current, Instant now);
  }

  /** The retry budget ran out; carries the last failure. */
  final class RetriesExhausted extends RuntimeException {
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
              + maxAttempts
              + " attempts; the outcome is unknown",
          getCause());
    }
  }

  /** {@link #transact} on one record, an exhausted budget a {@link LockBackendException}. */
  <T> T transactOrFail(String verb, Key key, RecordDecider<T> decider) {
    return transactOrFail(
        verb,
        List.of(key),
        (found, now) -> {
          Entity e = found.get(key.getName());
          return decider.decide(
              e == null ? null : StoredRecord.fromEntity(e, verb + " failed on " + where), now);
        });
  }

  /**
   * {@link #transact} without a read before retries, an exhausted budget a {@link
   * LockBackendException}.
   */
  <T> T transactOrFail(String verb, List<Key> keys, Decider<T> decider) {
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
  <T> T transact(
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
      } catch (InvalidLockRecordException e) {
        // The decider found a record it cannot read and decided nothing: not a store failure.
        rollbackQuietly(txn);
        throw e;
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
        if (attempt >= maxAttempts) {
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

  /** One plain (strongly consistent, lock-free) lookup outside any transaction; null if absent. */
  Entity lookup(Key key) {
    rpcs.lookup.increment();
    return datastore.get(key);
  }

  /** Runs one query outside any transaction. */
  <T> QueryResults<T> run(Query<T> query) {
    rpcs.query.increment();
    return datastore.run(query);
  }

  /** Now on the settings' clock, at the millisecond precision records are stored with. */
  Instant now() {
    return Instant.ofEpochMilli(clock.millis());
  }

  /** The RPCs issued so far, by method. */
  RpcCounters.Snapshot rpcCounts() {
    return rpcs.snapshot();
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

  /**
   * The wait between two attempts of a transaction: from the settings' initial backoff, doubling,
   * capped at their max backoff, with equal jitter (uniform between half the ceiling and the
   * ceiling), so that transactions that aborted each other do not retry in step.
   */
  static Backoff retryBackoff(DatastoreLockSettings settings) {
    return Backoff.exponential(settings.initialBackoff(), settings.maxBackoff())
        .withJitter(Backoff.Jitter.EQUAL);
  }

  /** Waits before the attempt after {@code attempt} (1 for the first attempt). */
  private void backoff(String verb, int attempt, RuntimeException last) {
    long delay = backoff.delay(attempt - 1).toNanos();
    if (delay == 0) {
      return;
    }
    try {
      TimeUnit.NANOSECONDS.sleep(delay);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LockBackendException interrupted =
          new LockBackendException(verb + " on " + where + " was interrupted while retrying", e);
      interrupted.addSuppressed(last);
      throw interrupted;
    }
  }
}
