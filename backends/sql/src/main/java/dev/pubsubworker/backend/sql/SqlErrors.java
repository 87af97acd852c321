package dev.pubsubworker.backend.sql;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The one place where store errors are classified, by SQLState (and, where a product reports a lock
 * timeout only under the generic {@code HY000}, by its vendor code). Walks the exception's causes
 * and chained exceptions, since drivers and pools wrap.
 */
final class SqlErrors {

  /**
   * Transient: the statement or transaction was rolled back by the server as a whole and running it
   * again may well succeed.
   *
   * <ul>
   *   <li>{@code 40001} serialization failure (PostgreSQL), deadlock victim (MySQL/MariaDB 1213, H2
   *       40001)
   *   <li>{@code 40P01} deadlock detected (PostgreSQL)
   *   <li>{@code 55P03} lock not available / lock timeout (PostgreSQL)
   *   <li>{@code HYT00} lock timeout (H2 50200)
   *   <li>{@code 90131} concurrent update in another transaction (H2)
   *   <li>{@code 41000} and vendor code 1205: lock wait timeout (MySQL/MariaDB report it as {@code
   *       HY000} or {@code 41000} depending on the driver)
   * </ul>
   */
  private static final Set<String> TRANSIENT_STATES =
      Set.of("40001", "40P01", "55P03", "HYT00", "90131", "41000");

  private static final int MYSQL_LOCK_WAIT_TIMEOUT = 1205;
  private static final int MYSQL_DEADLOCK = 1213;
  private static final int MYSQL_DUPLICATE_KEY = 1062;

  private SqlErrors() {}

  /** Whether a verb that failed with {@code e} may be retried as a whole. */
  static boolean isTransient(SQLException e) {
    for (SQLException s : chain(e)) {
      String state = s.getSQLState();
      if (state != null && TRANSIENT_STATES.contains(state)) {
        return true;
      }
      if (s.getErrorCode() == MYSQL_LOCK_WAIT_TIMEOUT || s.getErrorCode() == MYSQL_DEADLOCK) {
        if (state == null || state.startsWith("HY") || state.startsWith("40")) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Whether {@code e} is a unique-key violation: another claim inserted the same key first (the
   * race where both claimers saw it absent). {@code 23505} on PostgreSQL and H2; {@code 23000} with
   * vendor code 1062 on MySQL/MariaDB ({@code 23000} alone also covers NOT NULL and foreign keys).
   */
  static boolean isDuplicateKey(SQLException e) {
    for (SQLException s : chain(e)) {
      String state = s.getSQLState();
      if ("23505".equals(state)) {
        return true;
      }
      if ("23000".equals(state) && s.getErrorCode() == MYSQL_DUPLICATE_KEY) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the database refused the statement for what it was asked, not for being unreachable,
   * slow or busy: SQLState class {@code 22} (data exception: a value a column cannot take) or
   * {@code 23} (integrity constraint violation: a CHECK, NOT NULL or foreign key a DBA added), a
   * unique-key race ({@link #isDuplicateKey}) excepted, which the claim handles itself.
   */
  static boolean isRefusal(SQLException e) {
    if (isDuplicateKey(e)) {
      return false;
    }
    for (SQLException s : chain(e)) {
      String state = s.getSQLState();
      if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
        return true;
      }
    }
    return false;
  }

  /** The exception, its SQLException causes and its chained exceptions, at most 16 of them. */
  private static List<SQLException> chain(SQLException e) {
    List<SQLException> all = new ArrayList<>();
    ArrayDeque<SQLException> pending = new ArrayDeque<>();
    pending.add(e);
    while (!pending.isEmpty() && all.size() < 16) {
      SQLException s = pending.poll();
      if (all.contains(s)) {
        continue;
      }
      all.add(s);
      if (s.getNextException() != null) {
        pending.add(s.getNextException());
      }
      Throwable cause = s.getCause();
      while (cause != null && !(cause instanceof SQLException)) {
        cause = cause.getCause() == cause ? null : cause.getCause();
      }
      if (cause != null) {
        pending.add((SQLException) cause);
      }
    }
    return all;
  }
}
