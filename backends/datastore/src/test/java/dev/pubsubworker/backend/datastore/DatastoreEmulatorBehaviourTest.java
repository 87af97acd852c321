package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.services.DatastoreEmulator;
import dev.pubsubworker.testkit.services.TestServices;

class DatastoreEmulatorBehaviourTest extends DatastoreBackendBehaviour {
  @Override
  DatastoreEmulator emulator() {
    return TestServices.datastore();
  }
}
