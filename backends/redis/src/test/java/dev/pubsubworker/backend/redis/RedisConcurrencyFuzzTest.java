package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

class RedisConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return new RedisFixture("fuzz");
  }

  @Override
  protected int operationsPerThread() {
    return 500;
  }
}
