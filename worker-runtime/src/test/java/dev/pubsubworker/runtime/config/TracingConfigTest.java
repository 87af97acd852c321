package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code observability.tracing}: defaults from {@code reference.conf}, and each bad value refused.
 */
class TracingConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String tracing) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "demo-project"
          subscriptions { orders { name = "orders-sub", handler = "orders" } }
          observability.tracing { %s }
        }
        """
            .formatted(tracing));
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String tracing) throws IOException {
    try {
      load(tracing);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    throw new AssertionError("expected the config to be invalid");
  }

  @Test
  void tracing_exports_nothing_by_default() throws IOException {
    TracingConfig t = load("").observability().tracing();
    assertThat(t.exporter()).isEqualTo(TracingConfig.Exporter.NONE);
    assertThat(t.otlpEndpoint()).isEqualTo(URI.create("http://localhost:4318/v1/traces"));
    assertThat(t.sampleRatio()).isEqualTo(1.0);
    assertThat(t.serviceName()).isEqualTo("pubsub-worker");
  }

  @Test
  void otlp_with_an_endpoint_and_a_ratio_is_taken() throws IOException {
    TracingConfig t =
        load("exporter = otlp, otlp-endpoint = \"https://collector:4318/v1/traces\","
                + " sample-ratio = 0.25, service-name = orders-worker")
            .observability()
            .tracing();
    assertThat(t.exporter()).isEqualTo(TracingConfig.Exporter.OTLP);
    assertThat(t.otlpEndpoint()).isEqualTo(URI.create("https://collector:4318/v1/traces"));
    assertThat(t.sampleRatio()).isEqualTo(0.25);
    assertThat(t.serviceName()).isEqualTo("orders-worker");
  }

  @Test
  void each_bad_value_is_one_line_naming_the_setting() throws IOException {
    assertThat(problems("exporter = jaeger"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.observability.tracing.exporter:");
    assertThat(problems("otlp-endpoint = \"collector:4318\""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.observability.tracing.otlp-endpoint: must be an http:// or https:// URL");
    assertThat(problems("sample-ratio = 1.5"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.observability.tracing.sample-ratio: must be a number from 0.0 to 1.0,"
                + " but was '1.5'");
    assertThat(problems("sample-ratio = half"))
        .singleElement()
        .asString()
        .contains("must be a number from 0.0 to 1.0");
    assertThat(problems("service-name = \"\""))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.observability.tracing.service-name: must not be empty");
    assertThat(problems("exporters = otlp"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.observability.tracing.exporters: unknown setting");
  }
}
