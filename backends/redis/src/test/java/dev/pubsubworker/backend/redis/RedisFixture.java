package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;

/**
 * Two backends (two clients, as two worker processes would have) on the test Redis under one fresh
 * prefix, sharing one test clock offset added to Redis {@code TIME}. Closing deletes the prefix.
 */
final class RedisFixture implements BackendFixture {

  private final AtomicLong offsetMillis = new AtomicLong();
  private final RedisLockSettings settings;
  private final RedisLockBackend backend;
  private final RedisLockBackend second;
  private final List<String> nodes;

  /** On the test Redis. */
  RedisFixture(String name) {
    this(TestRedis.settings(name), List.of(TestRedis.uri()));
  }

  /** On the local Redis Cluster, through its seed node. */
  static RedisFixture onCluster(String name) {
    LocalRedisCluster cluster = LocalRedisCluster.shared();
    return new RedisFixture(
        RedisLockSettings.newBuilder()
            .uri(cluster.seedUri())
            .cluster(true)
            .keyPrefix(TestRedis.uniquePrefix(name)),
        cluster.nodeUris());
  }

  private RedisFixture(RedisLockSettings.Builder builder, List<String> nodes) {
    this.nodes = nodes;
    this.settings = builder.clockOffset(offsetMillis::get).build();
    this.backend = RedisLockBackend.create(settings);
    this.second =
        RedisLockBackend.create(settings.toBuilder().clientName("pubsub-worker-second").build());
  }

  RedisLockSettings settings() {
    return settings;
  }

  @Override
  public LockBackend backend() {
    return backend;
  }

  @Override
  public LockAdmin admin() {
    return backend;
  }

  @Override
  public LockBackend secondInstance() {
    return second;
  }

  @Override
  public void advanceClock(Duration amount) {
    if (amount.isNegative()) {
      throw new IllegalArgumentException("time only moves forward, but amount was " + amount);
    }
    offsetMillis.addAndGet(amount.toMillis());
  }

  /**
   * Replaces the key's hash with {@code fields}, verbatim, through a plain client (on a cluster,
   * through the node that owns the key's slot). Redis keeps any text, so nothing is skipped; a
   * record without any field is no hash at all, and skipped.
   */
  @Override
  public void writeRawRecord(String key, Map<String, String> fields) {
    Assumptions.assumeFalse(fields.isEmpty(), "Redis cannot hold a hash without fields");
    byte[] redisKey = new KeyLayout(settings.namespace()).redisKey(key);
    Map<byte[], byte[]> hash = new LinkedHashMap<>();
    fields.forEach(
        (name, value) ->
            hash.put(
                name.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)));
    for (String node : nodes) {
      try (TestRedis.Side side = TestRedis.side(node)) {
        try {
          side.commands().del(redisKey);
        } catch (RuntimeException movedElsewhere) {
          continue; // MOVED: another node of the cluster owns the slot.
        }
        side.commands().hset(redisKey, hash);
        return;
      }
    }
    throw new AssertionError("no node accepted the key");
  }

  @Override
  public void close() {
    try {
      backend.close();
      second.close();
    } finally {
      // The offset clock ran ahead of Redis, so records would outlive the run: remove them.
      for (String node : nodes) {
        try (TestRedis.Side side = TestRedis.side(node)) {
          side.deleteAll(settings.namespace());
        }
      }
    }
  }
}
