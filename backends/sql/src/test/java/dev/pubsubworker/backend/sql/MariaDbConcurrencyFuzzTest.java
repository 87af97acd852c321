package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

class MariaDbConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mariadb();
  }

  @Override
  protected int operationsPerThread() {
    return 300;
  }
}
