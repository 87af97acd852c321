package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Stage;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.config.WorkerConfig;

/**
 * The configured lock store on its own, without plugins or subscriptions: what the operator tools
 * ({@code inspect}, {@code forget}, {@code purge}) work on. Opened on first use; {@link #close()}
 * closes it.
 */
@InternalApi("the worker's opened lock store")
public final class LockStore implements AutoCloseable {

  private final Injector injector;

  private LockStore(Injector injector) {
    this.injector = injector;
  }

  /** The store {@code config} describes; nothing is opened until first used. */
  public static LockStore of(WorkerConfig config) {
    return new LockStore(
        Guice.createInjector(
            Stage.DEVELOPMENT, LockStoreModules.forConfig(config.lockStore(), config.projectId())));
  }

  /** The store's backend. */
  public LockBackend backend() {
    return injector.getInstance(LockBackend.class);
  }

  /** The store's admin view. */
  public LockAdmin admin() {
    return injector.getInstance(LockAdmin.class);
  }

  /** Closes what the store opened (nothing, if it was never used). */
  @Override
  public void close() {
    injector.getInstance(OpenResources.class).close();
  }
}
