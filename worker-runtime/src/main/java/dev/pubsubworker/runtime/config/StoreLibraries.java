package dev.pubsubworker.runtime.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The libraries each lock store needs on the class path. The runtime declares them as optional
 * dependencies, so that an application carries only the store it configures; a configured store
 * whose library is missing is a config problem naming the dependency to add, not a {@code
 * NoClassDefFoundError} at start.
 */
final class StoreLibraries {

  private StoreLibraries() {}

  /** A library a lock store needs: its Maven coordinates, and a class only it has. */
  private record Library(String coordinates, String probeClass) {}

  private static final Map<LockStoreType, List<Library>> LIBRARIES =
      Map.of(
          LockStoreType.REDIS,
          List.of(
              new Library(
                  "dev.pubsubworker:pubsub-worker-backend-redis",
                  "dev.pubsubworker.backend.redis.RedisLockBackend")),
          LockStoreType.DATASTORE,
          List.of(
              new Library(
                  "dev.pubsubworker:pubsub-worker-backend-datastore",
                  "dev.pubsubworker.backend.datastore.DatastoreLockBackend")),
          LockStoreType.SQL,
          List.of(
              new Library(
                  "dev.pubsubworker:pubsub-worker-backend-sql",
                  "dev.pubsubworker.backend.sql.SqlLockBackend"),
              new Library("com.zaxxer:HikariCP", "com.zaxxer.hikari.HikariDataSource")));

  /**
   * What {@code type} needs and {@code loader} cannot load, as one line naming the dependencies to
   * add; empty when everything is there (the in-memory store is part of worker-core).
   */
  static Optional<String> missing(LockStoreType type, ClassLoader loader) {
    List<String> missing = new ArrayList<>();
    for (Library library : LIBRARIES.getOrDefault(type, List.of())) {
      try {
        Class.forName(library.probeClass(), false, loader);
      } catch (ClassNotFoundException | LinkageError e) {
        missing.add(library.coordinates());
      }
    }
    if (missing.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "'"
            + type.name().toLowerCase(Locale.ROOT).replace('_', '-')
            + "' needs "
            + String.join(" and ", missing)
            + " on the class path, and the runtime declares the lock stores as optional"
            + " dependencies: add "
            + (missing.size() == 1 ? "it" : "them")
            + " to the application's dependencies");
  }
}
