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
 * {@code max-ack-extension-per-call} and {@code min-ack-extension}: the longest ack deadline the
 * client asks for (the stream ack deadline and every extension), which bounds how long Pub/Sub
 * holds a message after its worker died, and the shortest extension with exactly-once delivery.
 * Defaults from {@code reference.conf}; checked against Pub/Sub's limits and against each other as
 * the client library requires.
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
  void the_defaults_are_60s_both_the_stream_deadline_and_exactly_onces_minimum()
      throws IOException {
    // 60s, not Pub/Sub's 600s maximum: the client sends this as the stream ack deadline, so it is
    // how long a crashed worker's unread messages stay leased (CrashRecoveryTest has the bound).
    SubscriptionConfig s = load("").subscriptions().get("orders");
    assertThat(s.client().maxAckExtensionPerCall()).isEqualTo(Duration.ofSeconds(60));
    assertThat(s.client().minAckExtension()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void a_lower_bound_with_a_lower_minimum_is_taken() throws IOException {
    SubscriptionConfig s =
        load("min-ack-extension = 10s, max-ack-extension-per-call = 20s")
            .subscriptions()
            .get("orders");
    assertThat(s.client().maxAckExtensionPerCall()).isEqualTo(Duration.ofSeconds(20));
    assertThat(s.client().minAckExtension()).isEqualTo(Duration.ofSeconds(10));
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
  void it_must_not_be_below_min_ack_extension() throws IOException {
    // The default min-ack-extension is 60s: a 30s bound would contradict it.
    assertThat(problems("max-ack-extension-per-call = 30s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.max-ack-extension-per-call: must be at least"
                + " min-ack-extension (1m), but was 30s");
    assertThat(problems("min-ack-extension = 45s, max-ack-extension-per-call = 44s"))
        .singleElement()
        .asString()
        .contains("must be at least min-ack-extension (45s), but was 44s");
  }

  @Test
  void it_may_equal_min_ack_extension_up_to_the_clients_own_exactly_once_minimum()
      throws IOException {
    // Equal bounds: the worker gives the client the maximum alone, whose exactly-once minimum is
    // then min(60s, maximum) - the configured one exactly while it is at most 60s.
    for (String equal : List.of("10s", "30s", "60s")) {
      SubscriptionConfig s =
          load("min-ack-extension = " + equal + ", max-ack-extension-per-call = " + equal)
              .subscriptions()
              .get("orders");
      assertThat(s.client().minAckExtension()).isEqualTo(s.client().maxAckExtensionPerCall());
    }
    assertThat(problems("min-ack-extension = 120s, max-ack-extension-per-call = 120s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.max-ack-extension-per-call: must be above"
                + " min-ack-extension when that is above 1m (the client library refuses equal"
                + " bounds there), but both were 2m");
    SubscriptionConfig above =
        load("min-ack-extension = 120s, max-ack-extension-per-call = 121s")
            .subscriptions()
            .get("orders");
    assertThat(above.client().maxAckExtensionPerCall()).isEqualTo(Duration.ofSeconds(121));
  }

  @Test
  void a_bad_min_ack_extension_is_reported_once_not_again_as_a_comparison() throws IOException {
    assertThat(problems("min-ack-extension = 601s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.min-ack-extension: must be at most 600s (Pub/Sub's"
                + " limit)");
  }
}
