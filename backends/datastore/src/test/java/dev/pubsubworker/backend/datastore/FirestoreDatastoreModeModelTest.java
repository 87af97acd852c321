package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;
import dev.pubsubworker.testservices.TestServices;

class FirestoreDatastoreModeModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(TestServices.firestoreInDatastoreMode());
  }
}
