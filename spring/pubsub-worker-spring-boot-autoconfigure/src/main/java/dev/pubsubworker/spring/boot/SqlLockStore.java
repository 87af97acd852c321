package dev.pubsubworker.spring.boot;

import static dev.pubsubworker.spring.boot.LockStores.set;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.sql.SqlDialect;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.ClassUtils;

/**
 * {@code lock-store.type = sql}: loaded only then. With {@code url} the store has a HikariCP pool
 * of its own (created without a connection, so a database that is down fails the first verb and the
 * health indicator, not the start); without it, it borrows from the application's DataSource, whose
 * pool and driver timeouts are the application's to set (the store bounds its own statements and
 * socket reads either way).
 */
final class SqlLockStore {

  private static final String P = PubSubWorkerProperties.PREFIX + ".lock-store.sql.";

  private SqlLockStore() {}

  static LockBackend create(
      PubSubWorkerProperties.Sql sql,
      LockStores.DataSourceLookup dataSources,
      OwnedResources owned) {
    SqlLockSettings.Builder b = SqlLockSettings.newBuilder();
    set(P + "table", sql.getTable(), sql.getTable(), b::table);
    b.createTableIfMissing(sql.isCreateTable());
    String dialect = sql.getDialect();
    if (dialect != null) {
      b.dialect(dialect(dialect));
    }
    set(
        P + "statement-timeout",
        sql.getStatementTimeout(),
        sql.getStatementTimeout(),
        b::statementTimeout);
    set(P + "socket-timeout", sql.getSocketTimeout(), sql.getSocketTimeout(), b::socketTimeout);
    set(
        P + "transient-retries",
        sql.getTransientRetries(),
        sql.getTransientRetries(),
        b::transientRetries);
    SqlLockSettings template;
    try {
      template = b.build();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "socket-timeout", sql.getSocketTimeout(), e.getMessage());
    }
    String url = sql.getUrl();
    DataSource dataSource;
    if (url == null) {
      if (sql.getUsername() != null || sql.getPassword() != null) {
        throw new InvalidConfigurationPropertyValueException(
            P + "username",
            sql.getUsername(),
            "username and password belong to the store's own pool: set url too, or configure the"
                + " application's DataSource");
      }
      dataSource = dataSources.find(sql.getDataSource());
    } else {
      if (sql.getDataSource() != null) {
        throw new InvalidConfigurationPropertyValueException(
            P + "data-source",
            sql.getDataSource(),
            "set either url (a pool of the store's own) or data-source (a DataSource bean), not"
                + " both");
      }
      dataSource = owned.register(pool(sql, template));
    }
    try {
      return SqlLockBackend.create(template.toBuilder().dataSource(dataSource).build());
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "table", sql.getTable(), e.getMessage());
    }
  }

  private static SqlDialect dialect(String name) {
    try {
      return SqlDialect.valueOf(name.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "dialect", name, "must be postgresql, mariadb, mysql or h2");
    }
  }

  /**
   * The store's own pool on {@code url}: Hikari waits at most {@code connect-timeout} for a
   * connection (and to validate one), and the PostgreSQL and MySQL/MariaDB drivers get the same
   * connect timeout and the store's socket timeout.
   */
  private static HikariDataSource pool(PubSubWorkerProperties.Sql sql, SqlLockSettings settings) {
    if (!ClassUtils.isPresent(
        "com.zaxxer.hikari.HikariDataSource", SqlLockStore.class.getClassLoader())) {
      throw new InvalidConfigurationPropertyValueException(
          P + "url",
          sql.getUrl(),
          "the store's own pool needs com.zaxxer:HikariCP on the class path");
    }
    String url = sql.getUrl();
    if (sql.getMaximumPoolSize() < 1) {
      throw new InvalidConfigurationPropertyValueException(
          P + "maximum-pool-size", sql.getMaximumPoolSize(), "must be at least 1");
    }
    Duration connect = sql.getConnectTimeout();
    if (connect.compareTo(Duration.ofMillis(250)) < 0) {
      throw new InvalidConfigurationPropertyValueException(
          P + "connect-timeout", connect, "must be at least 250ms (HikariCP's least)");
    }
    HikariConfig pool = new HikariConfig();
    pool.setPoolName("pubsub-worker-lock-store");
    try {
      pool.setJdbcUrl(url);
    } catch (RuntimeException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "url", "(not shown)", e.getMessage());
    }
    if (sql.getUsername() != null) {
      pool.setUsername(sql.getUsername());
    }
    if (sql.getPassword() != null) {
      pool.setPassword(sql.getPassword());
    }
    pool.setMaximumPoolSize(sql.getMaximumPoolSize());
    pool.setConnectionTimeout(connect.toMillis());
    pool.setValidationTimeout(connect.toMillis());
    String seconds = String.valueOf(Math.max(1, (connect.toMillis() + 999) / 1000));
    String socketSeconds =
        String.valueOf(Math.max(1, (settings.socketTimeout().toMillis() + 999) / 1000));
    if (url != null && url.startsWith("jdbc:postgresql:")) {
      pool.addDataSourceProperty("connectTimeout", seconds);
      pool.addDataSourceProperty("loginTimeout", seconds);
      pool.addDataSourceProperty("socketTimeout", socketSeconds);
    } else if (url != null && (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:"))) {
      pool.addDataSourceProperty("connectTimeout", String.valueOf(connect.toMillis()));
      pool.addDataSourceProperty(
          "socketTimeout", String.valueOf(settings.socketTimeout().toMillis()));
    }
    // Start without a connection: a database that is down fails the first verb (and the health
    // indicator), not the application's start.
    pool.setInitializationFailTimeout(-1);
    return new HikariDataSource(pool);
  }
}
