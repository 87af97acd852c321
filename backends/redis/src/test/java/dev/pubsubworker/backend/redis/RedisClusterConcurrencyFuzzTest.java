package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

/** The concurrency fuzz test on a three-node Redis Cluster. */
class RedisClusterConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return RedisFixture.onCluster("cluster_fuzz");
  }
}
