package dev.pubsubworker.backend.datastore;

import java.util.UUID;

/** Temporary stand-in for TestServices while the services branch is in progress. */
final class Emulators {
  record Emulator(String hostPort, String projectId) {
    String newNamespace() {
      return "ns-" + UUID.randomUUID().toString().substring(0, 12);
    }
  }

  static Emulator datastore() {
    return new Emulator("127.0.0.1:18481", "dev-project");
  }

  static Emulator firestoreInDatastoreMode() {
    return new Emulator("127.0.0.1:18482", "dev-project");
  }
}
