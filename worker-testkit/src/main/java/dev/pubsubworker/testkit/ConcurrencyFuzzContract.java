package dev.pubsubworker.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A concurrency fuzz test every backend passes: many threads hammer a few keys with random {@code
 * lock}, {@code mutex}, failing work and crashes (a claim abandoned without release), and the
 * guarded work checks that it never overlaps another on its key. Afterwards every key's claims are
 * left to lapse and each key is locked once more.
 *
 * <p>Asserted: no two works on one key ever overlapped; every {@code lock} effect ran at most once
 * per key while the fuzz ran and exactly once per key in the end; every completion was {@code
 * COMPLETED}; no store error escaped. A backend's test extends this class and supplies a {@link
 * BackendFixture}; the sizes can be overridden for slow stores.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ConcurrencyFuzzContract {

  private BackendFixture fixture;

  /** Creates the fixture; called once before the test. */
  protected abstract BackendFixture createFixture() throws Exception;

  /** Worker threads. Default 8. */
  protected int threads() {
    return 8;
  }

  /** Distinct keys the threads contend on. Default 12. */
  protected int keys() {
    return 12;
  }

  /** Operations each thread performs. Default 150. */
  protected int operationsPerThread() {
    return 150;
  }

  /** The lease of every claim: long enough that no work outlives it. Default 30 s. */
  protected Duration lease() {
    return Duration.ofSeconds(30);
  }

  /** The random seed; printed so a failure can be replayed. Default: a fresh one per run. */
  protected long seed() {
    return new Random().nextLong();
  }

  @BeforeAll
  final void openFixture() throws Exception {
    fixture = createFixture();
  }

  @AfterAll
  final void closeFixture() {
    if (fixture != null) {
      fixture.close();
    }
  }

  private enum Op {
    LOCK,
    LOCK_FAILING,
    MUTEX,
    MUTEX_FAILING,
    CRASH
  }

  private static final class Injected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Injected() {
      super("injected failure", null, false, false);
    }
  }

  @Test
  @DisplayName("fuzz: no overlapping work per key, and exactly one lock effect per key")
  void fuzz_no_overlap_and_exactly_one_lock_effect_per_key() throws Exception {
    LockBackend backend = fixture.backend();
    long seed = seed();
    String prefix = "fuzz-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    int keyCount = keys();
    AtomicIntegerArray inFlight = new AtomicIntegerArray(keyCount);
    AtomicIntegerArray lockEffects = new AtomicIntegerArray(keyCount);
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    LongAdder executed = new LongAdder();
    LongAdder duplicates = new LongAdder();
    LongAdder contended = new LongAdder();
    LongAdder crashes = new LongAdder();

    IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(backend)
            .lease(lease())
            .ttl(Duration.ofHours(1))
            .claimRetries(0)
            .build();
    ExecutorService pool = Executors.newFixedThreadPool(threads());
    long started = System.nanoTime();
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads(); t++) {
        Random random = new Random(seed + t);
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < operationsPerThread(); i++) {
                    int k = random.nextInt(keyCount);
                    String key = prefix + k;
                    Op op = Op.values()[weighted(random)];
                    try {
                      switch (op) {
                        case LOCK, LOCK_FAILING -> {
                          LockResult<Integer> r =
                              guard.lock(
                                  key,
                                  ctx ->
                                      critical(
                                          k,
                                          inFlight,
                                          violations,
                                          random,
                                          op == Op.LOCK_FAILING,
                                          () -> lockEffects.incrementAndGet(k)));
                          if (r instanceof LockResult.Executed<Integer> e) {
                            executed.increment();
                            if (e.completion() != dev.pubsubworker.core.Completion.COMPLETED) {
                              violations.add("key " + k + " completed as " + e.completion());
                            }
                          } else {
                            duplicates.increment();
                          }
                        }
                        case MUTEX, MUTEX_FAILING ->
                            guard.mutex(
                                key,
                                ctx ->
                                    critical(
                                        k,
                                        inFlight,
                                        violations,
                                        random,
                                        op == Op.MUTEX_FAILING,
                                        () -> 0));
                        case CRASH -> {
                          // A holder that dies right after winning: no release, no complete.
                          ClaimResult r = backend.claim(key, lease(), UUID.randomUUID().toString());
                          if (r instanceof ClaimResult.Won) {
                            crashes.increment();
                          }
                        }
                      }
                    } catch (KeyInProgressException e) {
                      contended.increment();
                    } catch (Injected e) {
                      // The work failed on purpose; the guard released and rethrew it.
                    } catch (RuntimeException e) {
                      violations.add("unexpected " + e + " on key " + k);
                    }
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : futures) {
        f.get(10, TimeUnit.MINUTES);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - started);

      assertThat(violations).as("violations (seed %d)", seed).isEmpty();
      for (int k = 0; k < keyCount; k++) {
        assertThat(lockEffects.get(k))
            .as("lock effects on key %d (seed %d)", k, seed)
            .isLessThanOrEqualTo(1);
        if (lockEffects.get(k) == 1) {
          Optional<LockRecord> r = fixture.admin().inspect(prefix + k);
          assertThat(r).isPresent();
          assertThat(r.orElseThrow().state()).isEqualTo(LockState.DONE);
        }
      }

      // Let every abandoned claim lapse; then each key runs its lock effect exactly once in all.
      fixture.advanceClock(lease());
      for (int k = 0; k < keyCount; k++) {
        int key = k;
        guard.lock(
            prefix + k,
            ctx ->
                critical(
                    key,
                    inFlight,
                    violations,
                    new Random(seed),
                    false,
                    () -> lockEffects.incrementAndGet(key)));
        assertThat(lockEffects.get(k))
            .as("final lock effects on key %d (seed %d)", k, seed)
            .isEqualTo(1);
      }
      assertThat(violations).as("violations (seed %d)", seed).isEmpty();
      System.out.printf(
          "fuzz on %s: %d threads x %d ops on %d keys in %d ms: %d executed, %d duplicates,"
              + " %d contended, %d crashes (seed %d)%n",
          backend.getClass().getSimpleName(),
          threads(),
          operationsPerThread(),
          keyCount,
          took.toMillis(),
          executed.sum(),
          duplicates.sum(),
          contended.sum(),
          crashes.sum(),
          seed);
    } finally {
      pool.shutdownNow();
      guard.close();
    }
  }

  /** LOCK 35%, LOCK_FAILING 10%, MUTEX 30%, MUTEX_FAILING 10%, CRASH 15%. */
  private static int weighted(Random random) {
    int p = random.nextInt(100);
    if (p < 35) {
      return Op.LOCK.ordinal();
    }
    if (p < 45) {
      return Op.LOCK_FAILING.ordinal();
    }
    if (p < 75) {
      return Op.MUTEX.ordinal();
    }
    if (p < 85) {
      return Op.MUTEX_FAILING.ordinal();
    }
    return Op.CRASH.ordinal();
  }

  private interface Effect {
    int apply();
  }

  /** The guarded work: detects overlap on its key, dwells briefly, then applies its effect. */
  private static int critical(
      int k,
      AtomicIntegerArray inFlight,
      Queue<String> violations,
      Random random,
      boolean fail,
      Effect effect) {
    int before = inFlight.getAndIncrement(k);
    try {
      if (before != 0) {
        violations.add("overlapping work on key " + k);
      }
      // Dwell a little so that overlaps, if the lock allowed them, would actually happen.
      LockSupport.parkNanos(random.nextInt(300_000));
      if (fail) {
        throw new Injected();
      }
      return effect.apply();
    } finally {
      inFlight.decrementAndGet(k);
    }
  }
}
