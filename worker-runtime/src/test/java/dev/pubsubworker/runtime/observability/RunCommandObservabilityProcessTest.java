package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run} as a real process with {@code PUBSUB_WORKER_LOG_FORMAT=json} and the HTTP port from
 * {@code PUBSUB_WORKER_HTTP_PORT}: the environment reaches logback at boot and the config, the
 * endpoints answer while it runs, and its whole output is Cloud Logging JSON without the payload.
 */
class RunCommandObservabilityProcessTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void a_worker_process_logs_json_and_serves_metrics_and_health_until_sigterm() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          observability.http-host = "127.0.0.1"
          subscriptions {
            orders { name = "%s", handler = orders, key = "template:orders:{order_id}" }
          }
        }
        """
            .formatted(
                pubsub.projectId(), pubsub.hostPort(), fixture.subscription().getSubscription()));
    int port = freePort();
    Path log = dir.resolve("worker.log");
    ProcessBuilder builder = CliProcess.builder(log, "run", "--config", config.toString());
    builder.environment().put("PUBSUB_WORKER_LOG_FORMAT", "json");
    builder.environment().put("PUBSUB_WORKER_HTTP_PORT", Integer.toString(port));
    Process worker = builder.start();
    String marker = "PAYLOAD-" + UUID.randomUUID();
    InetSocketAddress server = new InetSocketAddress("127.0.0.1", port);
    try {
      await().atMost(WAIT).until(() -> Files.readString(log).contains("worker started"));
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);
      assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);
      pubsub.publish(
          fixture.topic(),
          PubsubMessage.newBuilder()
              .setData(
                  ByteString.copyFrom(
                      "{\"orderId\":\"po-1\",\"sku\":\"A\",\"quantity\":1,\"note\":\""
                          + marker
                          + "\"}",
                      StandardCharsets.UTF_8))
              .putAttributes("order_id", "po-1")
              .build());
      await()
          .atMost(WAIT)
          .until(
              () ->
                  new PrometheusText(Http.get(server, "/metrics").body())
                          .valueOrZero(
                              "pubsub_worker_messages_settled_total",
                              "subscription",
                              "orders",
                              "outcome",
                              "processed")
                      == 1);
      worker.destroy(); // SIGTERM
      assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(worker.exitValue()).isZero();
    } finally {
      worker.destroyForcibly();
    }

    List<String> lines = Files.readAllLines(log);
    // The process's output, in the test's report, for diagnosis.
    lines.forEach(System.out::println);
    ObjectMapper json = new ObjectMapper();
    List<JsonNode> parsed = new ArrayList<>();
    for (String line : lines) {
      assertThat(line).doesNotContain(marker);
      if (line.isBlank()) {
        continue;
      }
      JsonNode n = json.readTree(line);
      assertThat(n.get("severity").asText()).as(line).isIn("DEBUG", "INFO", "WARNING", "ERROR");
      parsed.add(n);
    }
    assertThat(parsed)
        .anySatisfy(
            n -> {
              assertThat(n.get("message").asText()).startsWith("placed order po-1");
              assertThat(n.get("subscription").asText()).isEqualTo("orders");
              // The key as stored: the subscription's namespace, then template:orders:{order_id}.
              assertThat(n.get("key").asText()).isEqualTo("orders:orders:po-1");
              assertThat(n.get("fence").asLong()).isEqualTo(1);
              assertThat(n.has("messageId")).isTrue();
            });
    assertThat(parsed)
        .anySatisfy(
            n ->
                assertThat(n.get("message").asText())
                    .isEqualTo(
                        "metrics and health on http://127.0.0.1:"
                            + port
                            + " (/metrics, /healthz, /readyz)"));
    assertThat(parsed)
        .anySatisfy(
            n ->
                assertThat(n.get("message").asText())
                    .startsWith("worker stopped: ")
                    .endsWith(
                        " 0 abandoned (interrupted, nacked; 0 claim(s) released); 0"
                            + " delivery(ies) nacked without running"));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
