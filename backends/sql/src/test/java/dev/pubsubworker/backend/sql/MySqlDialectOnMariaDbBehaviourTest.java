package dev.pubsubworker.backend.sql;

import java.util.Map;

/** The MYSQL dialect (no RETURNING) exercised on a MariaDB server. */
class MySqlDialectOnMariaDbBehaviourTest extends MariaDbServerBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.mysqlDialectOnMariadb();
  }

  @Override
  Map<Case, Integer> documentedStatements() {
    return H2BehaviourTest.compareAndSetStatements();
  }
}
