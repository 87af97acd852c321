package dev.pubsubworker.testkit;

import net.jqwik.api.PropertyDefaults;

@PropertyDefaults(tries = 500)
class InMemoryModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return new InMemoryFixture();
  }
}
