package dev.pubsubworker.backend.sql;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;

/**
 * A SQL backend on a fresh table of its own, with a test clock offset that {@link #advanceClock}
 * moves. The second instance has a pool of its own on the same database, table and clock.
 */
final class SqlFixture implements BackendFixture {

  private final AtomicLong offset = new AtomicLong();
  private final Databases.Target target;
  private final boolean ownsTarget;
  private final DataSource dataSource;
  private final String initSql;
  private final SqlLockSettings settings;
  private final SqlLockBackend backend;
  private final List<HikariDataSource> pools = new ArrayList<>();
  private SqlLockBackend second;

  private SqlFixture(
      Databases.Target target, boolean ownsTarget, SqlDialect dialect, String initSql) {
    this.target = target;
    this.ownsTarget = ownsTarget;
    this.initSql = initSql;
    if (initSql == null) {
      this.dataSource = target.shared();
    } else {
      HikariDataSource pool = target.newPool("fixture", 16, initSql);
      pools.add(pool);
      this.dataSource = pool;
    }
    SqlLockSettings.Builder b =
        SqlLockSettings.newBuilder()
            .table(Databases.uniqueName("locks"))
            .dataSource(dataSource)
            .createTableIfMissing(true)
            .clockOffset(offset::get);
    if (dialect != null) {
      b.dialect(dialect);
    }
    this.settings = b.build();
    this.backend = SqlLockBackend.create(settings);
  }

  static SqlFixture postgres() {
    return new SqlFixture(Databases.postgres(), false, null, null);
  }

  static SqlFixture mariadb() {
    return new SqlFixture(Databases.mariadb(), false, null, null);
  }

  /** MariaDB with SIMULTANEOUS_ASSIGNMENT on: every assignment of an upsert sees the old row. */
  static SqlFixture mariadbSimultaneousAssignment() {
    return new SqlFixture(
        Databases.mariadb(),
        false,
        null,
        "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')");
  }

  /** The MYSQL dialect (no RETURNING: read, then compare-and-set) on a MariaDB server. */
  static SqlFixture mysqlDialectOnMariadb() {
    return new SqlFixture(Databases.mariadb(), false, SqlDialect.MYSQL, null);
  }

  static SqlFixture h2() {
    return new SqlFixture(Databases.h2(), true, null, null);
  }

  @Override
  public SqlLockBackend backend() {
    return backend;
  }

  @Override
  public LockAdmin admin() {
    return backend;
  }

  @Override
  public void advanceClock(Duration amount) {
    offset.addAndGet(amount.toMillis());
  }

  @Override
  public synchronized LockBackend secondInstance() {
    if (second == null) {
      HikariDataSource pool = target.newPool("fixture-second", 8, initSql);
      pools.add(pool);
      second =
          SqlLockBackend.create(
              settings.toBuilder().createTableIfMissing(false).dataSource(pool).build());
    }
    return second;
  }

  /**
   * Replaces the key's row with one holding {@code fields} as given, through plain JDBC. The first
   * call loosens this fixture's own table the way hand-written DDL might have left it: no {@code
   * CHECK} on state, and NULL allowed in state, fence and both times. A value the column cannot
   * hold as written (text in a BIGINT, {@code "07"}, a state longer than the column) skips the
   * test.
   */
  @Override
  public void writeRawRecord(String key, Map<String, String> fields) {
    Map<String, String> columns = new LinkedHashMap<>();
    fields.forEach(
        (name, value) -> {
          String column = COLUMNS.get(name);
          if (column == null) {
            throw new IllegalArgumentException("not a field of a lock record: " + name);
          }
          boolean integer =
              !column.equals("state")
                  && !column.startsWith("claim")
                  && !column.equals("fingerprint");
          if (integer) {
            boolean fits;
            try {
              fits = Long.toString(Long.parseLong(value)).equals(value);
            } catch (NumberFormatException e) {
              fits = false;
            }
            Assumptions.assumeTrue(
                fits, "a BIGINT column cannot hold " + column + " '" + value + "' as written");
          } else if (column.equals("state")) {
            Assumptions.assumeTrue(
                value.length() <= 7, "the state column holds 7 characters, not '" + value + "'");
          }
          columns.put(column, value);
        });
    SqlDialect dialect = backend.dialect();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      loosenSchema(c, dialect);
      Object boundKey =
          dialect.storesKeysAsBytes() ? key.getBytes(StandardCharsets.UTF_8) : (Object) key;
      try (PreparedStatement delete =
          c.prepareStatement("DELETE FROM " + table() + " WHERE lock_key = ?")) {
        delete.setObject(1, boundKey);
        delete.executeUpdate();
      }
      StringBuilder names = new StringBuilder("lock_key");
      StringBuilder marks = new StringBuilder("?");
      columns
          .keySet()
          .forEach(
              column -> {
                names.append(", ").append(column);
                marks.append(", ?");
              });
      try (PreparedStatement insert =
          c.prepareStatement(
              "INSERT INTO " + table() + " (" + names + ") VALUES (" + marks + ")")) {
        insert.setObject(1, boundKey);
        int i = 2;
        for (Map.Entry<String, String> e : columns.entrySet()) {
          String column = e.getKey();
          if (column.equals("state")
              || column.startsWith("claim")
              || column.equals("fingerprint")) {
            insert.setString(i++, e.getValue());
          } else {
            insert.setLong(i++, Long.parseLong(e.getValue()));
          }
        }
        insert.executeUpdate();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not write a raw row into " + table(), e);
    }
  }

  /** The columns of the record's fields. */
  private static final Map<String, String> COLUMNS =
      Map.of(
          "state", "state",
          "fence", "fence",
          "leaseExpiry", "lease_expiry",
          "expiresAt", "expires_at",
          "claimToken", "claim_token",
          "fingerprint", "fingerprint");

  private boolean loosened;

  private synchronized void loosenSchema(Connection c, SqlDialect dialect) throws SQLException {
    if (loosened) {
      return;
    }
    List<String> statements =
        switch (dialect) {
          case POSTGRESQL ->
              List.of(
                  "ALTER TABLE " + table() + " DROP CONSTRAINT IF EXISTS " + table() + "_state_ck",
                  "ALTER TABLE "
                      + table()
                      + " ALTER COLUMN state DROP NOT NULL, ALTER COLUMN fence DROP NOT NULL,"
                      + " ALTER COLUMN lease_expiry DROP NOT NULL,"
                      + " ALTER COLUMN expires_at DROP NOT NULL");
          case H2 ->
              List.of(
                  "ALTER TABLE " + table() + " DROP CONSTRAINT IF EXISTS " + table() + "_state_ck",
                  "ALTER TABLE " + table() + " ALTER COLUMN state SET NULL",
                  "ALTER TABLE " + table() + " ALTER COLUMN fence SET NULL",
                  "ALTER TABLE " + table() + " ALTER COLUMN lease_expiry SET NULL",
                  "ALTER TABLE " + table() + " ALTER COLUMN expires_at SET NULL");
          case MARIADB, MYSQL ->
              List.of(
                  "ALTER TABLE "
                      + table()
                      + " MODIFY state VARCHAR(7) CHARACTER SET ascii COLLATE ascii_bin NULL,"
                      + " MODIFY fence BIGINT NULL, MODIFY lease_expiry BIGINT NULL,"
                      + " MODIFY expires_at BIGINT NULL");
        };
    try (Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    }
    loosened = true;
  }

  /** The database this fixture's table lives on. */
  Databases.Target target() {
    return target;
  }

  /** The pool the backend uses. */
  DataSource dataSource() {
    return dataSource;
  }

  /** The settings the backend was built with (data source, table, clock offset). */
  SqlLockSettings settings() {
    return settings;
  }

  /** The lock table's name. */
  String table() {
    return settings.table();
  }

  /** The current clock offset in milliseconds. */
  long offsetMillis() {
    return offset.get();
  }

  @Override
  public void close() {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      // An in-memory H2 database of our own goes away as a whole.
      st.execute(ownsTarget ? "SHUTDOWN" : "DROP TABLE " + table());
    } catch (SQLException e) {
      if (!ownsTarget) {
        throw new IllegalStateException("could not drop " + table(), e);
      }
    } finally {
      pools.forEach(HikariDataSource::close);
      if (ownsTarget && target.shared() instanceof HikariDataSource h) {
        h.close();
      }
    }
  }
}
