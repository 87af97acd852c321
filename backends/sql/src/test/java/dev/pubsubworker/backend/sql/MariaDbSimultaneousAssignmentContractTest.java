package dev.pubsubworker.backend.sql;

import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.LockBackendContract;

/**
 * The MariaDB claim upsert with SIMULTANEOUS_ASSIGNMENT on, where every assignment sees the old row
 * instead of the columns assigned before it: the statement must decide the same either way.
 */
class MariaDbSimultaneousAssignmentContractTest extends LockBackendContract {
  @Override
  protected BackendFixture createFixture() {
    return SqlFixture.mariadbSimultaneousAssignment();
  }
}
