package dev.pubsubworker.runtime.store;

import com.google.inject.Module;
import dev.pubsubworker.runtime.config.LockStoreConfig;

/** Picks the module of the configured lock store. */
public final class LockStoreModules {

  private LockStoreModules() {}

  /**
   * The module for {@code config.type()}.
   *
   * @param config the lock-store settings
   * @param projectId the worker's project, the Datastore store's default project
   */
  public static Module forConfig(LockStoreConfig config, String projectId) {
    return switch (config.type()) {
      case IN_MEMORY -> new InMemoryStoreModule();
      case REDIS, SQL, DATASTORE ->
          throw new IllegalStateException(
              "lock-store type " + config.type() + " is wired when its backend lands");
    };
  }
}
