package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/** The contract suite through the batch verbs ({@code claimAll}/{@code completeAll}). */
class RedisBatchedContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new RedisFixture("batched_contract"));
  }
}
