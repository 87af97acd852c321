package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;
import dev.pubsubworker.testservices.TestServices;

class DatastoreEmulatorConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return new DatastoreFixture(TestServices.datastore());
  }
}
