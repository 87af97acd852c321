package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.config.SqlStoreConfig;
import java.time.Duration;
import java.util.Properties;

/**
 * {@code lock-store.type = sql}: PostgreSQL, MySQL/MariaDB or H2 through a HikariCP pool the module
 * opens when the store is first used and closes with it. The dialect is detected from the
 * connection. The backend is also bound as the {@link
 * dev.pubsubworker.core.TransactionalLockBackend} that transactional subscriptions use.
 *
 * <p>No store call can wait forever: the backend bounds its statements ({@code statement-timeout})
 * and their socket reads ({@code socket-timeout}); the pool bounds getting a connection ({@code
 * connect-timeout}: Hikari's connection and validation timeouts) and the driver bounds opening one
 * (see {@link #applyTimeouts}).
 */
@InternalApi("the injector module of a configured lock store")
public final class SqlStoreModule extends AbstractModule {

  private final SqlStoreConfig config;
  private final SqlLockSettings settings;

  /**
   * @param config the pool's settings
   * @param settings validated backend settings, a template without a data source: the module opens
   *     the pool and completes the settings with it
   */
  public SqlStoreModule(SqlStoreConfig config, SqlLockSettings settings) {
    this.config = config;
    this.settings = settings;
  }

  @Override
  protected void configure() {
    bind(LockBackend.class).to(SqlLockBackend.class);
    bind(LockAdmin.class).to(SqlLockBackend.class);
    bind(OpenResources.class).toInstance(new OpenResources());
  }

  @Provides
  @Singleton
  SqlLockBackend backend(OpenResources resources) {
    HikariDataSource dataSource = resources.register(new HikariDataSource(poolConfig(config)));
    return resources.register(
        SqlLockBackend.create(settings.toBuilder().dataSource(dataSource).build()));
  }

  /**
   * The pool's configuration: {@code lock-store.sql.hikari}'s pass-through settings first, then the
   * worker's own (name, URL, credentials, size, timeouts), which the config reader has kept out of
   * the pass-through.
   */
  static HikariConfig poolConfig(SqlStoreConfig config) {
    Properties passThrough = new Properties();
    passThrough.putAll(config.hikari());
    HikariConfig pool = passThrough.isEmpty() ? new HikariConfig() : new HikariConfig(passThrough);
    pool.setPoolName("pubsub-worker-lock-store");
    pool.setJdbcUrl(config.jdbcUrl());
    if (!config.user().isEmpty()) {
      pool.setUsername(config.user());
    }
    if (!config.password().isEmpty()) {
      pool.setPassword(config.password());
    }
    pool.setMaximumPoolSize(config.maximumPoolSize());
    applyTimeouts(pool, config);
    // Start without a connection: a database that is down fails the first verb (and readiness),
    // not the construction of the worker.
    pool.setInitializationFailTimeout(-1);
    return pool;
  }

  /**
   * The pool's and the driver's timeouts. Hikari: {@code connectionTimeout} (waiting for a
   * connection) is {@code connect-timeout}, and so is {@code validationTimeout} (checking an idle
   * one), so a borrow on a database that stopped answering fails after about {@code
   * connect-timeout}. Driver properties, by URL prefix: PostgreSQL {@code connectTimeout} and
   * {@code loginTimeout} (connect-timeout, whole seconds), {@code socketTimeout} (socket-timeout,
   * whole seconds) and {@code cancelSignalTimeout} (socket-timeout minus statement-timeout, at
   * least 1 s: a statement whose {@code setQueryTimeout} fired waits for its cancel request, which
   * a frozen network holds too; the backend's own statements are cancelled by the server and send
   * none, but its batched completes and a transactional handler's statements may); MariaDB and
   * MySQL {@code connectTimeout} and {@code socketTimeout} (milliseconds). H2 runs in the process
   * and gets none.
   */
  static void applyTimeouts(HikariConfig pool, SqlStoreConfig config) {
    long connectMillis = Math.max(250, config.connectTimeout().toMillis());
    pool.setConnectionTimeout(connectMillis);
    pool.setValidationTimeout(connectMillis);
    String url = config.jdbcUrl();
    if (url.startsWith("jdbc:postgresql:")) {
      pool.addDataSourceProperty("connectTimeout", seconds(config.connectTimeout()));
      pool.addDataSourceProperty("loginTimeout", seconds(config.connectTimeout()));
      pool.addDataSourceProperty("socketTimeout", seconds(config.socketTimeout()));
      pool.addDataSourceProperty(
          "cancelSignalTimeout", seconds(config.socketTimeout().minus(config.statementTimeout())));
    } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      pool.addDataSourceProperty("connectTimeout", String.valueOf(connectMillis));
      pool.addDataSourceProperty(
          "socketTimeout", String.valueOf(config.socketTimeout().toMillis()));
    }
  }

  /** Whole seconds, rounded up, at least 1. */
  private static String seconds(Duration d) {
    return String.valueOf(Math.max(1, (d.toMillis() + 999) / 1000));
  }
}
