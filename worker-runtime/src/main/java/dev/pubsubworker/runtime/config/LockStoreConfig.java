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
    DatastoreStoreConfig datastore) {}
