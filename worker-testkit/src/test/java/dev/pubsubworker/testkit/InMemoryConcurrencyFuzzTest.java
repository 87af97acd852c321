package dev.pubsubworker.testkit;

class InMemoryConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return new InMemoryFixture();
  }

  @Override
  protected int operationsPerThread() {
    return 2_000;
  }
}
