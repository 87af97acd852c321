package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;
import net.jqwik.api.PropertyDefaults;

@PropertyDefaults(tries = 500)
class RedisModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return new RedisFixture("model");
  }
}
