package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Keys are namespaced per subscription (docs/design.md, "Key namespaces"): one worker, two
 * subscriptions on Google's Pub/Sub emulator, and the attack from issue 13 — a junk message on one
 * subscription whose key attribute spells another subscription's business key.
 */
class KeyNamespaceEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** Subscription junk keys by attribute ref; subscription orders by template:orders:{id}. */
  private static WorkerConfig twoSubscriptions(
      WorkerHarness junk, WorkerHarness orders, String namespaceSetting) {
    String hocon =
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 10s
          subscriptions {
            junk {
              name = "%s"
              handler = "test"
              key = "attribute:ref"
              %s
            }
            orders {
              name = "%s"
              handler = "test"
              key = "template:orders:{id}"
              %s
            }
          }
        }
        """
            .formatted(
                junk.pubsub.projectId(),
                junk.pubsub.hostPort(),
                junk.fixture.subscription().getSubscription(),
                namespaceSetting,
                orders.fixture.subscription().getSubscription(),
                namespaceSetting);
    return WorkerConfig.load(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  private static void publish(WorkerHarness h, String data, Map<String, String> attributes) {
    h.pubsub.publish(
        h.fixture.topic(),
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8))
            .putAllAttributes(attributes)
            .build());
  }

  @Test
  void a_message_on_one_subscription_cannot_suppress_another_subscriptions_key() {
    RecordingHandler handler = new RecordingHandler();
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness junk = new WorkerHarness(SubscriptionSpec.defaults());
        WorkerHarness orders = new WorkerHarness(SubscriptionSpec.defaults())) {
      junk.create(twoSubscriptions(junk, orders, ""), handler, id -> List.of(), List.of(outcomes))
          .start();
      // Before namespaces both resolved to the stored key "orders:bi-victim".
      publish(junk, "junk", Map.of("ref", "orders:bi-victim"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      publish(orders, "bi-victim", Map.of("id", "bi-victim"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 2);
      assertThat(handler.effects("bi-victim")).isEqualTo(1);
      assertThat(outcomes.count(Outcome.DUPLICATE)).isZero();
    }
  }

  @Test
  void subscriptions_that_share_a_key_namespace_de_duplicate_across_each_other() {
    RecordingHandler handler = new RecordingHandler();
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness junk = new WorkerHarness(SubscriptionSpec.defaults());
        WorkerHarness orders = new WorkerHarness(SubscriptionSpec.defaults())) {
      junk.create(
              twoSubscriptions(junk, orders, "key-namespace = shop"),
              handler,
              id -> List.of(),
              List.of(outcomes))
          .start();
      publish(junk, "first", Map.of("ref", "orders:po-7"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      publish(orders, "second", Map.of("id", "po-7"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DUPLICATE) == 1);
      assertThat(handler.effects("first")).isEqualTo(1);
      assertThat(handler.effects("second")).isZero();
    }
  }
}
