package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.TransactionalLockBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lock-store calls in progress, so that liveness can tell a worker whose threads are stuck in
 * the store from one that is merely busy. {@link #track} wraps a backend; every call through the
 * wrapper is registered from its start until it returns or throws.
 *
 * <p>What counts as a call: {@code claim}, {@code complete}, {@code release} and {@code extend},
 * and the store's own parts of a transactional run (beginning the transaction, then writing DONE
 * and committing); the handler's work inside a transactional run does not count, however long it
 * takes. Key validation (no I/O) does not count either.
 *
 * <p>Thread-safe; recording costs one map insertion and removal per call.
 */
@InternalApi("the lock-store calls in progress that liveness watches")
public final class LockStoreCalls {

  /**
   * A call in progress.
   *
   * @param verb the verb: {@code claim}, {@code complete}, {@code release}, {@code extend} or
   *     {@code transaction}
   * @param thread the name of the thread making it
   * @param started when it started, on this tracker's clock
   */
  public record Call(String verb, String thread, Instant started) {

    /** How long it has been running at {@code now}, never negative. */
    public Duration age(Instant now) {
      Duration d = Duration.between(started, now);
      return d.isNegative() ? Duration.ZERO : d;
    }
  }

  private final Clock clock;
  private final Map<Long, Call> inProgress = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  /** A tracker timing calls on {@code clock}. */
  public LockStoreCalls(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * {@code backend}, with every call recorded here while it runs. A {@link
   * TransactionalLockBackend} stays one, and a {@link BatchLockBackend} stays one (each batch is
   * one call of its verb), so that a guard on the wrapper still group-commits. Closing the wrapper
   * closes {@code backend}.
   */
  public LockBackend track(LockBackend backend) {
    Objects.requireNonNull(backend, "backend");
    boolean batches = backend instanceof BatchLockBackend;
    if (backend instanceof TransactionalLockBackend tx) {
      return batches
          ? transactionalBatches(backend)
          : new TrackedTransactionalLockBackend(tx, this);
    }
    return batches
        ? new TrackedBatchLockBackend((BatchLockBackend) backend, this)
        : new TrackedLockBackend(backend, this);
  }

  @SuppressWarnings("unchecked")
  private <B extends TransactionalLockBackend & BatchLockBackend> LockBackend transactionalBatches(
      LockBackend both) {
    return new TrackedTransactionalBatchLockBackend((B) both, this);
  }

  /** The call that has been running longest, if any is. */
  public Optional<Call> oldest() {
    return inProgress.values().stream().min(Comparator.comparing(Call::started));
  }

  /** How many calls are in progress. */
  public int inProgress() {
    return inProgress.size();
  }

  /** The clock calls are timed on. */
  public Clock clock() {
    return clock;
  }

  /** Registers a call of {@code verb} on the current thread; pass the result to {@link #end}. */
  long begin(String verb) {
    long id = ids.incrementAndGet();
    inProgress.put(id, new Call(verb, Thread.currentThread().getName(), clock.instant()));
    return id;
  }

  /** The call {@link #begin} returned {@code id} for returned or threw. */
  void end(long id) {
    inProgress.remove(id);
  }
}
