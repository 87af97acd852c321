package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

class PostgresConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.postgres();
  }

  @Override
  protected int operationsPerThread() {
    return 300;
  }
}
