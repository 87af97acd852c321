package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/** The MYSQL dialect (read, then compare-and-set; no RETURNING) on a MariaDB server. */
class MySqlDialectOnMariaDbContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mysqlDialectOnMariadb();
  }
}
