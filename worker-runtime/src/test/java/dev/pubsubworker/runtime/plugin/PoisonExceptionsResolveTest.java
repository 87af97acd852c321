package dev.pubsubworker.runtime.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code poison-exceptions} is resolved when the worker is built (so by {@code check-config} too),
 * through the class loader of the subscription's handler: a plugin jar's own exception class is
 * found although the runtime cannot see it; an unknown class or one that is not a Throwable is one
 * line naming the setting.
 */
class PoisonExceptionsResolveTest {

  private static final String SERVICES = "META-INF/services/" + WorkerPlugin.class.getName();

  @TempDir Path dir;

  private Path pluginJar() throws Exception {
    Path plugins = dir.resolve("plugins");
    java.nio.file.Files.createDirectories(plugins);
    PluginJars.build(
        plugins,
        "poison.jar",
        Map.of(
            "poisonplugin.PoisonPlugin",
            """
            package poisonplugin;

            public final class PoisonPlugin implements dev.pubsubworker.api.WorkerPlugin {
              @Override public String name() { return "poison"; }
              @Override public com.google.inject.Module module(com.typesafe.config.Config c) {
                return binder -> dev.pubsubworker.api.Handlers.bind(binder, "poisoned")
                    .toInstance((m, ctx) -> { throw new BadOrderException("bad"); });
              }
            }
            """,
            "poisonplugin.BadOrderException",
            """
            package poisonplugin;

            public class BadOrderException extends RuntimeException {
              public BadOrderException(String m) { super(m); }
            }
            """),
        Map.of(SERVICES, "poisonplugin.PoisonPlugin\n"));
    return plugins;
  }

  private Worker create(String subscriptions, String defaults) throws Exception {
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(
                    """
                    pubsub-worker {
                      project-id = p
                      plugins-dir = "%s"
                      subscription-defaults { %s }
                      subscriptions { %s }
                    }
                    """
                        .formatted(pluginJar(), defaults, subscriptions))
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    List<LoadedPlugin> plugins = PluginLoader.load(config, getClass().getClassLoader());
    return Worker.newBuilder(config).plugins(plugins).build();
  }

  @Test
  void a_class_only_the_plugin_jar_has_is_resolved_through_the_handlers_class_loader() {
    assertThatThrownBy(() -> Class.forName("poisonplugin.BadOrderException"))
        .isInstanceOf(ClassNotFoundException.class);
    assertThatCode(
            () ->
                create(
                    "a { name = s, handler = poisoned, poison-exceptions ="
                        + " [\"poisonplugin.BadOrderException\", \"java.io.IOException\"] }",
                    ""))
        .doesNotThrowAnyException();
  }

  @Test
  void an_unknown_class_and_a_class_that_is_not_a_throwable_are_one_line_each() {
    assertThatThrownBy(
            () ->
                create(
                    "a { name = s, handler = poisoned, poison-exceptions ="
                        + " [\"com.example.Missing\", \"java.lang.String\"] }",
                    ""))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems().stream().map(Object::toString))
                    .containsExactly(
                        "pubsub-worker.subscriptions.a.poison-exceptions: lists"
                            + " com.example.Missing, a class that the handler 'poisoned' cannot load"
                            + " (not on its plugin's class path) (String: 5)",
                        "pubsub-worker.subscriptions.a.poison-exceptions: lists java.lang.String,"
                            + " which is not an exception (a Throwable) (String: 5)"));
  }

  @Test
  void a_bad_class_in_the_defaults_is_reported_once_under_the_defaults() {
    assertThatThrownBy(
            () ->
                create(
                    "a { name = s, handler = poisoned }, b { name = t, handler = poisoned }",
                    "poison-exceptions = [\"com.example.Missing\"]"))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .singleElement()
                    .asString()
                    .startsWith(
                        "pubsub-worker.subscription-defaults.poison-exceptions: lists"
                            + " com.example.Missing"));
  }
}
