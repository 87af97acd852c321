package dev.pubsubworker.spring.boot;

import static dev.pubsubworker.spring.boot.LockStores.set;

import dev.pubsubworker.backend.datastore.DatastoreLockBackend;
import dev.pubsubworker.backend.datastore.DatastoreLockSettings;
import dev.pubsubworker.core.LockBackend;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code lock-store.type = datastore}: loaded only then. */
final class DatastoreLockStore {

  private static final String P = PubSubWorkerProperties.PREFIX + ".lock-store.datastore.";

  private DatastoreLockStore() {}

  /**
   * A backend on these settings, in {@code projectId} unless {@code project-id} names another; no
   * RPC (the first verb makes one).
   */
  static LockBackend create(PubSubWorkerProperties.Datastore d, @Nullable String projectId) {
    DatastoreLockSettings.Builder b = DatastoreLockSettings.newBuilder();
    String project = d.getProjectId() != null ? d.getProjectId() : projectId;
    set(P + "project-id", project, project, b::projectId);
    set(P + "database-id", d.getDatabaseId(), d.getDatabaseId(), b::databaseId);
    set(P + "namespace", d.getNamespace(), d.getNamespace(), b::namespace);
    set(P + "kind", d.getKind(), d.getKind(), b::kind);
    set(P + "emulator-host", d.getEmulatorHost(), d.getEmulatorHost(), b::emulatorHost);
    set(P + "max-attempts", d.getMaxAttempts(), d.getMaxAttempts(), b::maxAttempts);
    set(P + "rpc-timeout", d.getRpcTimeout(), d.getRpcTimeout(), b::rpcTimeout);
    DatastoreLockSettings settings;
    try {
      settings = b.build();
      return DatastoreLockBackend.create(settings);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "project-id", project, e.getMessage());
    }
  }
}
