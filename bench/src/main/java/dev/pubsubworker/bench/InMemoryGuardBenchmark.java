package dev.pubsubworker.bench;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The guard's own overhead: lock cycles (claim + work + complete) and the duplicate path on the
 * in-memory backend, so store benchmarks can be read against a floor.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class InMemoryGuardBenchmark {

  private final AtomicLong keys = new AtomicLong();
  private InMemoryLockBackend backend;
  private IdempotencyGuard guard;

  @Setup(Level.Trial)
  public void setUp() {
    backend = new InMemoryLockBackend();
    guard = IdempotencyGuard.newBuilder(backend).heartbeat(true).build();
    guard.lock("done", ctx -> null);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    guard.close();
  }

  @Benchmark
  public LockResult<Long> lockCycle() {
    return guard.lock("k" + keys.incrementAndGet(), ctx -> ctx.fencingToken());
  }

  @Benchmark
  public LockResult<Long> duplicate() {
    return guard.lock("done", ctx -> ctx.fencingToken());
  }
}
