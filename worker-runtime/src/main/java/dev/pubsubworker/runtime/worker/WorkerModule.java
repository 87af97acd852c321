package dev.pubsubworker.runtime.worker;

import com.google.inject.AbstractModule;
import com.google.inject.multibindings.MapBinder;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStoreCalls;

/**
 * The runtime's own bindings: the config, the (possibly empty) handler map and the tracker of
 * lock-store calls in progress. Only binds; the guards (one per subscription) are the worker's.
 */
final class WorkerModule extends AbstractModule {

  private final WorkerConfig config;
  private final LockStoreCalls lockStoreCalls;

  WorkerModule(WorkerConfig config, LockStoreCalls lockStoreCalls) {
    this.config = config;
    this.lockStoreCalls = lockStoreCalls;
  }

  @Override
  protected void configure() {
    bind(WorkerConfig.class).toInstance(config);
    bind(LockStoreCalls.class).toInstance(lockStoreCalls);
    // Declared here so the map exists even when no plugin contributes a handler.
    MapBinder.newMapBinder(binder(), String.class, MessageHandler.class);
  }
}
