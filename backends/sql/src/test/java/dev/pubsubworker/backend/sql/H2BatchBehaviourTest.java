package dev.pubsubworker.backend.sql;

/**
 * H2: the compare-and-set claim per entry (a read and an insert when absent), in one transaction.
 */
class H2BatchBehaviourTest extends SqlBatchBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.h2();
  }

  @Override
  int claimStatements(int n) {
    return 2 * n;
  }

  @Override
  boolean claimInTransaction() {
    return true;
  }
}
