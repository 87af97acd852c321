package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;
import dev.pubsubworker.testkit.services.TestServices;

class DatastoreEmulatorConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(TestServices.datastore());
  }
}
