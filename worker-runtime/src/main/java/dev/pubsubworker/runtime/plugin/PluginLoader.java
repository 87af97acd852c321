package dev.pubsubworker.runtime.plugin;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the worker's plugins: every {@link WorkerPlugin} that {@link ServiceLoader} sees on the
 * runtime's class path, then every one in each {@code *.jar} of the plugins folder, each jar in a
 * class loader of its own (parent: the runtime's), so plugins cannot see each other's classes.
 *
 * <p>Problems (a missing folder, a jar that does not load, two plugins with one name, a malformed
 * name) are collected and thrown together as an {@link InvalidConfigException}. The class loaders
 * of folder plugins stay open for the life of the process.
 */
public final class PluginLoader {

  private static final Logger log = LoggerFactory.getLogger(PluginLoader.class);
  private static final String PLUGINS = WorkerConfig.ROOT + ".plugins";

  private PluginLoader() {}

  /**
   * Loads every plugin for {@code config}.
   *
   * @param config the worker's config (plugins folder and plugin settings)
   * @param parent the class loader of the runtime
   * @throws InvalidConfigException listing every plugin problem found
   */
  public static List<LoadedPlugin> load(WorkerConfig config, ClassLoader parent) {
    List<ConfigProblem> problems = new ArrayList<>();
    List<LoadedPlugin> found = new ArrayList<>();
    collect(
        ServiceLoader.load(WorkerPlugin.class, parent),
        null,
        "class path",
        config,
        found,
        problems);
    config.pluginsDir().ifPresent(dir -> loadFolder(dir, parent, config, found, problems));

    Map<String, String> sources = new HashMap<>();
    for (LoadedPlugin p : found) {
      String name = p.name();
      if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9-]*")) {
        problems.add(
            new ConfigProblem(
                PLUGINS,
                "plugin "
                    + p.plugin().getClass().getName()
                    + " from "
                    + p.source()
                    + " has an invalid name '"
                    + name
                    + "' (letters, digits and dashes)",
                ""));
        continue;
      }
      String previous =
          sources.putIfAbsent(name, p.plugin().getClass().getName() + " from " + p.source());
      if (previous != null) {
        problems.add(
            new ConfigProblem(
                PLUGINS,
                "two plugins are named '"
                    + name
                    + "': "
                    + previous
                    + " and "
                    + p.plugin().getClass().getName()
                    + " from "
                    + p.source(),
                ""));
      }
    }
    if (!problems.isEmpty()) {
      throw new InvalidConfigException(problems);
    }
    for (LoadedPlugin p : found) {
      log.info("plugin {} ({}) from {}", p.name(), p.plugin().getClass().getName(), p.source());
    }
    return List.copyOf(found);
  }

  private static void loadFolder(
      Path dir,
      ClassLoader parent,
      WorkerConfig config,
      List<LoadedPlugin> found,
      List<ConfigProblem> problems) {
    if (!Files.isDirectory(dir)) {
      problems.add(
          new ConfigProblem(
              WorkerConfig.ROOT + ".plugins-dir", "is not a folder: " + dir.toAbsolutePath(), ""));
      return;
    }
    List<Path> jars;
    try (Stream<Path> files = Files.list(dir)) {
      jars = files.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().toList();
    } catch (IOException e) {
      problems.add(
          new ConfigProblem(
              WorkerConfig.ROOT + ".plugins-dir", "cannot be listed: " + e.getMessage(), ""));
      return;
    }
    for (Path jar : jars) {
      URL url;
      try {
        url = jar.toUri().toURL();
      } catch (MalformedURLException e) {
        problems.add(
            new ConfigProblem(WorkerConfig.ROOT + ".plugins-dir", "bad jar path " + jar, ""));
        continue;
      }
      URLClassLoader loader =
          new URLClassLoader("plugin:" + jar.getFileName(), new URL[] {url}, parent);
      int before = found.size();
      collect(
          ServiceLoader.load(WorkerPlugin.class, loader),
          loader,
          jar.toString(),
          config,
          found,
          problems);
      if (found.size() == before) {
        log.warn("plugin jar {} declares no {}", jar, WorkerPlugin.class.getName());
      }
    }
  }

  /**
   * Adds the providers of {@code services}; with a jar loader, only those defined by that jar (the
   * loader also sees the class path's).
   */
  private static void collect(
      ServiceLoader<WorkerPlugin> services,
      URLClassLoader jarLoader,
      String source,
      WorkerConfig config,
      List<LoadedPlugin> found,
      List<ConfigProblem> problems) {
    try {
      for (ServiceLoader.Provider<WorkerPlugin> provider : services.stream().toList()) {
        if (jarLoader != null && provider.type().getClassLoader() != jarLoader) {
          continue;
        }
        WorkerPlugin plugin = provider.get();
        found.add(new LoadedPlugin(plugin, source, pluginConfig(plugin, jarLoader, config)));
      }
    } catch (ServiceConfigurationError | ConfigException e) {
      problems.add(
          new ConfigProblem(
              PLUGINS, "cannot load a plugin from " + source + ": " + e.getMessage(), ""));
    }
  }

  /** The plugin's settings over the defaults in its own jar's reference.conf, if any. */
  private static Config pluginConfig(
      WorkerPlugin plugin, URLClassLoader jarLoader, WorkerConfig config) {
    if (plugin.name() == null) {
      return ConfigFactory.empty();
    }
    Config settings = config.pluginConfig(plugin.name());
    if (jarLoader == null) {
      // Class-path plugins' reference.conf files are already part of the loaded config.
      return settings;
    }
    URL reference = jarLoader.findResource("reference.conf");
    if (reference == null) {
      return settings;
    }
    String path = PLUGINS + "." + ConfigUtil.quoteString(plugin.name());
    Config defaults = ConfigFactory.parseURL(reference).resolve();
    return defaults.hasPath(path) ? settings.withFallback(defaults.getConfig(path)) : settings;
  }
}
