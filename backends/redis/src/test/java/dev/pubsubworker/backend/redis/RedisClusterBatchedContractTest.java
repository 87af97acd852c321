package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/**
 * The contract suite on a three-node Redis Cluster through the batch verbs: each batch's keys fall
 * in different slots, so every batch is split by slot and reassembled.
 */
class RedisClusterBatchedContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(RedisFixture.onCluster("cluster_batched"));
  }
}
