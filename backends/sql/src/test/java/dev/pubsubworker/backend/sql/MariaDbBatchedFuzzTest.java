package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

/** The concurrency fuzz suite through the batch verbs ({@code claimAll}, {@code completeAll}). */
class MariaDbBatchedFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(SqlFixture.mariadb());
  }

  @Override
  protected int operationsPerThread() {
    return 300;
  }
}
