package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class PostgresLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.postgres();
  }
}
