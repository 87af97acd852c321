package dev.pubsubworker.backend.sql;

/** MariaDB: one multi-row upsert with RETURNING per claim batch, in auto-commit. */
class MariaDbBatchBehaviourTest extends SqlBatchBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.mariadb();
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
