package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;
import dev.pubsubworker.testservices.TestServices;

class DatastoreEmulatorLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(TestServices.datastore());
  }
}
