package dev.pubsubworker.api;

import com.google.inject.Module;
import com.typesafe.config.Config;

/**
 * A handler plugin: found with {@link java.util.ServiceLoader} (list the implementation in {@code
 * META-INF/services/dev.pubsubworker.api.WorkerPlugin}), on the class path or as a jar in the
 * configured plugins folder, where each jar gets its own class loader.
 *
 * <p>The module it returns contributes handlers with {@link Handlers#bind} and binds whatever they
 * need. Following Guice's advice, the module only binds: no I/O and no threads in {@code
 * configure()}; anything with a lifecycle is created lazily or owned by the handler.
 */
public interface WorkerPlugin {

  /**
   * The plugin's name: its settings live under {@code pubsub-worker.plugins.NAME}. Letters, digits
   * and dashes.
   */
  String name();

  /**
   * The plugin's Guice module.
   *
   * @param config the plugin's settings ({@code pubsub-worker.plugins.NAME}), over the plugin's own
   *     {@code reference.conf} defaults if it ships one
   */
  Module module(Config config);
}
