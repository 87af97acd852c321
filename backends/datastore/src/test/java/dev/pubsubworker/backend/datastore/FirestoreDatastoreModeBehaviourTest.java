package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testservices.DatastoreEmulator;
import dev.pubsubworker.testservices.TestServices;

class FirestoreDatastoreModeBehaviourTest extends DatastoreBackendBehaviour {
  @Override
  DatastoreEmulator emulator() {
    return TestServices.firestoreInDatastoreMode();
  }
}
