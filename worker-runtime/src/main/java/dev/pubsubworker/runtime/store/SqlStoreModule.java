package dev.pubsubworker.runtime.store;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockBackendSettings;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.config.SqlStoreConfig;

/**
 * {@code lock-store.type = sql}: PostgreSQL, MySQL/MariaDB or H2 through a HikariCP pool the module
 * opens when the store is first used and closes with it. The dialect is detected from the
 * connection. The backend is also bound as the {@link
 * dev.pubsubworker.core.TransactionalLockBackend} that transactional subscriptions use.
 */
public final class SqlStoreModule extends AbstractModule {

  private final SqlStoreConfig config;
  private final SqlLockBackendSettings settings;

  /**
   * @param config the pool's settings
   * @param settings validated backend settings
   */
  public SqlStoreModule(SqlStoreConfig config, SqlLockBackendSettings settings) {
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
    HikariConfig pool = new HikariConfig();
    pool.setPoolName("pubsub-worker-lock-store");
    pool.setJdbcUrl(config.jdbcUrl());
    if (!config.user().isEmpty()) {
      pool.setUsername(config.user());
    }
    if (!config.password().isEmpty()) {
      pool.setPassword(config.password());
    }
    pool.setMaximumPoolSize(config.maximumPoolSize());
    // Bounds a store call waiting for a connection, so an unreachable database fails fast.
    pool.setConnectionTimeout(config.connectTimeout().toMillis());
    // Start without a connection: a database that is down fails the first verb (and readiness),
    // not the construction of the worker.
    pool.setInitializationFailTimeout(-1);
    HikariDataSource dataSource = resources.register(new HikariDataSource(pool));
    return resources.register(SqlLockBackend.create(dataSource, settings));
  }
}
