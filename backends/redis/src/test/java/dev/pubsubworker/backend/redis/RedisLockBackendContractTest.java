package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class RedisLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return new RedisFixture("contract");
  }
}
