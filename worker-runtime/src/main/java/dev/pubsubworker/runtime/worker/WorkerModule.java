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
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The runtime's own bindings: the config, the (possibly empty) handler map, and the guard over the
 * bound lock store. Only binds; the guard is created when first injected.
 */
final class WorkerModule extends AbstractModule {

  private final WorkerConfig config;
  private final List<GuardListener> guardListeners;
  private final UnaryOperator<String> keyLogFormat;

  WorkerModule(
      WorkerConfig config, List<GuardListener> guardListeners, UnaryOperator<String> keyLogFormat) {
    this.config = config;
    this.guardListeners = List.copyOf(guardListeners);
    this.keyLogFormat = keyLogFormat;
  }

  @Override
  protected void configure() {
    bind(WorkerConfig.class).toInstance(config);
    // Declared here so the map exists even when no plugin contributes a handler.
    MapBinder.newMapBinder(binder(), String.class, MessageHandler.class);
  }

  @Provides
  @Singleton
  IdempotencyGuard guard(LockBackend backend) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(backend).keyLogFormat(keyLogFormat);
    guardListeners.forEach(b::listener);
    return b.build();
  }
}
