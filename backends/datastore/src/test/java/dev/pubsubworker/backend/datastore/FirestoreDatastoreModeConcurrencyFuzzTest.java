package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;
import dev.pubsubworker.testservices.TestServices;

class FirestoreDatastoreModeConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(TestServices.firestoreInDatastoreMode());
  }
}
