package dev.pubsubworker.runtime.plugin;

import com.typesafe.config.Config;
import dev.pubsubworker.api.WorkerPlugin;

/**
 * A plugin found by {@link PluginLoader}.
 *
 * @param plugin the plugin
 * @param source where it came from: {@code class path} or the jar's path
 * @param config its settings, over its own reference.conf defaults
 */
public record LoadedPlugin(WorkerPlugin plugin, String source, Config config) {

  /** The plugin's name. */
  public String name() {
    return plugin.name();
  }
}
