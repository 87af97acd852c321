package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class DatastoreEmulatorLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(Emulators.datastore());
  }
}
