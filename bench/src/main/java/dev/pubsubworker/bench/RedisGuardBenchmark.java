package dev.pubsubworker.bench;

import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
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
 * The guard on the Redis backend: lock cycles (claim + work + complete: two {@code EVALSHA} round
 * trips on fresh keys) and the duplicate path (one {@code EVALSHA} on a DONE key), through one
 * shared Lettuce connection as a worker process would use it. Run at several thread counts with
 * {@code -t}. Redis comes from {@code REDIS_URL} (default {@code redis://127.0.0.1:6379}); records
 * go under a fresh prefix, expire after a minute, and are deleted at the end.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class RedisGuardBenchmark {

  private final AtomicLong keys = new AtomicLong();
  private String uri;
  private String prefix;
  private RedisLockBackend backend;
  private IdempotencyGuard guard;

  @Setup(Level.Trial)
  public void setUp() {
    uri = System.getenv().getOrDefault("REDIS_URL", "redis://127.0.0.1:6379");
    prefix = "pwbench:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    backend =
        RedisLockBackend.create(RedisLockSettings.newBuilder().uri(uri).keyPrefix(prefix).build());
    backend.checkConnection();
    guard = IdempotencyGuard.newBuilder(backend).ttl(Duration.ofMinutes(1)).build();
    guard.lock("done", ctx -> null);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    guard.close();
    backend.close();
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      ScanArgs args = ScanArgs.Builder.matches(prefix + "*").limit(1000);
      ScanCursor cursor = ScanCursor.INITIAL;
      do {
        KeyScanCursor<String> page = c.sync().scan(cursor, args);
        if (!page.getKeys().isEmpty()) {
          c.sync().unlink(page.getKeys().toArray(new String[0]));
        }
        cursor = page;
      } while (!cursor.isFinished());
    } finally {
      client.shutdown();
    }
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
