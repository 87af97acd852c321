package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;

/**
 * {@code lock-store.type = in-memory}: a process-local store. Records are lost at exit and not
 * shared between instances, so it suits tests and single-instance demos only.
 */
@InternalApi("the injector module of a configured lock store")
public final class InMemoryStoreModule extends AbstractModule {

  @Override
  protected void configure() {
    bind(LockBackend.class).to(InMemoryLockBackend.class);
    bind(LockAdmin.class).to(InMemoryLockBackend.class);
    bind(OpenResources.class).toInstance(new OpenResources());
  }

  @Provides
  @Singleton
  InMemoryLockBackend backend(OpenResources resources) {
    return resources.register(new InMemoryLockBackend());
  }
}
