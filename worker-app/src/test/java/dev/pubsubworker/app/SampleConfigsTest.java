package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sample configs in {@code config/} pass {@code check-config} as a deployment would run it (a
 * separate process with GOOGLE_CLOUD_PROJECT set). The container and deployment files are checked
 * by {@link ContainerImageTest}, {@link KubernetesManifestsTest} and {@link
 * ComputeEngineFilesTest}.
 */
class SampleConfigsTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "local.conf",
        "gke-datastore.conf",
        "redis-memorystore.conf",
        "postgres-cloudsql.conf"
      })
  void each_sample_config_passes_check_config(String file) throws Exception {
    Path config = ROOT.resolve("config").resolve(file);
    assertThat(config).exists();
    Path log = Files.createTempFile("check-config", ".log");
    // As the executable jar runs it, from the repository's root: the example plugin comes from
    // the jar `mvn package` left in plugins/orders-example/target, as a user's plugin would;
    // local.conf names that folder itself, the others get it from the environment.
    ProcessBuilder pb =
        AppProcess.builderWithoutExamplePlugin(log, "check-config", "--config", config.toString())
            .directory(ROOT.toFile());
    pb.environment().put("GOOGLE_CLOUD_PROJECT", "sample-project");
    pb.environment().remove("PUBSUB_EMULATOR_HOST");
    pb.environment().remove("PUBSUB_WORKER_PLUGINS_DIR");
    if (!file.equals("local.conf")) {
      pb.environment()
          .put(
              "PUBSUB_WORKER_PLUGINS_DIR",
              ROOT.resolve("plugins/orders-example/target").toString());
    }
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(log);
    assertThat(p.exitValue()).as(output).isZero();
    assertThat(output)
        .contains("config OK")
        .containsPattern(
            "orders-example \\(dev.pubsubworker.plugins.orders.OrdersPlugin, .*"
                + "plugins/orders-example/target/pubsub-worker-plugin-orders-example-[^/]*\\.jar\\)")
        .contains("orders: orders-sub -> handler orders");
  }
}
