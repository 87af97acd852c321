package dev.pubsubworker.runtime.config;

/**
 * {@code pubsub-worker.lock-store.datastore}.
 *
 * @param projectId the Datastore project; empty means the worker's project
 * @param databaseId the database id; empty means the default database
 * @param namespace the namespace; empty means the default namespace
 * @param kind the entity kind of lock records
 * @param emulatorHost host:port of a Datastore emulator, empty for the real service
 */
public record DatastoreStoreConfig(
    String projectId, String databaseId, String namespace, String kind, String emulatorHost) {}
