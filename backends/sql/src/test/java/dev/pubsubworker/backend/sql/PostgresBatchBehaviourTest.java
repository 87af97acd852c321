package dev.pubsubworker.backend.sql;

/** PostgreSQL: one statement per batch for either verb, in auto-commit. */
class PostgresBatchBehaviourTest extends SqlBatchBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.postgres();
  }

  @Override
  int claimStatements(int n) {
    return 1;
  }

  @Override
  boolean claimInTransaction() {
    return false;
  }
}
