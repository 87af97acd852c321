package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.pubsubworker.backend.datastore.DatastoreLockBackend;
import dev.pubsubworker.backend.datastore.DatastoreLockSettings;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;

/**
 * {@code lock-store.type = datastore}: Firestore in Datastore mode (or its emulator), with
 * Application Default Credentials. The settings are checked when the module is built; the client is
 * created when the store is first injected and makes no RPC until the first verb.
 */
@InternalApi("the injector module of a configured lock store")
public final class DatastoreStoreModule extends AbstractModule {

  private final DatastoreLockSettings settings;

  /**
   * @param settings validated settings
   */
  public DatastoreStoreModule(DatastoreLockSettings settings) {
    this.settings = settings;
  }

  @Override
  protected void configure() {
    bind(LockBackend.class).to(DatastoreLockBackend.class);
    bind(LockAdmin.class).to(DatastoreLockBackend.class);
    bind(OpenResources.class).toInstance(new OpenResources());
  }

  @Provides
  @Singleton
  DatastoreLockBackend backend(OpenResources resources) {
    return resources.register(DatastoreLockBackend.create(settings));
  }
}
