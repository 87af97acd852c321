package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

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
