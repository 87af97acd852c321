package dev.pubsubworker.runtime.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plugin jars whose classes the runtime's class path also has (as the executable jar has the
 * example plugin's; here a test plugin's classes stand in), and plugin settings checked against the
 * plugin's own reference.conf. The example plugin's own cases are in {@code worker-app}'s
 * PluginJarIsolationTest.
 */
class PluginJarIsolationTest {

  private static final String SERVICES = "META-INF/services/" + WorkerPlugin.class.getName();

  @TempDir Path dir;

  private static WorkerConfig config(String extra) {
    return WorkerConfig.load(
        ConfigFactory.parseString(
                """
                pubsub-worker {
                  project-id = p
                  subscriptions { a { name = s, handler = orders } }
                }
                """
                    + extra)
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }

  /**
   * A jar of {@link ClassPathOnlyPlugin}, whose class is on the test class path without a service
   * entry (as the example's classes are in the executable jar): its class, service file and a
   * reference.conf declaring {@code max-quantity}.
   */
  private Path twinJar(Path folder) throws IOException {
    Path jar = folder.resolve("plugin-twin.jar");
    String entry = ClassPathOnlyPlugin.class.getName().replace('.', '/') + ".class";
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new JarEntry(entry));
      try (InputStream in = ClassPathOnlyPlugin.class.getClassLoader().getResourceAsStream(entry)) {
        in.transferTo(out);
      }
      out.closeEntry();
      out.putNextEntry(new JarEntry(SERVICES));
      out.write(
          (ClassPathOnlyPlugin.class.getName() + "\n")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.closeEntry();
      out.putNextEntry(new JarEntry("reference.conf"));
      out.write(
          "pubsub-worker.plugins.class-path-only.max-quantity = 100\n"
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.closeEntry();
    }
    return jar;
  }

  @Test
  void a_plugin_jar_whose_classes_are_also_on_the_class_path_loads_from_its_jar()
      throws IOException {
    Path plugins = Files.createDirectories(dir.resolve("plugins"));
    twinJar(plugins);
    WorkerConfig settings = config("pubsub-worker.plugins-dir = \"" + plugins + "\"\n");

    List<LoadedPlugin> loaded = PluginLoader.load(settings, getClass().getClassLoader());

    LoadedPlugin orders =
        loaded.stream().filter(p -> p.name().equals("class-path-only")).findFirst().orElseThrow();
    assertThat(orders.source()).endsWith("plugin-twin.jar");
    ClassLoader pluginLoader = orders.plugin().getClass().getClassLoader();
    assertThat(pluginLoader).isInstanceOf(PluginClassLoader.class);
    // Same class name, a different class: the jar's own, not the class path's copy.
    assertThat(orders.plugin().getClass().getName()).isEqualTo(ClassPathOnlyPlugin.class.getName());
    assertThat(orders.plugin().getClass()).isNotSameAs(ClassPathOnlyPlugin.class);
    // The API stays one class, shared with the runtime.
    assertThat(orders.plugin()).isInstanceOf(WorkerPlugin.class);
    assertThat(orders.config().getInt("max-quantity")).isEqualTo(100);
  }

  @Test
  void the_jar_loader_takes_only_its_own_non_shared_packages_first() throws Exception {
    Path jar = twinJar(Files.createDirectories(dir.resolve("p")));
    try (PluginClassLoader loader = PluginClassLoader.forJar(jar, getClass().getClassLoader())) {
      assertThat(loader.childFirst(ClassPathOnlyPlugin.class.getName())).isTrue();
      assertThat(loader.childFirst(WorkerPlugin.class.getName())).isFalse();
      assertThat(loader.childFirst("com.google.inject.Module")).isFalse();
      assertThat(loader.childFirst("com.fasterxml.jackson.databind.ObjectMapper")).isFalse();
      assertThat(loader.loadClass(WorkerPlugin.class.getName())).isSameAs(WorkerPlugin.class);
      assertThat(loader.loadClass(ClassPathOnlyPlugin.class.getName()).getClassLoader())
          .isSameAs(loader);
    }
  }

  @Test
  void a_jar_that_names_a_class_it_does_not_contain_is_a_clear_error() throws IOException {
    Path plugins = Files.createDirectories(dir.resolve("plugins"));
    try (JarOutputStream out =
        new JarOutputStream(Files.newOutputStream(plugins.resolve("empty.jar")))) {
      out.putNextEntry(new JarEntry(SERVICES));
      out.write(
          (ClassPathOnlyPlugin.class.getName() + "\n")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.closeEntry();
    }
    WorkerConfig settings = config("pubsub-worker.plugins-dir = \"" + plugins + "\"\n");
    assertThatThrownBy(() -> PluginLoader.load(settings, getClass().getClassLoader()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .singleElement()
                    .asString()
                    .startsWith(
                        "pubsub-worker.plugins: plugin jar "
                            + plugins.resolve("empty.jar")
                            + " declares "
                            + ClassPathOnlyPlugin.class.getName()
                            + ", but that class is not in the jar"));
  }

  @Test
  void a_folder_plugin_accepts_its_declared_settings_and_any_key_under_a_declared_empty_map()
      throws Exception {
    Path plugins = Files.createDirectories(dir.resolve("plugins"));
    PluginJars.build(
        plugins,
        "mapped.jar",
        Map.of(
            "mappedplugin.MappedPlugin",
            """
            package mappedplugin;

            public final class MappedPlugin implements dev.pubsubworker.api.WorkerPlugin {
              @Override public String name() { return "mapped"; }
              @Override public com.google.inject.Module module(com.typesafe.config.Config c) {
                return binder -> {};
              }
            }
            """),
        Map.of(
            SERVICES,
            "mappedplugin.MappedPlugin\n",
            "reference.conf",
            "pubsub-worker.plugins.mapped { greeting = hello, routes {} }\n"));
    String folder = "pubsub-worker.plugins-dir = \"" + plugins + "\"\n";
    List<LoadedPlugin> ok =
        PluginLoader.load(
            config(folder + "pubsub-worker.plugins.mapped { greeting = hi, routes.eu = x }\n"),
            getClass().getClassLoader());
    assertThat(ok)
        .filteredOn(p -> p.name().equals("mapped"))
        .singleElement()
        .satisfies(p -> assertThat(p.config().getString("routes.eu")).isEqualTo("x"));
    assertThatThrownBy(
            () ->
                PluginLoader.load(
                    config(folder + "pubsub-worker.plugins.mapped.greting = hi\n"),
                    getClass().getClassLoader()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining(
            "pubsub-worker.plugins.mapped.greting: unknown setting of plugin mapped (its"
                + " reference.conf declares greeting, routes)");
  }
}
