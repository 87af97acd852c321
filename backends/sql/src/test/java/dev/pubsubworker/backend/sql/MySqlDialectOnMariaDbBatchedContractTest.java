package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/** The shared contract through the batch verbs ({@code claimAll}, {@code completeAll}). */
class MySqlDialectOnMariaDbBatchedContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(SqlFixture.mysqlDialectOnMariadb());
  }
}
