package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendModelContract;
import net.jqwik.api.PropertyDefaults;

@PropertyDefaults(tries = 150)
class MariaDbModelTest extends LockBackendModelContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mariadb();
  }
}
