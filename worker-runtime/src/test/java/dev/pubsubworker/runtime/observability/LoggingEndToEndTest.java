package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.runtime.config.LogFormat;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The JSON log lines of a real run on the embedded Pub/Sub server, at DEBUG: every line parses and
 * carries the Cloud Logging fields, dispatch lines carry the MDC fields and the subscription label,
 * WARN and ERROR lines their source location, keys appear only hashed (key-format = sha256), and no
 * payload ever appears.
 */
class LoggingEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void json_lines_parse_carry_the_dispatch_fields_and_never_a_payload_or_a_plain_key()
      throws Exception {
    String payloadMarker = "PAYLOAD-" + UUID.randomUUID();
    String businessKey = "po-" + UUID.randomUUID();
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    MessageHandler handler =
        (message, context) -> {
          if (calls.incrementAndGet() == 1) {
            throw new IllegalStateException("supplier timed out");
          }
          done.incrementAndGet();
        };
    List<String> lines;
    String firstId;
    try (CapturedLog captured = CapturedLog.attach("json");
        EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config =
          w.config(
              "key = \"template:orders:{order_id}\"",
              "pubsub-worker.logging { format = json, key-format = sha256 }");
      assertThat(config.logging().format()).isEqualTo(LogFormat.JSON);
      Observability observability = w.observability(config);
      Worker worker = w.create(config, handler, observability);
      observability.start(worker);
      worker.start();
      String payload = "{\"orderId\":\"" + businessKey + "\",\"card\":\"" + payloadMarker + "\"}";
      firstId = w.publish(payload, Map.of("order_id", businessKey));
      await().atMost(WAIT).until(() -> done.get() == 1);
      // A republish (a duplicate, logged at DEBUG with its key) and an unkeyed message (an ERROR).
      w.publish(payload, Map.of("order_id", businessKey));
      w.publish(payload, Map.of());
      await()
          .atMost(WAIT)
          .until(
              () ->
                  captured.events.stream().anyMatch(l -> l.contains("skipped"))
                      && captured.events.stream().anyMatch(l -> l.contains("has no key")));
      worker.stop();
      lines = new ArrayList<>(captured.events);
    }

    assertThat(lines).hasSizeGreaterThan(5);
    List<JsonNode> parsed = new ArrayList<>();
    for (String line : lines) {
      assertThat(line).doesNotContain(payloadMarker).doesNotContain(businessKey);
      assertThat(line.indexOf('\n')).as("one object per line").isEqualTo(line.length() - 1);
      JsonNode n = JSON.readTree(line);
      assertThat(n.get("severity").asText()).isIn("DEBUG", "INFO", "WARNING", "ERROR");
      assertThat(n.hasNonNull("message")).isTrue();
      assertThat(n.hasNonNull("time")).isTrue();
      assertThat(n.hasNonNull("logger")).isTrue();
      assertThat(n.hasNonNull("thread")).isTrue();
      parsed.add(n);
    }

    JsonNode failure =
        parsed.stream()
            .filter(n -> n.get("message").asText().startsWith("handler test failed"))
            .findFirst()
            .orElseThrow();
    assertThat(failure.get("severity").asText()).isEqualTo("ERROR");
    assertThat(failure.get("subscription").asText()).isEqualTo("test");
    assertThat(failure.get("messageId").asText()).isEqualTo(firstId);
    assertThat(failure.get("deliveryAttempt").isNumber()).isTrue();
    assertThat(failure.get("fence").asLong()).isEqualTo(1);
    assertThat(failure.get("key").asText()).matches("sha256:[0-9a-f]{16}");
    assertThat(failure.get("message").asText())
        .contains("\njava.lang.IllegalStateException: supplier timed out\n\tat ");
    // An ERROR: located (by default from WARN up) at the worker's code that wrote it; labelled.
    JsonNode location = failure.get("logging.googleapis.com/sourceLocation");
    assertThat(location.get("function").asText()).startsWith("dev.pubsubworker.");
    assertThat(location.get("file").asText()).endsWith(".java");
    assertThat(location.get("line").asText()).matches("[1-9][0-9]*");
    assertThat(failure.get("logging.googleapis.com/labels").get("subscription").asText())
        .isEqualTo("test");
    assertThat(failure.get("logging.googleapis.com/labels").size()).isEqualTo(1);

    JsonNode duplicate =
        parsed.stream()
            .filter(n -> n.get("message").asText().startsWith("duplicate of key"))
            .findFirst()
            .orElseThrow();
    assertThat(duplicate.get("severity").asText()).isEqualTo("DEBUG");
    assertThat(duplicate.has("logging.googleapis.com/sourceLocation")).isFalse();
    assertThat(duplicate.get("key").asText()).isEqualTo(failure.get("key").asText());

    JsonNode unkeyed =
        parsed.stream()
            .filter(n -> n.get("message").asText().contains("has no key"))
            .findFirst()
            .orElseThrow();
    // Terminal (fail closed) and, on a subscription without a dead-letter topic, nacked: an ERROR.
    assertThat(unkeyed.get("severity").asText()).isEqualTo("ERROR");
    assertThat(unkeyed.get("subscription").asText()).isEqualTo("test");
    assertThat(unkeyed.has("key")).isFalse();
    assertThat(Set.of("messageId", "deliveryAttempt")).allMatch(unkeyed::has);
  }
}
