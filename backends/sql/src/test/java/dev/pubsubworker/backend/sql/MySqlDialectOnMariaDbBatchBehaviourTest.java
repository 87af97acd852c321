package dev.pubsubworker.backend.sql;

/** The MYSQL dialect (no RETURNING) on MariaDB: the upsert and one SELECT, in one transaction. */
class MySqlDialectOnMariaDbBatchBehaviourTest extends SqlBatchBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.mysqlDialectOnMariadb();
  }

  @Override
  int claimStatements(int n) {
    return 2;
  }

  @Override
  boolean claimInTransaction() {
    return true;
  }
}
