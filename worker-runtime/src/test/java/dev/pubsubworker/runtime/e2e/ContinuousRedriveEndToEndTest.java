package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.pubsub.DeadLetterAttributes;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The continuous form of redrive ({@code redrive-subscription}), end to end on the embedded Pub/Sub
 * server with a Redis lock store and the real worker. A team moves its dead letters (as {@code
 * gcloud} or Dataflow would: data and attributes, onto a topic of their own) and the running worker
 * processes each as the original subscription would: exactly once, with the original message; moved
 * again, they are duplicates, as is the letter of a message that ran before it was ever
 * dead-lettered; a letter of another subscription is never run and stays, nacked.
 */
class ContinuousRedriveEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int POISONED = 5;

  private final PubSubEmulator pubsub = TestPubSub.embedded();
  private final WorkerHarness harness =
      new WorkerHarness(pubsub, SubscriptionSpec.newBuilder().setDeadLetterPolicy(5).build());
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final Set<String> poisoned = ConcurrentHashMap.newKeySet();
  private final Map<String, String> seenMessageIds = new ConcurrentHashMap<>();
  private final Set<String> seenAttributeNames = ConcurrentHashMap.newKeySet();
  private final OutcomeRecorder outcomes = new OutcomeRecorder();

  @AfterEach
  void stop() {
    harness.close();
  }

  private final MessageHandler handler =
      (InboundMessage m, dev.pubsubworker.api.HandlerContext ctx) -> {
        String id = m.attribute("id").orElseThrow();
        if (poisoned.contains(id)) {
          throw new PoisonMessageException("order " + id + " cannot be placed yet");
        }
        seenMessageIds.put(id, m.messageId());
        seenAttributeNames.addAll(m.attributes().keySet());
        effects.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      };

  /** A worker whose subscription {@code test} (the harness's) also pulls {@code redrive}. */
  private Worker worker(String key, SubscriptionName redrive) {
    WorkerConfig config =
        harness.config(
            "key = \"%s\"\nredrive-subscription = \"%s\"".formatted(key, redrive),
            "pubsub-worker.lock-store { type = redis, redis { uri = \"%s\", key-prefix = \"%s:\" } }"
                .formatted(TestServices.redis().uri(), TestServices.uniqueName("continuous")));
    return harness.create(config, handler, id -> List.of(), List.of(outcomes));
  }

  private SubscriptionName subscribe(TopicName topic, String prefix) {
    SubscriptionName s = SubscriptionName.of(pubsub.projectId(), TestServices.uniqueName(prefix));
    pubsub
        .subscriptionAdmin()
        .createSubscription(
            Subscription.newBuilder()
                .setName(s.toString())
                .setTopic(topic.toString())
                .setAckDeadlineSeconds(10)
                .build());
    return s;
  }

  /** Every message on {@code subscription} until {@code count} arrived, acked. */
  private List<PubsubMessage> drain(SubscriptionName subscription, int count) {
    Map<String, PubsubMessage> got = new ConcurrentHashMap<>();
    await()
        .atMost(WAIT)
        .until(
            () -> {
              List<ReceivedMessage> batch = pubsub.pull(subscription, 100, Duration.ofSeconds(2));
              batch.forEach(m -> got.putIfAbsent(m.getMessage().getMessageId(), m.getMessage()));
              pubsub.acknowledge(
                  subscription, batch.stream().map(ReceivedMessage::getAckId).toList());
              return got.size() >= count;
            });
    return List.copyOf(got.values());
  }

  /** Publishes {@code letters} to {@code topic} as a move would: data and attributes. */
  private void move(List<PubsubMessage> letters, TopicName topic) {
    for (PubsubMessage letter : letters) {
      pubsub.publish(topic, letter.toBuilder().clearMessageId().clearPublishTime().build());
    }
  }

  @ParameterizedTest(name = "key = {0}")
  @ValueSource(strings = {"message-id", "attribute:id"})
  void moved_dead_letters_run_once_as_the_original_subscription_would(String key) {
    SubscriptionFixture f = harness.fixture;
    SubscriptionName dead = f.requireDeadLetterSubscription();
    TopicName redriveTopic = pubsub.createTopic("redrive");
    SubscriptionName redrive = subscribe(redriveTopic, "redrive");
    Worker worker = worker(key, redrive);
    worker.start();

    // 1. po-1..po-5 are poison for now and dead-lettered; po-6 and po-7 run.
    for (int i = 1; i <= POISONED; i++) {
      poisoned.add("po-" + i);
    }
    Map<String, String> publishedIds = new ConcurrentHashMap<>();
    for (int i = 1; i <= POISONED + 2; i++) {
      publishedIds.put(
          "po-" + i,
          pubsub.publish(
              f.topic(),
              PubsubMessage.newBuilder()
                  .setData(ByteString.copyFrom("order " + i, StandardCharsets.UTF_8))
                  .putAttributes("id", "po-" + i)
                  .build()));
    }
    await()
        .atMost(WAIT)
        .until(
            () ->
                outcomes.count(Outcome.DEAD_LETTERED) == POISONED
                    && outcomes.count(Outcome.PROCESSED) == 2);
    List<PubsubMessage> letters = drain(dead, POISONED);

    // 2. Fixed; the team moves the letters onto the redrive topic: each runs once, as the
    // message it first was (its id, its attributes without the dead-letter ones).
    poisoned.clear();
    seenAttributeNames.clear();
    move(letters, redriveTopic);
    await().atMost(WAIT).until(() -> effects.size() == POISONED + 2);
    assertThat(effects).allSatisfy((id, n) -> assertThat(n.get()).as(id).isEqualTo(1));
    for (int i = 1; i <= POISONED; i++) {
      assertThat(seenMessageIds.get("po-" + i)).isEqualTo(publishedIds.get("po-" + i));
    }
    assertThat(seenAttributeNames)
        .as("no dead-letter attribute reaches the handler")
        .containsExactly("id");

    // 3. Moved again, with the letter of po-6 (which ran before it was ever dead-lettered) and a
    // letter of another subscription: nothing runs again, and the foreign letter never runs.
    long processed = outcomes.count(Outcome.PROCESSED);
    List<PubsubMessage> again = new ArrayList<>(letters);
    again.add(
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom("order 6", StandardCharsets.UTF_8))
            .putAttributes("id", "po-6")
            .putAttributes(DeadLetterAttributes.MESSAGE_ID, publishedIds.get("po-6"))
            .putAttributes(DeadLetterAttributes.SUBSCRIPTION, f.subscription().toString())
            .build());
    PubsubMessage foreign =
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom("refund 99", StandardCharsets.UTF_8))
            .putAttributes("id", "po-99")
            .putAttributes(
                DeadLetterAttributes.SUBSCRIPTION,
                SubscriptionName.of(pubsub.projectId(), "refunds-sub").toString())
            .build();
    again.add(foreign);
    move(again, redriveTopic);
    await().atMost(WAIT).until(() -> outcomes.count(Outcome.DUPLICATE) == POISONED + 1);
    assertThat(outcomes.count(Outcome.PROCESSED)).isEqualTo(processed);
    assertThat(effects).hasSize(POISONED + 2).doesNotContainKey("po-99");
    assertThat(effects).allSatisfy((id, n) -> assertThat(n.get()).as(id).isEqualTo(1));

    // The foreign letter was nacked, not lost: it is still on the redrive subscription.
    worker.stop();
    List<PubsubMessage> left = drain(redrive, 1);
    assertThat(left).extracting(m -> m.getAttributesOrThrow("id")).containsExactly("po-99");
    assertThat(effects).doesNotContainKey("po-99");
  }
}
