package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Terminal failures end to end (issue 15 item 3), on the embedded Pub/Sub server with a Redis lock
 * store: a poison message is published to the dead-letter topic after exactly one attempt, with the
 * added attributes and its data, attributes and ordering key intact; the original is acked and its
 * key released at once. A failed dead-letter publish nacks the message and loses nothing.
 */
class DeadLetterEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final Logger pubsubLogger = (Logger) LoggerFactory.getLogger("dev.pubsubworker");
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeEach
  void capture() {
    log.start();
    pubsubLogger.addAppender(log);
  }

  @AfterEach
  void release() {
    pubsubLogger.detachAppender(log);
  }

  private static String redisStore() {
    return """
        pubsub-worker.lock-store {
          type = redis
          redis { uri = "%s", key-prefix = "%s:" }
        }
        """
        .formatted(TestServices.redis().uri(), TestServices.uniqueName("dlq"));
  }

  private static SubscriptionSpec orderedWithDeadLetters() {
    return SubscriptionSpec.newBuilder().setMessageOrdering(true).setDeadLetterPolicy(5).build();
  }

  private static PubsubMessage message(String data, Map<String, String> attributes, String key) {
    return PubsubMessage.newBuilder()
        .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8))
        .putAllAttributes(attributes)
        .setOrderingKey(key)
        .build();
  }

  /** Pulls from {@code subscription} until {@code count} messages came; acks them. */
  private static List<ReceivedMessage> pullDeadLetters(
      WorkerHarness h, SubscriptionName subscription, int count) {
    List<ReceivedMessage> got = new CopyOnWriteArrayList<>();
    await()
        .atMost(WAIT)
        .until(
            () -> {
              List<ReceivedMessage> batch = h.pubsub.pull(subscription, 10, Duration.ofSeconds(2));
              got.addAll(batch);
              h.pubsub.acknowledge(
                  subscription, batch.stream().map(ReceivedMessage::getAckId).toList());
              return got.size() >= count;
            });
    return got;
  }

  @Test
  void a_poison_exception_dead_letters_after_one_attempt_acks_and_releases_the_key() {
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  if (m.dataAsUtf8().equals("poison")) {
                    throw new PoisonMessageException("order po-1 cannot be parsed");
                  }
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(orderedWithDeadLetters())) {
      Worker worker =
          h.create(
              "key = \"attribute:id\"",
              redisStore() + "\npubsub-worker.worker-id = \"worker-a\"",
              handler,
              List.of(outcomes));
      worker.start();
      Instant before = Instant.now();
      String id =
          h.pubsub.publish(
              h.fixture.topic(),
              message("poison", Map.of("id", "po-1", "origin", "shop"), "customer-1"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DEAD_LETTERED) == 1);

      ReceivedMessage dead =
          pullDeadLetters(h, h.fixture.requireDeadLetterSubscription(), 1).get(0);
      PubsubMessage letter = dead.getMessage();
      assertThat(letter.getData().toStringUtf8()).isEqualTo("poison");
      assertThat(letter.getOrderingKey()).isEqualTo("customer-1");
      assertThat(letter.getAttributesMap())
          .containsEntry("id", "po-1")
          .containsEntry("origin", "shop")
          .containsEntry("pubsub-worker-subscription", h.fixture.subscription().toString())
          .containsEntry("pubsub-worker-message-id", id)
          .containsEntry("pubsub-worker-delivery-attempt", "1")
          .containsEntry("pubsub-worker-error-class", PoisonMessageException.class.getName())
          .containsEntry("pubsub-worker-error-message", "order po-1 cannot be parsed")
          .containsEntry("pubsub-worker-worker-id", "worker-a")
          .containsKeys("pubsub-worker-publish-time", "pubsub-worker-dead-lettered-at")
          // Pub/Sub's own forwarding names, where they mean the same:
          .containsEntry(
              "CloudPubSubDeadLetterSourceSubscription", h.fixture.subscription().getSubscription())
          .containsEntry(
              "CloudPubSubDeadLetterSourceSubscriptionProject",
              h.fixture.subscription().getProject())
          .containsEntry("CloudPubSubDeadLetterSourceDeliveryCount", "1")
          .containsEntry(
              "CloudPubSubDeadLetterSourceTopicPublishTime",
              letter.getAttributesOrThrow("pubsub-worker-publish-time"))
          // ... and nothing the client library added on receipt.
          .doesNotContainKey("googclient_deliveryattempt");
      assertThat(Instant.parse(letter.getAttributesOrThrow("pubsub-worker-dead-lettered-at")))
          .isAfterOrEqualTo(before.minusSeconds(1));
      assertThat(Instant.parse(letter.getAttributesOrThrow("pubsub-worker-publish-time")))
          .isBeforeOrEqualTo(
              Instant.parse(letter.getAttributesOrThrow("pubsub-worker-dead-lettered-at")));

      // The claim was released: a corrected republish of the same key runs at once.
      h.pubsub.publish(h.fixture.topic(), message("fixed", Map.of("id", "po-1"), "customer-1"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      assertThat(handler.effects("po-1")).isEqualTo(1);
      assertThat(outcomes.count(Outcome.IN_PROGRESS)).isZero();
      assertThat(outcomes.count(Outcome.FAILED)).isZero();
      assertThat(handler.attempts).containsExactly(1, 1);
      assertThat(log.list)
          .anySatisfy(
              e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage())
                    .contains(
                        "dead-lettered after attempt 1 to " + h.fixture.deadLetterTopic().get());
              });

      // Acked: once the worker has stopped (nacking whatever it still held), nothing is left.
      worker.stop();
      assertThat(h.pubsub.pull(h.fixture.subscription(), 10, Duration.ofSeconds(2))).isEmpty();
      assertThat(handler.calls).hasValue(2);
    }
  }

  @Test
  void under_a_mutex_a_dead_lettered_messages_key_is_free_for_the_next_message_at_once() {
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  if (m.dataAsUtf8().equals("poison")) {
                    throw new java.util.concurrent.CompletionException(
                        new PoisonMessageException("wrapped by a framework"));
                  }
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(orderedWithDeadLetters())) {
      h.create("guard = mutex\nkey = \"attribute:id\"", redisStore(), handler, List.of(outcomes))
          .start();
      h.pubsub.publish(h.fixture.topic(), message("poison", Map.of("id", "po-5"), "c-5"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DEAD_LETTERED) == 1);
      h.pubsub.publish(h.fixture.topic(), message("next", Map.of("id", "po-5"), "c-5"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      assertThat(outcomes.count(Outcome.IN_PROGRESS)).isZero();
      assertThat(
              pullDeadLetters(h, h.fixture.requireDeadLetterSubscription(), 1)
                  .get(0)
                  .getMessage()
                  .getAttributesOrThrow("pubsub-worker-error-message"))
          .isEqualTo("wrapped by a framework");
    }
  }

  @Test
  void a_configured_poison_class_and_its_subclass_dead_letter_the_same_way() {
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  switch (m.dataAsUtf8()) {
                    case "iae" -> throw new IllegalArgumentException("no such sku");
                    case "nfe" -> throw new NumberFormatException("quantity 'x'");
                    default -> {}
                  }
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(orderedWithDeadLetters())) {
      h.create(
              "key = \"attribute:id\"\npoison-exceptions = [\"java.lang.IllegalArgumentException\"]",
              redisStore(),
              handler,
              List.of(outcomes))
          .start();
      h.pubsub.publish(h.fixture.topic(), message("iae", Map.of("id", "po-1"), ""));
      h.pubsub.publish(h.fixture.topic(), message("nfe", Map.of("id", "po-2"), ""));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DEAD_LETTERED) == 2);
      List<ReceivedMessage> dead = pullDeadLetters(h, h.fixture.requireDeadLetterSubscription(), 2);
      assertThat(dead)
          .extracting(r -> r.getMessage().getAttributesOrThrow("pubsub-worker-error-class"))
          .containsExactlyInAnyOrder(
              IllegalArgumentException.class.getName(), NumberFormatException.class.getName());
      assertThat(dead)
          .extracting(r -> r.getMessage().getAttributesOrThrow("pubsub-worker-delivery-attempt"))
          .containsOnly("1");
      assertThat(handler.calls).hasValue(2);
      assertThat(outcomes.count(Outcome.FAILED)).isZero();
    }
  }

  @Test
  void an_unkeyed_or_invalid_key_message_is_dead_lettered_unrun_when_fail_closed() {
    RecordingHandler handler = new RecordingHandler();
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(orderedWithDeadLetters())) {
      // Nine copies of a 1,000-character attribute: 9,000 bytes, over Redis's 8 KiB key limit.
      h.create(
              "key = \"template:{id}{id}{id}{id}{id}{id}{id}{id}{id}\"",
              redisStore(),
              handler,
              List.of(outcomes))
          .start();
      h.pubsub.publish(h.fixture.topic(), message("unkeyed", Map.of(), ""));
      h.pubsub.publish(h.fixture.topic(), message("too-long", Map.of("id", "k".repeat(1000)), ""));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DEAD_LETTERED) == 2);
      List<ReceivedMessage> dead = pullDeadLetters(h, h.fixture.requireDeadLetterSubscription(), 2);
      assertThat(dead)
          .extracting(
              r ->
                  r.getMessage().getData().toStringUtf8()
                      + " "
                      + r.getMessage().getAttributesOrThrow("pubsub-worker-error-class")
                      + " "
                      + r.getMessage().getAttributesOrThrow("pubsub-worker-delivery-attempt"))
          .containsExactlyInAnyOrder("unkeyed no-key 1", "too-long invalid-key 1");
      assertThat(handler.calls).hasValue(0);
      assertThat(outcomes.count(Outcome.UNKEYED)).isZero();
    }
  }

  @Test
  void a_failed_dead_letter_publish_nacks_with_an_error_and_loses_nothing() {
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  throw new PoisonMessageException("never");
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      TopicName deadLetters = h.pubsub.createTopic("dl");
      Worker worker =
          h.create(
              "key = \"attribute:id\"\ndead-letter-topic = \"" + deadLetters + "\"",
              redisStore(),
              handler,
              List.of(outcomes));
      worker.start();
      // Deleted after the start-up check found it: every dead-letter publish now fails.
      h.pubsub.topicAdmin().deleteTopic(deadLetters);
      h.pubsub.publish(h.fixture.topic(), message("poison", Map.of("id", "po-9"), "customer-9"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.DEAD_LETTER_FAILED) >= 2);
      assertThat(outcomes.count(Outcome.DEAD_LETTERED)).isZero();
      assertThat(log.list)
          .anySatisfy(
              e -> {
                assertThat(e.getLevel()).isEqualTo(Level.ERROR);
                assertThat(e.getFormattedMessage())
                    .contains("but publishing it to the dead-letter topic " + deadLetters)
                    .contains("nacked for redelivery");
              });

      // Nothing was lost: once the worker has stopped, the message is still on the subscription.
      worker.stop();
      List<ReceivedMessage> left = pullDeadLetters(h, h.fixture.subscription(), 1);
      assertThat(left)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.getMessage().getData().toStringUtf8()).isEqualTo("poison");
                assertThat(r.getMessage().getOrderingKey()).isEqualTo("customer-9");
              });
      assertThat(handler.effects("po-9")).isZero();
    }
  }
}
