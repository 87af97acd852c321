package dev.pubsubworker.bench;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The guard's group commit against a store whose every round trip takes {@code roundTripMicros}
 * (the in-memory backend behind a fixed wait, single or batch verb alike), served one at a time or
 * overlapping ({@code store}), with batching on and off and up to {@code concurrentBatches} flushes
 * of a verb in flight: lock cycles per second, and store round trips per cycle printed at the end
 * of each trial. Run with several threads ({@code -t 8}): one thread never batches.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class CoalescerBenchmark {

  @Param({"true", "false"})
  public boolean batching;

  @Param({"200"})
  public long roundTripMicros;

  /**
   * {@code serial}: the store serves one round trip at a time (a single-threaded server such as
   * Redis, or one hot row's commits), so each round trip costs server time; {@code parallel}: round
   * trips overlap without limit, so only their latency counts.
   */
  @Param({"serial", "parallel"})
  public String store;

  /**
   * What the store reports as {@link BatchLockBackend#maxConcurrentBatches()}: how many flushes of
   * one verb the guard keeps in flight at once. 1 fits the serial store, 4 (the interface's
   * default) the parallel one; without batching it has no effect.
   */
  @Param({"1", "4"})
  public int concurrentBatches;

  private final AtomicLong keys = new AtomicLong();
  private final AtomicLong roundTrips = new AtomicLong();
  private IdempotencyGuard guard;

  @Setup(Level.Trial)
  public void setUp() {
    guard =
        IdempotencyGuard.newBuilder(
                new SlowStore(
                    roundTripMicros * 1_000, store.equals("serial"), concurrentBatches, roundTrips))
            .batching(batching)
            .build();
  }

  /** Closes the guard and prints the trial's store round trips per lock cycle. */
  @TearDown(Level.Trial)
  public void tearDown() {
    guard.close();
    System.out.printf(
        "%nstore round trips: %d for %d lock cycles (%.2f per cycle)%n",
        roundTrips.get(), keys.get(), roundTrips.get() / (double) Math.max(1, keys.get()));
  }

  @Benchmark
  public LockResult<Long> lockCycle() {
    return guard.lock("k" + keys.incrementAndGet(), ctx -> ctx.fencingToken());
  }

  /** The in-memory backend with a fixed wait per round trip. */
  private static final class SlowStore implements BatchLockBackend {
    private final InMemoryLockBackend store = new InMemoryLockBackend();
    private final long waitNanos;
    private final Semaphore server;
    private final AtomicLong trips;
    private final int concurrentBatches;

    SlowStore(long waitNanos, boolean serial, int concurrentBatches, AtomicLong trips) {
      this.waitNanos = waitNanos;
      this.server = serial ? new Semaphore(1, true) : null;
      this.concurrentBatches = concurrentBatches;
      this.trips = trips;
    }

    @Override
    public int maxConcurrentBatches() {
      return concurrentBatches;
    }

    private void roundTrip() {
      trips.incrementAndGet();
      if (server == null) {
        LockSupport.parkNanos(waitNanos);
        return;
      }
      server.acquireUninterruptibly();
      try {
        LockSupport.parkNanos(waitNanos);
      } finally {
        server.release();
      }
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      roundTrip();
      return store.claim(request);
    }

    @Override
    public boolean complete(Claim claim, Duration ttl) {
      roundTrip();
      return store.complete(claim, ttl);
    }

    @Override
    public void release(Claim claim) {
      roundTrip();
      store.release(claim);
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
      roundTrip();
      return store.extend(claim, lease);
    }

    @Override
    public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
      roundTrip();
      return store.claimAll(requests);
    }

    @Override
    public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
      roundTrip();
      return store.completeAll(requests);
    }
  }
}
