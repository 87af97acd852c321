package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.ConcurrencyFuzzContract;

/** The MYSQL dialect's compare-and-set claim under contention, on a MariaDB server. */
class MySqlDialectOnMariaDbConcurrencyFuzzTest extends ConcurrencyFuzzContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mysqlDialectOnMariadb();
  }

  @Override
  protected int operationsPerThread() {
    return 300;
  }
}
