package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import dev.pubsubworker.runtime.cli.WorkerCli;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sample configs in {@code config/} pass {@code check-config} as a deployment would run it (a
 * separate process with GOOGLE_CLOUD_PROJECT set), and the container files agree with the worker:
 * non-root image, probes on the worker's health endpoints and port, a termination grace above the
 * shutdown grace.
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
                + "plugins/orders-example/target/plugin-orders-example-[^/]*\\.jar\\)")
        .contains("orders: orders-sub -> handler orders");
  }

  @Test
  void the_container_runs_as_non_root_and_the_manifest_matches_the_worker() throws IOException {
    String dockerfile = Files.readString(ROOT.resolve("docker/Dockerfile"));
    assertThat(dockerfile).containsPattern("(?m)^USER 10001:10001$");
    String deployment = Files.readString(ROOT.resolve("docker/k8s/deployment.yaml"));
    assertThat(deployment)
        .contains("runAsNonRoot: true")
        .contains("path: /healthz")
        .contains("path: /readyz")
        .contains("containerPort: 8080");
    int terminationGrace =
        Integer.parseInt(
            deployment.replaceAll("(?s).*terminationGracePeriodSeconds: (\\d+).*", "$1"));
    Config gke = ConfigFactory.parseFile(ROOT.resolve("config/gke-datastore.conf").toFile());
    long shutdownGrace = gke.getDuration("pubsub-worker.shutdown-grace").toSeconds();
    assertThat(terminationGrace)
        .as("the pod's kill comes well after a graceful stop's worst case (grace + bound)")
        .isGreaterThanOrEqualTo((int) (shutdownGrace + Worker.STOP_BOUND.toSeconds() + 10));
    // The default itself, not this JVM's environment (surefire sets PUBSUB_WORKER_HTTP_PORT=0).
    Config reference =
        ConfigFactory.parseResources(WorkerCli.class.getClassLoader(), "reference.conf")
            .resolve(ConfigResolveOptions.noSystem());
    assertThat(reference.getInt("pubsub-worker.observability.http-port")).isEqualTo(8080);
  }
}
