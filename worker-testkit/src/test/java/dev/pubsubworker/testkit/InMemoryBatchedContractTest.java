package dev.pubsubworker.testkit;

/**
 * The contract suite on the in-memory backend, every claim and complete through its batch verbs.
 */
class InMemoryBatchedContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new InMemoryFixture());
  }
}
