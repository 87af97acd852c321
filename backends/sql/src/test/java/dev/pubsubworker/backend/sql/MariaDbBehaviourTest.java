package dev.pubsubworker.backend.sql;

import java.util.EnumMap;
import java.util.Map;

class MariaDbBehaviourTest extends MariaDbServerBehaviour {

  @Override
  SqlFixture createFixture() {
    return SqlFixture.mariadb();
  }

  @Override
  Map<Case, Integer> documentedStatements() {
    Map<Case, Integer> m = new EnumMap<>(Case.class);
    for (Case c : Case.values()) {
      m.put(c, 1);
    }
    // The fence did not match: a second statement tells DONE (or an unchanged row, or an
    // unreadable one) from refused.
    m.put(Case.COMPLETE_STALE, 2);
    m.put(Case.RELEASE_STALE, 2);
    m.put(Case.EXTEND_STALE, 2);
    return m;
  }
}
