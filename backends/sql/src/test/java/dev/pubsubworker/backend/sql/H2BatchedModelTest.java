package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.BatchedFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;
import net.jqwik.api.PropertyDefaults;

/** The model suite through the batch verbs ({@code claimAll}, {@code completeAll}). */
@PropertyDefaults(tries = 150)
class H2BatchedModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return BatchedFixture.of(SqlFixture.h2());
  }
}
