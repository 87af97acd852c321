package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code max-ack-extension-per-call}: the bound on one ack-deadline extension, which bounds how
 * long Pub/Sub holds a message after its worker died. Defaults from {@code reference.conf}; checked
 * against Pub/Sub's limits and against {@code min-ack-extension}.
 */
class AckExtensionConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String subscriptionSettings) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "demo-project"
          subscriptions { orders { name = "orders-sub", handler = "orders", %s } }
        }
        """
            .formatted(subscriptionSettings));
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String subscriptionSettings) throws IOException {
    try {
      load(subscriptionSettings);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    throw new AssertionError("expected the config to be invalid");
  }

  @Test
  void the_default_is_pubsubs_maximum_600s() throws IOException {
    SubscriptionConfig s = load("").subscriptions().get("orders");
    assertThat(s.maxAckExtensionPerCall()).isEqualTo(Duration.ofSeconds(600));
    assertThat(s.minAckExtension()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void a_lower_bound_with_a_lower_minimum_is_taken() throws IOException {
    SubscriptionConfig s =
        load("min-ack-extension = 10s, max-ack-extension-per-call = 20s")
            .subscriptions()
            .get("orders");
    assertThat(s.maxAckExtensionPerCall()).isEqualTo(Duration.ofSeconds(20));
    assertThat(s.minAckExtension()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void it_must_lie_within_pubsubs_ack_deadline_limits() throws IOException {
    assertThat(problems("min-ack-extension = 5s, max-ack-extension-per-call = 9s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.max-ack-extension-per-call: must be between 10s"
                + " and 600s (Pub/Sub's ack deadline limits), but was PT9S");
    assertThat(problems("max-ack-extension-per-call = 601s"))
        .singleElement()
        .asString()
        .contains("must be between 10s and 600s");
  }

  @Test
  void it_must_stay_above_min_ack_extension() throws IOException {
    // The default min-ack-extension is 60s: a 30s bound would contradict it.
    assertThat(problems("max-ack-extension-per-call = 30s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.max-ack-extension-per-call: must be above"
                + " min-ack-extension (PT1M), as the client library requires, but was PT30S");
    assertThat(problems("min-ack-extension = 60s, max-ack-extension-per-call = 60s"))
        .singleElement()
        .asString()
        .contains("must be above min-ack-extension");
  }
}
