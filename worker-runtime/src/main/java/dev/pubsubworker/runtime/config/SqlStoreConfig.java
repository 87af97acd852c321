package dev.pubsubworker.runtime.config;

import java.time.Duration;
import java.util.Map;

/**
 * {@code pubsub-worker.lock-store.sql}.
 *
 * @param jdbcUrl the JDBC URL (PostgreSQL, MySQL/MariaDB or H2)
 * @param user the database user, empty for none
 * @param password the password, empty for none; never printed
 * @param table the lock table's name
 * @param createTable whether to create the table if it is missing
 * @param maximumPoolSize the connection pool's size
 * @param statementTimeout how long one of the store's statements may run before it is cancelled
 * @param socketTimeout how long a connection waits for the database's next bytes
 * @param connectTimeout how long getting a connection (from the pool, or a new one) may take
 * @param hikari HikariCP settings passed through to the pool by HikariCP's names ({@code
 *     lock-store.sql.hikari}), checked when read; never the URL, the credentials, the pool size or
 *     the timeouts above
 */
public record SqlStoreConfig(
    String jdbcUrl,
    String user,
    String password,
    String table,
    boolean createTable,
    int maximumPoolSize,
    Duration statementTimeout,
    Duration socketTimeout,
    Duration connectTimeout,
    Map<String, String> hikari) {

  /** Copies {@code hikari}. */
  public SqlStoreConfig {
    hikari = Map.copyOf(hikari);
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "SqlStoreConfig[jdbcUrl="
        + Secrets.maskUri(jdbcUrl)
        + ", user="
        + user
        + ", password="
        + (password.isEmpty() ? "" : "***")
        + ", table="
        + table
        + ", createTable="
        + createTable
        + ", maximumPoolSize="
        + maximumPoolSize
        + ", statementTimeout="
        + statementTimeout
        + ", socketTimeout="
        + socketTimeout
        + ", connectTimeout="
        + connectTimeout
        + ", hikari="
        + new java.util.TreeMap<>(hikari)
        + "]";
  }
}
