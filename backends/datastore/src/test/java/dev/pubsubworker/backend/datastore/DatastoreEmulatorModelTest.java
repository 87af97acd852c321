package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;

class DatastoreEmulatorModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(Emulators.datastore());
  }
}
