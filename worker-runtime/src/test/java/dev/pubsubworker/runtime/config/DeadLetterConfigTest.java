package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code poison-exceptions}, {@code dead-letter-topic} and {@code worker-id}: read, normalised, and
 * refused with one line naming the setting. (Whether a listed class exists is checked when the
 * worker is built, through the handler's class loader: {@code TerminalFailuresResolveTest}.)
 */
class DeadLetterConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String subscription, String top) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "demo-project"
          %s
          subscriptions { orders { name = "orders-sub", handler = "orders", %s } }
        }
        """
            .formatted(top, subscription));
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String subscription, String top) throws IOException {
    try {
      load(subscription, top);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    throw new AssertionError("expected the config to be invalid");
  }

  @Test
  void defaults_are_no_poison_classes_no_topic_and_the_host_name_later() throws IOException {
    WorkerConfig c = load("", "");
    SubscriptionConfig s = c.subscriptions().get("orders");
    assertThat(s.failures().poisonExceptions()).isEmpty();
    assertThat(s.failures().deadLetterTopic()).isEmpty();
    assertThat(c.workerId()).isEmpty();
  }

  @Test
  void a_short_topic_name_is_in_the_workers_project_and_a_full_path_is_kept() throws IOException {
    assertThat(load("dead-letter-topic = orders-dead", "").subscriptions().get("orders"))
        .extracting(s -> s.failures().deadLetterTopic())
        .isEqualTo(Optional.of("projects/demo-project/topics/orders-dead"));
    assertThat(
            load("dead-letter-topic = \"projects/other/topics/dlq\"", "")
                .subscriptions()
                .get("orders")
                .failures()
                .deadLetterTopic())
        .contains("projects/other/topics/dlq");
  }

  @Test
  void a_dead_letter_subscription_is_in_the_workers_project_a_full_path_is_kept_bad_ones_named()
      throws IOException {
    assertThat(load("", "").subscriptions().get("orders").failures().deadLetterSubscription())
        .isEmpty();
    assertThat(
            load("dead-letter-subscription = orders-dead-sub", "")
                .subscriptions()
                .get("orders")
                .failures()
                .deadLetterSubscription())
        .contains("projects/demo-project/subscriptions/orders-dead-sub");
    assertThat(
            load("dead-letter-subscription = \"projects/other/subscriptions/dlq\"", "")
                .subscriptions()
                .get("orders")
                .failures()
                .deadLetterSubscription())
        .contains("projects/other/subscriptions/dlq");
    assertThat(problems("dead-letter-subscription = \"projects/x/topics/t\"", ""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.dead-letter-subscription: must be a subscription"
                + " id");
  }

  @Test
  void a_redrive_subscription_is_read_like_one_and_is_neither_the_subscription_nor_its_dlq()
      throws IOException {
    assertThat(load("", "").subscriptions().get("orders").failures().redriveSubscription())
        .isEmpty();
    assertThat(
            load("redrive-subscription = orders-redrive", "")
                .subscriptions()
                .get("orders")
                .failures()
                .redriveSubscription())
        .contains("projects/demo-project/subscriptions/orders-redrive");
    assertThat(problems("redrive-subscription = \"projects/x/topics/t\"", ""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.redrive-subscription: must be a subscription id");
    assertThat(problems("redrive-subscription = orders-sub", ""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.redrive-subscription: must be another"
                + " subscription than this one (orders-sub)");
    assertThat(
            problems(
                "redrive-subscription = \"projects/demo-project/subscriptions/orders-sub\"", ""))
        .singleElement()
        .asString()
        .contains("must be another subscription than this one");
    assertThat(problems("redrive-subscription = dlq, dead-letter-subscription = dlq", ""))
        .isNotEmpty()
        .allSatisfy(
            p ->
                assertThat(p)
                    .contains("redrive-subscription must not be the dead-letter-subscription"));
  }

  @Test
  void poison_exceptions_are_read_from_the_subscription_or_its_defaults() throws IOException {
    WorkerConfig c =
        load(
            "poison-exceptions = [\"com.example.Bad\", \"com.example.Outer$Inner\"]",
            "subscription-defaults { dead-letter-topic = shared-dead }");
    SubscriptionConfig s = c.subscriptions().get("orders");
    assertThat(s.failures().poisonExceptions())
        .containsExactly("com.example.Bad", "com.example.Outer$Inner");
    assertThat(s.failures().deadLetterTopic()).contains("projects/demo-project/topics/shared-dead");
  }

  @Test
  void a_malformed_dead_letter_topic_is_one_line_naming_the_setting() throws IOException {
    for (String bad :
        List.of(
            "\"projects/p/subscriptions/s\"",
            "ab",
            "goog-dead",
            "\"projects/p/topics/\"",
            "\"9lives\"")) {
      assertThat(problems("dead-letter-topic = " + bad, ""))
          .singleElement()
          .asString()
          .startsWith("pubsub-worker.subscriptions.orders.dead-letter-topic: must be a topic id")
          .contains("worker.conf:");
    }
  }

  @Test
  void poison_exceptions_must_be_a_list_of_class_names() throws IOException {
    assertThat(problems("poison-exceptions = \"com.example.Bad\"", ""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.poison-exceptions: expected a list [...], but got"
                + " 'com.example.Bad'");
    assertThat(problems("poison-exceptions = [\"not a class\"]", ""))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.poison-exceptions: must list fully qualified"
                + " exception class names")
        .contains("'not a class'");
  }

  @Test
  void a_worker_id_longer_than_255_characters_is_refused() throws IOException {
    assertThat(load("", "worker-id = pod-7").workerId()).isEqualTo("pod-7");
    assertThat(problems("", "worker-id = \"" + "w".repeat(256) + "\""))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.worker-id: must be at most 255 characters");
  }
}
