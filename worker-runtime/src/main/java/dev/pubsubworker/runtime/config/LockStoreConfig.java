package dev.pubsubworker.runtime.config;

/**
 * {@code pubsub-worker.lock-store}: which store, and the settings of each.
 *
 * @param type the store in use
 * @param redis Redis settings (read and checked whatever the type)
 * @param sql SQL settings
 * @param datastore Datastore settings
 */
public record LockStoreConfig(
    LockStoreType type,
    RedisStoreConfig redis,
    SqlStoreConfig sql,
    DatastoreStoreConfig datastore) {

  /**
   * The store in use and where it is, for an operator's error line, with secrets masked: {@code sql
   * jdbc:postgresql://db:5432/orders}, {@code redis redis://user:***@cache:6379}, {@code datastore
   * emulator 127.0.0.1:8081}.
   */
  public String where() {
    return switch (type) {
      case IN_MEMORY -> "in-memory";
      case REDIS -> "redis " + Secrets.maskUri(redis.uri());
      case SQL -> "sql " + Secrets.maskUri(sql.jdbcUrl());
      case DATASTORE ->
          "datastore "
              + (datastore.emulatorHost().isEmpty()
                  ? "(Google Cloud)"
                  : "emulator " + datastore.emulatorHost());
    };
  }
}
