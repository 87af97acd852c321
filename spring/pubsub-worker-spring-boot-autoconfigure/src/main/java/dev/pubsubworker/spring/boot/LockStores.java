package dev.pubsubworker.spring.boot;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.spring.boot.PubSubWorkerProperties.LockStoreType;
import java.util.function.Consumer;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.ClassUtils;

/**
 * Creates the lock store {@code pubsub-worker.lock-store} describes. Each kind lives in a class of
 * its own that is loaded only for that kind, so an application carries only its store's module;
 * asking for a kind whose module is missing is a start-up error naming the module to add.
 */
final class LockStores {

  static final String TYPE = PubSubWorkerProperties.PREFIX + ".lock-store.type";

  private static final Logger log = LoggerFactory.getLogger(LockStores.class);

  private LockStores() {}

  /**
   * The store.
   *
   * @param properties the settings
   * @param dataSources finds the application's DataSource by bean name (or the only one, for null)
   * @param projectId the Google Cloud project Spring Cloud GCP uses, if known
   * @param resources what the store opens for itself (the SQL store's own pool) and must close
   * @throws InvalidConfigurationPropertyValueException naming the setting that is wrong or missing
   */
  static LockBackend create(
      PubSubWorkerProperties properties,
      DataSourceLookup dataSources,
      Supplier<@Nullable String> projectId,
      OwnedResources resources) {
    LockStoreType type = properties.getLockStore().getType();
    if (type == null) {
      throw new InvalidConfigurationPropertyValueException(
          TYPE,
          null,
          "not set: choose redis, sql, datastore or in-memory (in-memory keeps the keys in this"
              + " process only), or define a LockBackend bean");
    }
    return switch (type) {
      case IN_MEMORY -> {
        log.warn(
            "lock store: in-memory; keys live in this process only, so another instance or a"
                + " restart can process a message again");
        yield new InMemoryLockBackend();
      }
      case REDIS -> {
        requireModule(
            "dev.pubsubworker.backend.redis.RedisLockBackend", "pubsub-worker-backend-redis");
        yield RedisLockStore.create(properties.getLockStore().getRedis());
      }
      case SQL -> {
        requireModule("dev.pubsubworker.backend.sql.SqlLockBackend", "pubsub-worker-backend-sql");
        yield SqlLockStore.create(properties.getLockStore().getSql(), dataSources, resources);
      }
      case DATASTORE -> {
        requireModule(
            "dev.pubsubworker.backend.datastore.DatastoreLockBackend",
            "pubsub-worker-backend-datastore");
        yield DatastoreLockStore.create(properties.getLockStore().getDatastore(), projectId.get());
      }
    };
  }

  private static void requireModule(String className, String artifactId) {
    if (!ClassUtils.isPresent(className, LockStores.class.getClassLoader())) {
      throw new InvalidConfigurationPropertyValueException(
          TYPE,
          null,
          "this lock store needs dev.pubsubworker:" + artifactId + " on the class path");
    }
  }

  /**
   * Calls {@code setter} with {@code value} unless it is null; an {@link IllegalArgumentException}
   * becomes a start-up error on {@code property}.
   *
   * @param shown the value as the error may show it (a URI with a password: a placeholder)
   */
  static <T> void set(
      String property, @Nullable T value, @Nullable Object shown, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(property, shown, e.getMessage());
    }
  }

  /** Finds a DataSource bean. */
  interface DataSourceLookup {

    /**
     * The bean named {@code name}, or the application's only (or primary) DataSource for null.
     *
     * @throws InvalidConfigurationPropertyValueException if there is none (or no unique one)
     */
    DataSource find(@Nullable String name);
  }
}
