package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.Module;
import dev.pubsubworker.backend.datastore.DatastoreLockSettings;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.DatastoreStoreConfig;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.LockStoreConfig;
import dev.pubsubworker.runtime.config.RedisStoreConfig;
import dev.pubsubworker.runtime.config.SqlStoreConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Picks the module of the configured lock store and turns its settings into the backend's own, so
 * that a value the backend refuses is reported like any other config problem.
 */
@InternalApi("picks the injector module of the configured lock store")
public final class LockStoreModules {

  private static final String PATH = WorkerConfig.ROOT + ".lock-store.";

  private LockStoreModules() {}

  /**
   * The module for {@code config.type()}.
   *
   * @param config the lock-store settings
   * @param projectId the worker's project, the Datastore store's default project
   * @throws InvalidConfigException if the backend refuses a setting (the problem names the
   *     setting), or the store's library is not on the class path (the problem names the dependency
   *     to add): the runtime declares the stores as optional dependencies, so an application
   *     carries only the one it uses
   */
  public static Module forConfig(LockStoreConfig config, String projectId) {
    List<ConfigProblem> problems = new ArrayList<>();
    Module module =
        switch (config.type()) {
          case IN_MEMORY -> new InMemoryStoreModule();
          case REDIS -> new RedisStoreModule(redis(config.redis(), problems));
          case DATASTORE ->
              new DatastoreStoreModule(datastore(config.datastore(), projectId, problems));
          case SQL -> new SqlStoreModule(config.sql(), sql(config.sql(), problems));
        };
    if (!problems.isEmpty()) {
      throw new InvalidConfigException(problems);
    }
    return module;
  }

  private static RedisLockSettings redis(RedisStoreConfig c, List<ConfigProblem> problems) {
    RedisLockSettings.Builder b = RedisLockSettings.newBuilder();
    set(problems, "redis.uri", () -> b.uri(c.uri()));
    set(problems, "redis.key-prefix", () -> b.keyPrefix(c.keyPrefix()));
    set(problems, "redis.cluster", () -> b.cluster(c.cluster()));
    if (!c.hashTag().isEmpty()) {
      set(problems, "redis.hash-tag", () -> b.hashTag(c.hashTag()));
    }
    set(problems, "redis.command-timeout", () -> b.commandTimeout(c.commandTimeout()));
    set(problems, "redis.connect-timeout", () -> b.connectTimeout(c.connectTimeout()));
    return build(problems, "redis", b::build);
  }

  private static SqlLockSettings sql(SqlStoreConfig c, List<ConfigProblem> problems) {
    SqlLockSettings.Builder b = SqlLockSettings.newBuilder();
    set(problems, "sql.table", () -> b.table(c.table()));
    set(problems, "sql.create-table", () -> b.createTableIfMissing(c.createTable()));
    set(problems, "sql.statement-timeout", () -> b.statementTimeout(c.statementTimeout()));
    set(problems, "sql.socket-timeout", () -> b.socketTimeout(c.socketTimeout()));
    return build(problems, "sql", b::build);
  }

  private static DatastoreLockSettings datastore(
      DatastoreStoreConfig c, String projectId, List<ConfigProblem> problems) {
    DatastoreLockSettings.Builder b = DatastoreLockSettings.newBuilder();
    String project = c.projectId().isEmpty() ? projectId : c.projectId();
    set(problems, "datastore.project-id", () -> b.projectId(project));
    if (!c.databaseId().isEmpty()) {
      set(problems, "datastore.database-id", () -> b.databaseId(c.databaseId()));
    }
    set(problems, "datastore.namespace", () -> b.namespace(c.namespace()));
    set(problems, "datastore.kind", () -> b.kind(c.kind()));
    if (!c.emulatorHost().isEmpty()) {
      set(problems, "datastore.emulator-host", () -> b.emulatorHost(c.emulatorHost()));
    }
    return build(problems, "datastore", b::build);
  }

  /**
   * Builds the backend's settings once every setting was accepted, recording a refusal of the
   * combination under {@code path}; null when there are problems (the caller throws them).
   */
  private static <T> T build(List<ConfigProblem> problems, String path, Supplier<T> builder) {
    if (!problems.isEmpty()) {
      return null;
    }
    try {
      return builder.get();
    } catch (IllegalArgumentException e) {
      problems.add(new ConfigProblem(PATH + path, e.getMessage(), ""));
      return null;
    }
  }

  /** Applies one setting, recording the backend's refusal under {@code path}. */
  private static void set(List<ConfigProblem> problems, String path, Runnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      problems.add(new ConfigProblem(PATH + path, e.getMessage(), ""));
    }
  }
}
