package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class MariaDbLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mariadb();
  }
}
