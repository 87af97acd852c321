package dev.pubsubworker.testkit;

import net.jqwik.api.PropertyDefaults;

/** The model test on the in-memory backend, every claim and complete through its batch verbs. */
@PropertyDefaults(tries = 300)
class InMemoryBatchedModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new InMemoryFixture());
  }
}
