package dev.pubsubworker.testservices;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/**
 * Opens the shared connection pools; kept apart so HikariCP loads only when a pool is asked for.
 */
final class HikariPools {

  private HikariPools() {}

  /** A small pool that opens connections on demand and closes at JVM exit. */
  static DataSource open(String poolName, String driverClass, JdbcEndpoint endpoint) {
    HikariConfig config = new HikariConfig();
    config.setPoolName(poolName);
    config.setDriverClassName(driverClass);
    config.setJdbcUrl(endpoint.jdbcUrl());
    if (!endpoint.user().isEmpty()) {
      config.setUsername(endpoint.user());
    }
    if (!endpoint.password().isEmpty()) {
      config.setPassword(endpoint.password());
    }
    config.setMaximumPoolSize(SqlDatabase.MAX_POOL_SIZE);
    // Idle connections cost the shared server slots; tests open what they need.
    config.setMinimumIdle(0);
    config.setConnectionTimeout(10_000);
    HikariDataSource dataSource = new HikariDataSource(config);
    ShutdownActions.register("connection pool " + poolName, dataSource);
    return dataSource;
  }
}
