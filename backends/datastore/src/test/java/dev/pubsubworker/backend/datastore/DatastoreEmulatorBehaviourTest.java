package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testservices.DatastoreEmulator;
import dev.pubsubworker.testservices.TestServices;

class DatastoreEmulatorBehaviourTest extends DatastoreBackendBehaviour {
  @Override
  DatastoreEmulator emulator() {
    return TestServices.datastore();
  }
}
