package dev.pubsubworker.runtime.worker;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.MapBinder;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The runtime's own bindings: the config, the (possibly empty) handler map, the tracker of
 * lock-store calls in progress, and the guard over the bound lock store (tracked by it). Only
 * binds; the guard is created when first injected.
 */
final class WorkerModule extends AbstractModule {

  private final WorkerConfig config;
  private final List<GuardListener> guardListeners;
  private final UnaryOperator<String> keyLogFormat;
  private final LockStoreCalls lockStoreCalls;

  WorkerModule(
      WorkerConfig config,
      List<GuardListener> guardListeners,
      UnaryOperator<String> keyLogFormat,
      LockStoreCalls lockStoreCalls) {
    this.config = config;
    this.guardListeners = List.copyOf(guardListeners);
    this.keyLogFormat = keyLogFormat;
    this.lockStoreCalls = lockStoreCalls;
  }

  @Override
  protected void configure() {
    bind(WorkerConfig.class).toInstance(config);
    bind(LockStoreCalls.class).toInstance(lockStoreCalls);
    // Declared here so the map exists even when no plugin contributes a handler.
    MapBinder.newMapBinder(binder(), String.class, MessageHandler.class);
  }

  @Provides
  @Singleton
  IdempotencyGuard guard(LockBackend backend) {
    // The guard's store calls are tracked, so that liveness sees threads stuck in the store.
    IdempotencyGuard.Builder b =
        IdempotencyGuard.newBuilder(lockStoreCalls.track(backend)).keyLogFormat(keyLogFormat);
    guardListeners.forEach(b::listener);
    return b.build();
  }
}
