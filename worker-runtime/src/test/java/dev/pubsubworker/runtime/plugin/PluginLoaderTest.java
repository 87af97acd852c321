package dev.pubsubworker.runtime.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.Key;
import com.google.inject.TypeLiteral;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginLoaderTest {

  @TempDir Path dir;

  private static final String PLUGIN_SOURCE =
      """
      package folderplugin;

      import dev.pubsubworker.api.Handlers;
      import dev.pubsubworker.api.WorkerPlugin;
      import dev.pubsubworker.runtime.plugin.FolderPluginProbe;

      public final class FolderPlugin implements WorkerPlugin {
        @Override public String name() { return "folder-plugin"; }
        @Override public com.google.inject.Module module(com.typesafe.config.Config config) {
          String greeting = config.getString("greeting");
          return binder -> Handlers.bind(binder, "folder").toInstance((message, context) -> {
            FolderPluginProbe.GREETINGS.add(greeting + " " + message.messageId());
          });
        }
      }
      """;

  private WorkerConfig config(String extra) {
    return WorkerConfig.load(
        ConfigFactory.parseString(
                """
                pubsub-worker {
                  project-id = p
                  subscriptions { a { name = s, handler = folder } }
                }
                """
                    + extra)
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }

  @Test
  void a_plugin_jar_in_the_plugins_folder_is_loaded_in_its_own_class_loader_with_its_defaults()
      throws Exception {
    Path plugins = dir.resolve("plugins");
    java.nio.file.Files.createDirectories(plugins);
    PluginJars.build(
        plugins,
        "folder-plugin.jar",
        Map.of("folderplugin.FolderPlugin", PLUGIN_SOURCE),
        Map.of(
            "META-INF/services/dev.pubsubworker.api.WorkerPlugin", "folderplugin.FolderPlugin\n",
            "reference.conf", "pubsub-worker.plugins.folder-plugin.greeting = hello\n"));

    WorkerConfig settings = config("pubsub-worker.plugins-dir = \"" + plugins + "\"\n");
    List<LoadedPlugin> loaded = PluginLoader.load(settings, getClass().getClassLoader());
    LoadedPlugin folder =
        loaded.stream().filter(p -> p.name().equals("folder-plugin")).findFirst().orElseThrow();
    assertThat(folder.source()).endsWith("folder-plugin.jar");
    assertThat(folder.plugin().getClass().getClassLoader())
        .isNotSameAs(getClass().getClassLoader());
    assertThat(folder.config().getString("greeting")).isEqualTo("hello");

    // Its settings in the worker's config win over the jar's defaults.
    WorkerConfig overridden =
        config(
            "pubsub-worker.plugins-dir = \""
                + plugins
                + "\"\npubsub-worker.plugins.folder-plugin.greeting = hi\n");
    LoadedPlugin again =
        PluginLoader.load(overridden, getClass().getClassLoader()).stream()
            .filter(p -> p.name().equals("folder-plugin"))
            .findFirst()
            .orElseThrow();
    assertThat(again.config().getString("greeting")).isEqualTo("hi");

    Worker worker = Worker.newBuilder(overridden).plugins(List.of(again)).build();
    Map<String, MessageHandler> handlers =
        worker.injector().getInstance(Key.get(new TypeLiteral<Map<String, MessageHandler>>() {}));
    assertThat(handlers).containsKey("folder");
  }

  @Test
  void a_missing_plugins_folder_is_a_config_problem() {
    WorkerConfig settings = config("pubsub-worker.plugins-dir = \"" + dir.resolve("nope") + "\"\n");
    assertThatThrownBy(() -> PluginLoader.load(settings, getClass().getClassLoader()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .singleElement()
                    .asString()
                    .startsWith("pubsub-worker.plugins-dir: is not a folder"));
  }

  /** A plugin that binds the handler {@code dup}. */
  static final class AuditPlugin implements WorkerPlugin {
    @Override
    public String name() {
      return "audit";
    }

    @Override
    public com.google.inject.Module module(com.typesafe.config.Config config) {
      return binder -> Handlers.bind(binder, "dup").toInstance((m, c) -> {});
    }
  }

  /** Another plugin that binds the handler {@code dup}. */
  static final class BillingPlugin implements WorkerPlugin {
    @Override
    public String name() {
      return "billing";
    }

    @Override
    public com.google.inject.Module module(com.typesafe.config.Config config) {
      return binder -> Handlers.bind(binder, "dup").toInstance((m, c) -> {});
    }
  }

  @Test
  void two_plugins_binding_one_handler_name_fail_at_start_up_naming_both() {
    WorkerConfig settings = config("");
    List<LoadedPlugin> plugins =
        List.of(
            new LoadedPlugin(new AuditPlugin(), "class path", ConfigFactory.empty()),
            new LoadedPlugin(new BillingPlugin(), "class path", ConfigFactory.empty()));
    assertThatThrownBy(() -> Worker.newBuilder(settings).plugins(plugins).build())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("dup")
        .hasMessageContaining("AuditPlugin")
        .hasMessageContaining("BillingPlugin");
  }

  @Test
  void a_plugin_whose_module_fails_is_reported_by_name() {
    WorkerPlugin broken =
        new WorkerPlugin() {
          @Override
          public String name() {
            return "broken";
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config config) {
            throw new IllegalStateException("missing setting 'endpoint'");
          }
        };
    assertThatThrownBy(
            () ->
                Worker.newBuilder(config(""))
                    .plugins(List.of(new LoadedPlugin(broken, "x.jar", ConfigFactory.empty())))
                    .build())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("plugin broken (x.jar) failed to create its module")
        .hasMessageContaining("missing setting 'endpoint'");
  }
}
