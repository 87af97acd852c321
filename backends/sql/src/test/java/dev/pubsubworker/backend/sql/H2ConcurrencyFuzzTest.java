package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

class H2ConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.h2();
  }

  @Override
  protected int operationsPerThread() {
    return 300;
  }
}
