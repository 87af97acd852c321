package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.CloudEmulator;
import dev.pubsubworker.testservices.SqlDatabase.Product;

/**
 * The six service slots of one environment. {@link TestServices} holds the one for the real
 * environment; tests build their own over an injected {@link ServiceEnvironment}.
 *
 * <p>Thread-safe; each service resolves at most once.
 */
final class ServiceRegistry {

  /** The project id used with every emulator (they accept any). */
  static final String PROJECT_ID = "test-project";

  private final ServiceSlot<RedisService> redis;
  private final ServiceSlot<SqlDatabase> postgres;
  private final ServiceSlot<SqlDatabase> mariadb;
  private final ServiceSlot<PubSubEmulator> pubsub;
  private final ServiceSlot<DatastoreEmulator> datastore;
  private final ServiceSlot<DatastoreEmulator> firestore;

  ServiceRegistry(ServiceEnvironment env) {
    redis = new ServiceSlot<>(ServiceKind.REDIS, env, () -> RedisSources.steps(env));
    postgres =
        new ServiceSlot<>(ServiceKind.POSTGRES, env, () -> SqlSources.steps(Product.POSTGRES, env));
    mariadb =
        new ServiceSlot<>(ServiceKind.MARIADB, env, () -> SqlSources.steps(Product.MARIADB, env));
    pubsub =
        new ServiceSlot<>(
            ServiceKind.PUBSUB_EMULATOR,
            env,
            () ->
                EmulatorSources.steps(
                    CloudEmulator.PUBSUB,
                    env,
                    (address, source) -> new PubSubEmulator(address, PROJECT_ID, source)));
    datastore =
        new ServiceSlot<>(
            ServiceKind.DATASTORE_EMULATOR,
            env,
            () ->
                EmulatorSources.steps(
                    CloudEmulator.DATASTORE,
                    env,
                    (address, source) ->
                        new DatastoreEmulator(
                            ServiceKind.DATASTORE_EMULATOR, address, PROJECT_ID, source)));
    firestore =
        new ServiceSlot<>(
            ServiceKind.FIRESTORE_EMULATOR,
            env,
            () ->
                EmulatorSources.steps(
                    CloudEmulator.FIRESTORE,
                    env,
                    (address, source) ->
                        new DatastoreEmulator(
                            ServiceKind.FIRESTORE_EMULATOR, address, PROJECT_ID, source)));
  }

  RedisService redis() {
    return redis.get();
  }

  SqlDatabase postgres() {
    return postgres.get();
  }

  SqlDatabase mariadb() {
    return mariadb.get();
  }

  PubSubEmulator pubsub() {
    return pubsub.get();
  }

  DatastoreEmulator datastore() {
    return datastore.get();
  }

  DatastoreEmulator firestoreInDatastoreMode() {
    return firestore.get();
  }

  /** The service of {@code kind}, as its accessor returns it. */
  Object get(ServiceKind kind) {
    return switch (kind) {
      case REDIS -> redis();
      case POSTGRES -> postgres();
      case MARIADB -> mariadb();
      case PUBSUB_EMULATOR -> pubsub();
      case DATASTORE_EMULATOR -> datastore();
      case FIRESTORE_EMULATOR -> firestoreInDatastoreMode();
    };
  }
}
