package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

class FirestoreDatastoreModeLockBackendContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(Emulators.firestoreInDatastoreMode());
  }
}
