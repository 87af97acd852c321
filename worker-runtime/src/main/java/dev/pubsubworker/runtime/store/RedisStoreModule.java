package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;

/**
 * {@code lock-store.type = redis}: Redis or Memorystore through Lettuce. The settings are checked
 * when the module is built; the connection opens on the first store call.
 */
@InternalApi("the injector module of a configured lock store")
public final class RedisStoreModule extends AbstractModule {

  private final RedisLockSettings settings;

  /**
   * @param settings validated settings
   */
  public RedisStoreModule(RedisLockSettings settings) {
    this.settings = settings;
  }

  @Override
  protected void configure() {
    bind(LockBackend.class).to(RedisLockBackend.class);
    bind(LockAdmin.class).to(RedisLockBackend.class);
    bind(OpenResources.class).toInstance(new OpenResources());
  }

  @Provides
  @Singleton
  RedisLockBackend backend(OpenResources resources) {
    return resources.register(RedisLockBackend.create(settings));
  }
}
