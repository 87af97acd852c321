package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;
import net.jqwik.api.PropertyDefaults;

/** The model-based property test through the batch verbs. */
@PropertyDefaults(tries = 200)
class RedisBatchedModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new RedisFixture("batched_model"));
  }
}
