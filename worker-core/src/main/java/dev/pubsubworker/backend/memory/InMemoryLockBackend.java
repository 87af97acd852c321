package dev.pubsubworker.backend.memory;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockBackend} and {@link LockAdmin} over a {@link ConcurrentHashMap}: every verb is
 * atomic per key ({@code compute}), expiry is judged on an injectable {@link Clock}, times are kept
 * at millisecond precision like the persistent backends.
 *
 * <p>Process-local and not persistent: two processes each have their own records, and a restart
 * forgets everything. Use it for tests and single-process consumers; a fleet needs a shared store.
 * Keys up to {@value #MAX_KEY_BYTES} UTF-8 bytes. Records are written only by the verbs and {@link
 * #put}, so every record is readable (no {@link dev.pubsubworker.core.InvalidLockRecordException}
 * here); a reclaim or release at {@link LockBackend#MAX_FENCE} gives fence 1. Thread-safe.
 *
 * <p>The batch verbs ({@link #claimAll}, {@link #completeAll}) apply each entry as its single verb,
 * atomically per entry, in order; they exist so that the guard's group commit and the batched
 * suites can run in-process. A guard does not batch on this backend unless asked to ({@link
 * #batchingByDefault()} is false): a map update costs less than handing work between threads.
 */
public final class InMemoryLockBackend implements BatchLockBackend, LockAdmin {

  /** The longest key accepted, in UTF-8 bytes. */
  public static final int MAX_KEY_BYTES = 64 * 1024;

  private final ConcurrentHashMap<String, Entry> records = new ConcurrentHashMap<>();
  private final Clock clock;

  /** A backend on the system UTC clock. */
  public InMemoryLockBackend() {
    this(Clock.systemUTC());
  }

  /**
   * A backend that judges expiry on {@code clock}.
   *
   * @throws NullPointerException if clock is null
   */
  public InMemoryLockBackend(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** One stored record; immutable, replaced on every transition. */
  private record Entry(
      LockState state,
      long fence,
      Instant leaseExpiry,
      Instant expiresAt,
      @Nullable String claimToken,
      @Nullable String fingerprint) {}

  @Override
  public int maxKeyBytes() {
    return MAX_KEY_BYTES;
  }

  /**
   * False: see the class documentation; a guard built with {@code batching(true)} batches anyway.
   */
  @Override
  public boolean batchingByDefault() {
    return false;
  }

  @Override
  public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    requireBatch(requests, ClaimRequest::key);
    List<BatchResult<ClaimResult>> results = new ArrayList<>(requests.size());
    for (ClaimRequest r : requests) {
      try {
        results.add(BatchResult.of(claim(r)));
      } catch (RuntimeException e) {
        results.add(BatchResult.failed(e));
      }
    }
    return results;
  }

  @Override
  public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    requireBatch(requests, r -> r.claim().key());
    List<BatchResult<Boolean>> results = new ArrayList<>(requests.size());
    for (CompleteRequest r : requests) {
      try {
        results.add(BatchResult.of(complete(r.claim(), r.ttl())));
      } catch (RuntimeException e) {
        results.add(BatchResult.failed(e));
      }
    }
    return results;
  }

  private <Q> void requireBatch(List<Q> requests, Function<Q, String> key) {
    Objects.requireNonNull(requests, "requests");
    if (requests.isEmpty() || requests.size() > maxBatchSize()) {
      throw new IllegalArgumentException(
          "a batch needs 1 to " + maxBatchSize() + " entries, but had " + requests.size());
    }
    Set<String> keys = new HashSet<>();
    for (Q r : requests) {
      if (!keys.add(key.apply(Objects.requireNonNull(r, "request")))) {
        throw new IllegalArgumentException("a batch repeats a key");
      }
    }
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    validateKey(request.key());
    Instant now = now();
    Instant leaseExpiry = now.plusMillis(request.lease().toMillis());
    Instant retainUntil = leaseExpiry.plusMillis(request.ttl().toMillis());
    ClaimResult[] result = new ClaimResult[1];
    records.compute(
        request.key(),
        (key, e) -> {
          if (e == null) {
            result[0] = won(key, 1, leaseExpiry, request);
            return claimed(1, leaseExpiry, retainUntil, request);
          }
          if (e.state() == LockState.CLAIMED
              && request.claimToken().equals(e.claimToken())
              && now.isBefore(e.expiresAt())) {
            // The caller's own claim, retried after a lost response: same fence, lease renewed.
            result[0] = won(key, e.fence(), leaseExpiry, request);
            return claimed(e.fence(), leaseExpiry, retainUntil, request);
          }
          boolean live =
              e.state() == LockState.CLAIMED
                  ? now.isBefore(e.leaseExpiry())
                  : now.isBefore(e.expiresAt());
          if (live) {
            result[0] =
                e.state() == LockState.DONE
                    ? new ClaimResult.AlreadyDone(e.fingerprint())
                    : new ClaimResult.HeldByOther(e.leaseExpiry(), e.fingerprint());
            return e;
          }
          long fence = nextFence(e.fence());
          result[0] = won(key, fence, leaseExpiry, request);
          return claimed(fence, leaseExpiry, retainUntil, request);
        });
    return result[0];
  }

  @Override
  public boolean complete(Claim claim, Duration ttl) {
    validateKey(claim.key());
    Instant expiresAt = now().plusMillis(ttl.toMillis());
    boolean[] ok = new boolean[1];
    records.computeIfPresent(
        claim.key(),
        (key, e) -> {
          if (e.state() == LockState.DONE) {
            ok[0] = true;
            return e;
          }
          if (e.fence() != claim.fence()) {
            return e;
          }
          ok[0] = true;
          return new Entry(
              LockState.DONE,
              e.fence(),
              e.leaseExpiry(),
              expiresAt,
              e.claimToken(),
              e.fingerprint());
        });
    return ok[0];
  }

  @Override
  public void release(Claim claim) {
    validateKey(claim.key());
    Instant now = now();
    records.computeIfPresent(
        claim.key(),
        (key, e) ->
            e.state() == LockState.CLAIMED && e.fence() == claim.fence()
                ? new Entry(
                    LockState.CLAIMED,
                    nextFence(e.fence()),
                    now,
                    e.expiresAt(),
                    null,
                    e.fingerprint())
                : e);
  }

  @Override
  public boolean extend(Claim claim, Duration lease) {
    validateKey(claim.key());
    Instant leaseExpiry = now().plusMillis(lease.toMillis());
    boolean[] ok = new boolean[1];
    records.computeIfPresent(
        claim.key(),
        (key, e) -> {
          if (e.state() != LockState.CLAIMED || e.fence() != claim.fence()) {
            return e;
          }
          ok[0] = true;
          // Keep the same retention past the lease that the claim asked for.
          Duration retention = Duration.between(e.leaseExpiry(), e.expiresAt());
          return new Entry(
              LockState.CLAIMED,
              e.fence(),
              leaseExpiry,
              leaseExpiry.plus(retention),
              e.claimToken(),
              e.fingerprint());
        });
    return ok[0];
  }

  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    Entry e = records.get(key);
    if (e == null) {
      return Optional.empty();
    }
    return Optional.of(
        new LockRecord(
            key,
            e.state(),
            e.fence(),
            e.leaseExpiry(),
            e.expiresAt(),
            e.claimToken(),
            e.fingerprint(),
            now()));
  }

  /**
   * Stores {@code record} as the record of its key, replacing any, as if the verbs had left it so:
   * to start a test from a given state (a DONE key, a lapsed claim, a fence near {@link
   * LockBackend#MAX_FENCE}). Its {@code observedAt} is ignored. A {@link LockRecord} is always
   * readable, so this backend never holds a record its verbs cannot read.
   *
   * @throws IllegalArgumentException if the key is invalid for this backend
   */
  public void put(LockRecord record) {
    validateKey(record.key());
    records.put(
        record.key(),
        new Entry(
            record.state(),
            record.fence(),
            millis(record.leaseExpiry()),
            millis(record.expiresAt()),
            record.claimToken(),
            record.fingerprint()));
  }

  @Override
  public boolean forget(String key) {
    validateKey(key);
    return records.remove(key) != null;
  }

  @Override
  public int purgeExpired(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, but was " + limit);
    }
    Instant now = now();
    List<String> candidates = new ArrayList<>();
    for (Map.Entry<String, Entry> e : records.entrySet()) {
      if (!now.isBefore(e.getValue().expiresAt())) {
        candidates.add(e.getKey());
      }
    }
    int removed = 0;
    for (String key : candidates) {
      if (removed >= limit) {
        break;
      }
      // Re-check under the map's per-key lock: a claim may have renewed the record meanwhile.
      boolean[] gone = new boolean[1];
      records.computeIfPresent(
          key,
          (k, e) -> {
            if (now.isBefore(e.expiresAt())) {
              return e;
            }
            gone[0] = true;
            return null;
          });
      if (gone[0]) {
        removed++;
      }
    }
    return removed;
  }

  /** How many records are stored, expired or not. */
  public int size() {
    return records.size();
  }

  private Instant now() {
    return Instant.ofEpochMilli(clock.millis());
  }

  /** Times are kept at the millisecond precision of the persistent backends. */
  private static Instant millis(Instant t) {
    return Instant.ofEpochMilli(t.toEpochMilli());
  }

  /** The fence after a reclaim or release: one more, or 1 after {@link LockBackend#MAX_FENCE}. */
  private static long nextFence(long fence) {
    return fence >= LockBackend.MAX_FENCE ? 1 : fence + 1;
  }

  private static ClaimResult won(String key, long fence, Instant leaseExpiry, ClaimRequest r) {
    return new ClaimResult.Won(new Claim(key, fence, leaseExpiry, r.claimToken()));
  }

  private static Entry claimed(
      long fence, Instant leaseExpiry, Instant retainUntil, ClaimRequest r) {
    return new Entry(
        LockState.CLAIMED, fence, leaseExpiry, retainUntil, r.claimToken(), r.fingerprint());
  }
}
