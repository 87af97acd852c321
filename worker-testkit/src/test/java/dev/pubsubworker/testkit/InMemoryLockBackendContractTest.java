package dev.pubsubworker.testkit;

class InMemoryLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return new InMemoryFixture();
  }
}
