package dev.pubsubworker.runtime.config;

/**
 * {@code pubsub-worker.lock-store.sql}.
 *
 * @param jdbcUrl the JDBC URL (PostgreSQL, MySQL/MariaDB or H2)
 * @param user the database user, empty for none
 * @param password the password, empty for none; never printed
 * @param table the lock table's name
 * @param createTable whether to create the table if it is missing
 * @param maximumPoolSize the connection pool's size
 * @param connectTimeout how long getting a connection may take before the store call fails
 */
public record SqlStoreConfig(
    String jdbcUrl,
    String user,
    String password,
    String table,
    boolean createTable,
    int maximumPoolSize,
    java.time.Duration connectTimeout) {

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
        + ", connectTimeout="
        + connectTimeout
        + "]";
  }
}
