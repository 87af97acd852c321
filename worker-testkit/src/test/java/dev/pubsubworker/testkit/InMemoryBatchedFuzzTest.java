package dev.pubsubworker.testkit;

/**
 * The concurrency fuzz on the in-memory backend, every claim and complete through its batch verbs.
 */
class InMemoryBatchedFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(new InMemoryFixture());
  }

  @Override
  protected int operationsPerThread() {
    return 1_000;
  }
}
