package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import org.junit.jupiter.api.Test;

/**
 * The example plugin on the class path: its settings checked against its own reference.conf, and
 * named among the plugins found. (The runtime's PluginJarIsolationTest has the jar cases, with a
 * test plugin.)
 */
class PluginJarIsolationTest {

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

  @Test
  void a_plugin_setting_its_reference_conf_does_not_declare_is_refused() {
    // orders-example is on the test class path, with max-quantity in its reference.conf.
    assertThatThrownBy(
            () ->
                PluginLoader.load(
                    config("pubsub-worker.plugins.orders-example.max-quantty = 5\n"),
                    getClass().getClassLoader()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .containsExactly(
                        "pubsub-worker.plugins.orders-example.max-quantty: unknown setting of"
                            + " plugin orders-example (its reference.conf declares max-quantity)"
                            + " (String: 5)"));
    assertThat(
            PluginLoader.load(
                config("pubsub-worker.plugins.orders-example.max-quantity = 5\n"),
                getClass().getClassLoader()))
        .anySatisfy(p -> assertThat(p.config().getInt("max-quantity")).isEqualTo(5));
  }

  @Test
  void settings_for_a_plugin_that_is_not_loaded_are_refused() {
    assertThatThrownBy(
            () ->
                PluginLoader.load(
                    config("pubsub-worker.plugins.billing { currency = EUR }\n"),
                    getClass().getClassLoader()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .singleElement()
                    .asString()
                    .startsWith(
                        "pubsub-worker.plugins.billing: no plugin is named 'billing'; plugins"
                            + " found: ")
                    .contains("orders-example"));
  }
}
