package dev.pubsubworker.backend.sql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** The databases the tests run on. */
final class Databases {

  private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static Target postgres;
  private static Target mariadb;

  private Databases() {}

  /** Where a database is, and a shared pool on it. */
  record Target(String jdbcUrl, String user, String password, DataSource shared) {
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

  static synchronized Target postgres() {
    if (postgres == null) {
      postgres = local("jdbc:postgresql://127.0.0.1:5432/test", "postgres");
    }
    return postgres;
  }

  static synchronized Target mariadb() {
    if (mariadb == null) {
      mariadb = local("jdbc:mariadb://127.0.0.1:3306/test", "root");
    }
    return mariadb;
  }

  /** A fresh in-memory H2 database, kept until its last pool closes. */
  static Target h2() {
    String url = "jdbc:h2:mem:" + uniqueName("h2") + ";DB_CLOSE_DELAY=-1";
    Target bare = new Target(url, "sa", "", null);
    return new Target(url, "sa", "", bare.newPool("h2", 16, null));
  }

  static String uniqueName(String prefix) {
    return prefix + "_" + RUN + "_" + COUNTER.incrementAndGet();
  }

  private static Target local(String url, String user) {
    Target bare = new Target(url, user, "", null);
    return new Target(url, user, "", bare.newPool("shared", 16, null));
  }
}
