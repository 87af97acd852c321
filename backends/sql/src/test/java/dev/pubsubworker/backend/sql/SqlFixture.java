package dev.pubsubworker.backend.sql;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

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
