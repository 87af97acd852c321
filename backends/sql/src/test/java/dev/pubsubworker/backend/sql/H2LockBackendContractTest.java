package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class H2LockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.h2();
  }
}
