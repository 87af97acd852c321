package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/** The contract suite on a three-node Redis Cluster, through a cluster-aware connection. */
class RedisClusterContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return RedisFixture.onCluster("cluster");
  }
}
