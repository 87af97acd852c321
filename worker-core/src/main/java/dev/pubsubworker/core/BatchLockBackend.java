package dev.pubsubworker.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An optional capability of a {@link LockBackend}: many claims, or many completes, in one round
 * trip to the store (group commit). The {@link IdempotencyGuard} uses it when many handler threads
 * claim or complete at once; a lone call still goes through the single verbs.
 *
 * <h2>Contract</h2>
 *
 * Each entry of a batch has exactly the semantics, fencing and validation of the single verb it
 * stands for ({@link LockBackend#claim}, {@link LockBackend#complete}), decided atomically per
 * entry; entries are independent of each other (one entry's failure does not fail the others), and
 * the backend applies them in list order. The guard never puts two entries for the same key in one
 * batch; an implementation may rely on that and must reject such a batch with {@link
 * IllegalArgumentException} before any I/O.
 *
 * <p>Results come back one per request, in the same order. An entry's failure is the exception the
 * single verb would have thrown for it ({@link IllegalArgumentException} for a bad key, {@link
 * LockBackendException} for a store failure). If the round trip as a whole fails, the method throws
 * {@link LockBackendException}: then every entry's outcome is unknown, exactly as for a failed
 * single verb, and no entry may have been reported {@code Won} without being stored. When the store
 * answered and refused the batch for what it was asked (a constraint, a value it cannot take), the
 * method throws the {@link StoreRefusedException} subclass: the guard then sends the entries again
 * one by one through the single verb, so a backend need not find out which entry made the store
 * refuse it.
 *
 * <p>Implementations are thread-safe.
 */
public interface BatchLockBackend extends LockBackend {

  /** The most entries the guard puts in one batch for this backend; at least 2. */
  default int maxBatchSize() {
    return 64;
  }

  /**
   * How many round trips of one verb the store serves at once with benefit: the guard keeps up to
   * this many claims (single or batched) in flight, and as many completes, before further callers
   * queue for the next batch. A store whose round trips overlap (many requests pipelined on one
   * multiplexed connection, a connection pool) gains from more than one: with only one in flight,
   * callers would wait for each other's round trips the store could have served side by side. A
   * store that serves one request at a time, or whose every round trip ends in a costly durable
   * commit (the SQL backend), returns 1, so that callers share the next round trip rather than
   * queue at the store beside it. Default 4; at least 1.
   */
  default int maxConcurrentBatches() {
    return 4;
  }

  /**
   * The most round trips of one verb the guard may keep in flight once it has measured that the
   * store serves them side by side without slowing down: the guard starts at {@link
   * #maxConcurrentBatches()} and adapts its limit between the two from the round-trip times it sees
   * (more in flight while round trips do not lengthen with their number, as on a pipelined
   * connection or across a network's latency; fewer, so that callers share a batch, while they do,
   * as when the store's commits or CPU are the bottleneck), and from how many calls its batches
   * hold (more in flight, whatever the round trips, while queued callers seldom share a batch, so
   * that none waits a round trip only to be sent alone; fewer only while they do share), and, above
   * both, from the calls per second it measured at each limit while callers queued: it moves
   * towards a limit that got clearly more through lately and not to one that got clearly less, so a
   * store whose throughput falls with more calls in flight keeps its callers sharing batches though
   * few of them queue at once. Default {@link #maxConcurrentBatches()}: a fixed limit. At least
   * {@link #maxConcurrentBatches()}.
   */
  default int maxConcurrentCalls() {
    return maxConcurrentBatches();
  }

  /**
   * Whether an {@link IdempotencyGuard} on this backend groups concurrent calls into batches unless
   * its builder says otherwise ({@link IdempotencyGuard.Builder#batching}). Default true: a round
   * trip to a store costs far more than the hand-off between the waiting threads. A backend whose
   * verbs cost less than that hand-off (an in-process map) returns false.
   */
  default boolean batchingByDefault() {
    return true;
  }

  /**
   * Claims every request, each as {@link LockBackend#claim} would, in one round trip where the
   * store allows.
   *
   * @param requests at least one, at most {@link #maxBatchSize()}, with distinct keys
   * @return one entry per request, in order
   * @throws IllegalArgumentException if the list is empty, too long or repeats a key
   * @throws LockBackendException if the round trip failed as a whole
   */
  List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests);

  /**
   * Completes every claim, each as {@link LockBackend#complete} would, in one round trip (one
   * commit) where the store allows.
   *
   * @param requests at least one, at most {@link #maxBatchSize()}, with distinct keys
   * @return one entry per request, in order; its value is what {@code complete} would return
   * @throws IllegalArgumentException if the list is empty, too long or repeats a key
   * @throws LockBackendException if the round trip failed as a whole
   */
  List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests);

  /**
   * The arguments of one {@link LockBackend#complete} call in a batch.
   *
   * @param claim the won claim to complete
   * @param ttl the duplicate-suppression window, at least one millisecond
   */
  record CompleteRequest(Claim claim, Duration ttl) {
    /**
     * Validates the components.
     *
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if {@code ttl} is shorter than one millisecond
     */
    public CompleteRequest {
      Objects.requireNonNull(claim, "claim");
      DurationChecks.requireAtLeastOneMilli("ttl", ttl);
    }
  }

  /**
   * The outcome of one entry of a batch: a value, or the exception the single verb would have
   * thrown for that entry. Exactly one of the two is set.
   *
   * @param <T> the single verb's result type
   */
  final class BatchResult<T> {
    private final @Nullable T value;
    private final @Nullable RuntimeException failure;

    private BatchResult(@Nullable T value, @Nullable RuntimeException failure) {
      this.value = value;
      this.failure = failure;
    }

    /**
     * An entry that succeeded.
     *
     * @throws NullPointerException if value is null
     */
    public static <T> BatchResult<T> of(T value) {
      return new BatchResult<>(Objects.requireNonNull(value, "value"), null);
    }

    /**
     * An entry that failed as its single verb would have.
     *
     * @throws NullPointerException if failure is null
     */
    public static <T> BatchResult<T> failed(RuntimeException failure) {
      return new BatchResult<>(null, Objects.requireNonNull(failure, "failure"));
    }

    /** Whether this entry failed. */
    public boolean isFailure() {
      return failure != null;
    }

    /**
     * The entry's value.
     *
     * @throws RuntimeException the entry's failure, as the single verb would have thrown it
     */
    public T get() {
      if (failure != null) {
        throw failure;
      }
      return Objects.requireNonNull(value, "value");
    }

    /** The entry's failure, or {@code null} if it succeeded. */
    public @Nullable RuntimeException failure() {
      return failure;
    }

    @Override
    public String toString() {
      return failure != null ? "failed(" + failure + ")" : "of(" + value + ")";
    }
  }
}
