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
 * {@code in-progress-max-wait}: how long a delivery whose key is held waits, parked, before it is
 * nacked. A duration with a unit, not negative, at most {@code max-ack-extension}; per subscription
 * with a default in {@code subscription-defaults}.
 */
class InProgressMaxWaitConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String defaults, String subscriptionSettings) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "demo-project"
          subscription-defaults { %s }
          subscriptions { orders { name = "orders-sub", handler = "orders", %s } }
        }
        """
            .formatted(defaults, subscriptionSettings));
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String subscriptionSettings) throws IOException {
    try {
      load("", subscriptionSettings);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    throw new AssertionError("expected the config to be invalid");
  }

  @Test
  void the_default_is_two_minutes() throws IOException {
    assertThat(load("", "").subscriptions().get("orders").failures().inProgressMaxWait())
        .isEqualTo(Duration.ofMinutes(2));
  }

  @Test
  void zero_turns_parking_off_and_defaults_apply_per_subscription() throws IOException {
    assertThat(load("", "in-progress-max-wait = 0s").subscriptions().get("orders"))
        .extracting(s -> s.failures().inProgressMaxWait())
        .isEqualTo(Duration.ZERO);
    assertThat(load("in-progress-max-wait = 45s", "").subscriptions().get("orders"))
        .extracting(s -> s.failures().inProgressMaxWait())
        .isEqualTo(Duration.ofSeconds(45));
  }

  @Test
  void a_bare_number_is_refused() throws IOException {
    assertThat(problems("in-progress-max-wait = 30"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.in-progress-max-wait: a duration needs a unit, such"
                + " as 30s");
  }

  @Test
  void a_negative_wait_is_refused() throws IOException {
    assertThat(problems("in-progress-max-wait = -1s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.in-progress-max-wait: must not be negative, but was"
                + " '-1s'");
  }

  @Test
  void it_must_not_exceed_max_ack_extension() throws IOException {
    assertThat(problems("max-ack-extension = 90s, in-progress-max-wait = 91s"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.in-progress-max-wait: must be at most"
                + " max-ack-extension (90s), which bounds how long the client keeps a parked"
                + " message, but was 91s");
    assertThat(load("", "max-ack-extension = 90s, in-progress-max-wait = 90s"))
        .extracting(c -> c.subscriptions().get("orders").failures().inProgressMaxWait())
        .isEqualTo(Duration.ofSeconds(90));
  }
}
