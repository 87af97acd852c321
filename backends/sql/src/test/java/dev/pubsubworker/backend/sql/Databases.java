package dev.pubsubworker.backend.sql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.TestServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The databases the tests run on: PostgreSQL and MariaDB from the test services (skipped when
 * absent outside CI, a failure under CI), H2 in memory.
 */
final class Databases {

  private Databases() {}

  /** Where a database is, and a shared pool on it. */
  record Target(String jdbcUrl, String user, String password, DataSource shared) {
    /** The same database with a driver parameter added to the URL ({@code name=value}). */
    Target withUrlParameter(String parameter) {
      return new Target(
          jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + parameter, user, password, shared);
    }

    /** Drops {@code table} if it is there, through the shared pool (a test's own table). */
    void dropTable(String table) throws SQLException {
      execute(shared, "DROP TABLE IF EXISTS " + table);
    }

    /** A new pool of its own on the same database (close it). */
    HikariDataSource newPool(String name, int size, String initSql) {
      HikariConfig config = new HikariConfig();
      config.setPoolName(name);
      config.setJdbcUrl(jdbcUrl);
      if (!user.isEmpty()) {
        config.setUsername(user);
      }
      if (!password.isEmpty()) {
        config.setPassword(password);
      }
      config.setMaximumPoolSize(size);
      config.setMinimumIdle(0);
      config.setConnectionTimeout(10_000);
      if (initSql != null) {
        config.setConnectionInitSql(initSql);
      }
      return new HikariDataSource(config);
    }
  }

  /** Runs one statement of a test's set-up (DDL, a fault) on a connection of {@code ds}. */
  static void execute(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** PostgreSQL: the server's {@code server_version_num} (150004 for 15.4), read on {@code ds}. */
  static int serverVersionNum(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW server_version_num")) {
      rs.next();
      return Integer.parseInt(rs.getString(1));
    }
  }

  /**
   * PostgreSQL: the sequential scans of {@code table} that the server's statistics show now, read
   * on {@code c} from a fresh statistics snapshot. A session reports its own counts at the end of a
   * transaction after {@code pg_stat_force_next_flush()}.
   */
  static long sequentialScans(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("SELECT pg_stat_clear_snapshot()");
    }
    try (PreparedStatement ps =
        c.prepareStatement("SELECT seq_scan FROM pg_stat_user_tables WHERE relname = ?")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new AssertionError("no statistics of table " + table);
        }
        return rs.getLong(1);
      }
    }
  }

  static Target postgres() {
    return of(TestServices.postgres());
  }

  static Target mariadb() {
    return of(TestServices.mariadb());
  }

  /** A fresh in-memory H2 database with a pool of 16, kept until {@code SHUTDOWN}. */
  static Target h2() {
    String url = "jdbc:h2:mem:" + uniqueName("h2") + ";DB_CLOSE_DELAY=-1";
    Target bare = new Target(url, "sa", "", null);
    return new Target(url, "sa", "", bare.newPool("h2", 16, null));
  }

  /** A name no other test uses, valid as a table name: {@code [a-z][a-z0-9_]*}. */
  static String uniqueName(String prefix) {
    return TestServices.uniqueName(prefix);
  }

  private static Target of(SqlDatabase db) {
    return new Target(db.jdbcUrl(), db.user(), db.password(), db.dataSource());
  }
}
