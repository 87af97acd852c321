package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

/** The concurrency fuzz test through the batch verbs. */
class RedisBatchedConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new RedisFixture("batched_fuzz"));
  }
}
