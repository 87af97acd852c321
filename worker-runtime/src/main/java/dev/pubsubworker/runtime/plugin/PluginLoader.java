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
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the worker's plugins: every {@link WorkerPlugin} that {@link ServiceLoader} sees on the
 * runtime's class path, then every one in each {@code *.jar} of the plugins folder, each jar in a
 * class loader of its own (parent: the runtime's), so plugins cannot see each other's classes. A
 * jar's loader is child-first for the packages the jar contains, so a plugin whose classes are also
 * on the runtime's class path (the example plugin inside the executable jar, say) still runs from
 * its jar; the plugin API, Guice, Typesafe Config, SLF4J and the JDK always come from the runtime
 * (see {@link PluginClassLoader}). Only the providers a jar's own service file declares are loaded
 * from it.
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
    collect(ServiceLoader.load(WorkerPlugin.class, parent), "class path", config, found, problems);
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
    if (problems.isEmpty()) {
      checkSettings(config, parent, found, problems);
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
      jars =
          files
              .filter(f -> f.getFileName().toString().endsWith(".jar") && Files.isRegularFile(f))
              .sorted()
              .toList();
    } catch (IOException e) {
      problems.add(
          new ConfigProblem(
              WorkerConfig.ROOT + ".plugins-dir", "cannot be listed: " + e.getMessage(), ""));
      return;
    }
    for (Path jar : jars) {
      PluginClassLoader loader;
      Set<String> declared;
      try {
        loader = PluginClassLoader.forJar(jar, parent);
        declared = declaredProviders(loader);
      } catch (IOException | UncheckedIOException e) {
        problems.add(
            new ConfigProblem(
                WorkerConfig.ROOT + ".plugins-dir",
                "plugin jar " + jar + " cannot be read: " + e.getMessage(),
                ""));
        continue;
      }
      if (declared.isEmpty()) {
        log.warn("plugin jar {} declares no {}", jar, WorkerPlugin.class.getName());
        continue;
      }
      collectJar(loader, declared, jar.toString(), config, found, problems);
    }
  }

  /** Adds the class-path plugins of {@code services}. */
  private static void collect(
      ServiceLoader<WorkerPlugin> services,
      String source,
      WorkerConfig config,
      List<LoadedPlugin> found,
      List<ConfigProblem> problems) {
    try {
      for (ServiceLoader.Provider<WorkerPlugin> provider : services.stream().toList()) {
        WorkerPlugin plugin = provider.get();
        found.add(new LoadedPlugin(plugin, source, pluginConfig(plugin, null, config)));
      }
    } catch (ServiceConfigurationError | ConfigException e) {
      problems.add(
          new ConfigProblem(
              PLUGINS, "cannot load a plugin from " + source + ": " + e.getMessage(), ""));
    }
  }

  /**
   * Adds the providers that the jar's own service file declares. The jar's loader also sees the
   * class path's service files; their providers are not this jar's and are skipped. A declared
   * provider that still resolves to a class outside the jar is an error that says why.
   */
  private static void collectJar(
      PluginClassLoader loader,
      Set<String> declared,
      String source,
      WorkerConfig config,
      List<LoadedPlugin> found,
      List<ConfigProblem> problems) {
    try {
      for (ServiceLoader.Provider<WorkerPlugin> provider :
          ServiceLoader.load(WorkerPlugin.class, loader).stream().toList()) {
        String type = provider.type().getName();
        if (!declared.contains(type)) {
          continue;
        }
        if (provider.type().getClassLoader() != loader) {
          problems.add(
              new ConfigProblem(
                  PLUGINS,
                  "plugin jar "
                      + source
                      + " declares "
                      + type
                      + ", but that class is not in the jar (or its package is one the runtime"
                      + " shares with every plugin: "
                      + String.join(" ", PluginClassLoader.SHARED_PREFIXES)
                      + "); put the plugin in a package of its own",
                  ""));
          continue;
        }
        WorkerPlugin plugin = provider.get();
        found.add(new LoadedPlugin(plugin, source, pluginConfig(plugin, loader, config)));
      }
    } catch (ServiceConfigurationError | ConfigException e) {
      problems.add(
          new ConfigProblem(
              PLUGINS, "cannot load a plugin from " + source + ": " + e.getMessage(), ""));
    }
  }

  /** The provider class names in the jar's own {@code META-INF/services} file, if any. */
  private static Set<String> declaredProviders(PluginClassLoader loader) throws IOException {
    URL services = loader.findResource("META-INF/services/" + WorkerPlugin.class.getName());
    Set<String> names = new LinkedHashSet<>();
    if (services == null) {
      return names;
    }
    try (InputStream in = services.openStream()) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\\R")) {
        String name = line.replaceFirst("#.*", "").trim();
        if (!name.isEmpty()) {
          names.add(name);
        }
      }
    }
    return names;
  }

  /**
   * Settings under {@code pubsub-worker.plugins} must belong to a loaded plugin and be declared by
   * its reference.conf: each setting path the worker's config gives a plugin must exist in the
   * plugin's defaults, or lie under an object the defaults declare empty ({@code routes {}}: a map
   * whose keys the plugin chooses). Subtrees that only repeat class-path defaults (a plugin's
   * reference.conf in the executable jar, with the plugin not loaded) are not the user's and pass.
   */
  private static void checkSettings(
      WorkerConfig config,
      ClassLoader parent,
      List<LoadedPlugin> found,
      List<ConfigProblem> problems) {
    Config classPathDefaults = ConfigFactory.defaultReference(parent);
    Map<String, LoadedPlugin> byName = new HashMap<>();
    found.forEach(p -> byName.put(p.name(), p));
    for (String name : new java.util.TreeSet<>(config.plugins().root().keySet())) {
      String quoted = ConfigUtil.quoteString(name);
      String path = PLUGINS + "." + quoted;
      Config given = config.plugins().hasPath(quoted) ? subtree(config.plugins(), quoted) : null;
      Config reference =
          classPathDefaults.hasPath(path)
              ? java.util.Objects.requireNonNullElse(
                  subtree(classPathDefaults, path), ConfigFactory.empty())
              : ConfigFactory.empty();
      LoadedPlugin plugin = byName.get(name);
      if (plugin == null) {
        if (given == null || !given.root().equals(reference.root())) {
          problems.add(
              new ConfigProblem(
                  PLUGINS + "." + name,
                  "no plugin is named '"
                      + name
                      + "'; plugins found: "
                      + (byName.isEmpty()
                          ? "none"
                          : String.join(", ", new java.util.TreeSet<>(byName.keySet()))),
                  origin(config.plugins().root().get(name))));
        }
        continue;
      }
      if (given == null) {
        problems.add(
            new ConfigProblem(
                PLUGINS + "." + name,
                "must be an object of plugin " + name + "'s settings",
                origin(config.plugins().root().get(name))));
        continue;
      }
      Config declared = jarDefaults(plugin, path).withFallback(reference);
      for (Map.Entry<String, com.typesafe.config.ConfigValue> e : given.entrySet()) {
        if (!declares(declared, e.getKey())) {
          problems.add(
              new ConfigProblem(
                  PLUGINS + "." + name + "." + e.getKey(),
                  "unknown setting of plugin "
                      + name
                      + " (its reference.conf declares "
                      + (declared.isEmpty()
                          ? "no settings"
                          : String.join(", ", new java.util.TreeSet<>(declared.root().keySet())))
                      + ")",
                  origin(e.getValue())));
        }
      }
    }
  }

  /** Whether {@code path} is a declared setting, or lies under a declared empty object. */
  private static boolean declares(Config declared, String path) {
    if (declared.hasPathOrNull(path)) {
      return true;
    }
    List<String> parts = ConfigUtil.splitPath(path);
    for (int i = parts.size() - 1; i > 0; i--) {
      String prefix = ConfigUtil.joinPath(parts.subList(0, i));
      if (declared.hasPathOrNull(prefix)) {
        com.typesafe.config.ConfigValue v = declared.getValue(prefix);
        return v instanceof com.typesafe.config.ConfigObject o && o.isEmpty();
      }
    }
    return false;
  }

  private static Config jarDefaults(LoadedPlugin plugin, String path) {
    if (!(plugin.plugin().getClass().getClassLoader() instanceof PluginClassLoader loader)) {
      return ConfigFactory.empty();
    }
    URL reference = loader.findResource("reference.conf");
    if (reference == null) {
      return ConfigFactory.empty();
    }
    Config defaults = ConfigFactory.parseURL(reference).resolve();
    Config own = defaults.hasPath(path) ? subtree(defaults, path) : null;
    return own == null ? ConfigFactory.empty() : own;
  }

  private static Config subtree(Config config, String path) {
    try {
      return config.getConfig(path);
    } catch (ConfigException.WrongType e) {
      return null;
    }
  }

  private static String origin(com.typesafe.config.ConfigValue value) {
    if (value == null) {
      return "";
    }
    com.typesafe.config.ConfigOrigin o = value.origin();
    String where = o.filename() != null ? o.filename() : o.url() != null ? o.url().toString() : "";
    if (where.isEmpty()) {
      return o.description();
    }
    return where + (o.lineNumber() > 0 ? ":" + o.lineNumber() : "");
  }

  /** The plugin's settings over the defaults in its own jar's reference.conf, if any. */
  private static Config pluginConfig(
      WorkerPlugin plugin, PluginClassLoader jarLoader, WorkerConfig config) {
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
