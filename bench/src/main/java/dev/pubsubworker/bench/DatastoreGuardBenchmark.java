package dev.pubsubworker.bench;

import dev.pubsubworker.backend.datastore.DatastoreLockBackend;
import dev.pubsubworker.backend.datastore.DatastoreLockSettings;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import java.util.UUID;
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
 * The guard on the Datastore backend against the Datastore emulator: lock cycles (claim + work +
 * complete: two transactions, 6 RPCs) on fresh keys, and the duplicate path (claim on a DONE key:
 * one transaction that rolls back, 3 RPCs). Reads {@code DATASTORE_EMULATOR_HOST} (default {@code
 * 127.0.0.1:8081}) and {@code DATASTORE_PROJECT_ID} (default {@code bench-project}); each trial
 * writes into a namespace of its own. Emulator figures measure the client and the emulator on this
 * machine, not production Firestore.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Benchmark)
public class DatastoreGuardBenchmark {

  private final AtomicLong keys = new AtomicLong();
  private DatastoreLockBackend backend;
  private IdempotencyGuard guard;

  @Setup(Level.Trial)
  public void setUp() {
    String host = System.getenv().getOrDefault("DATASTORE_EMULATOR_HOST", "127.0.0.1:8081");
    String project = System.getenv().getOrDefault("DATASTORE_PROJECT_ID", "bench-project");
    backend =
        DatastoreLockBackend.create(
            DatastoreLockSettings.newBuilder()
                .emulatorHost(host)
                .projectId(project)
                .namespace("bench-" + UUID.randomUUID().toString().substring(0, 8))
                .build());
    guard = IdempotencyGuard.newBuilder(backend).heartbeat(true).build();
    guard.lock("done", ctx -> null);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    guard.close();
    backend.close();
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
