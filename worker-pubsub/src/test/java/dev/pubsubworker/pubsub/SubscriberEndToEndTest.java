package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The outcome table end to end, on a plain google-cloud-pubsub {@link Subscriber} (no runtime, no
 * Guice) against the embedded Pub/Sub server, with a {@link GuardedReceiver}: a duplicate publish
 * is acked without running the handler, a key held by a crashed holder parks and runs when the
 * lease lapses, a poison message and an unkeyed one are dead-lettered with their diagnostics (the
 * unkeyed one never runs), and Pub/Sub confirms every ack.
 */
class SubscriberEndToEndTest {

  private static EmbeddedPubSub pubsub;
  private static ManagedChannel channel;
  private static TransportChannelProvider channels;
  private static TopicAdminClient topics;
  private static SubscriptionAdminClient subscriptions;
  private static final AtomicInteger NAMES = new AtomicInteger();

  private final InMemoryLockBackend store = new InMemoryLockBackend();
  private final IdempotencyGuard guard = IdempotencyGuard.newBuilder(store).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final List<AckResponse> ackResponses = new CopyOnWriteArrayList<>();
  private final List<AutoCloseable> closing = new ArrayList<>();

  private final MessageHandler handler =
      (message, context) -> {
        runs.computeIfAbsent(message.attribute("order_id").orElse("?"), k -> new AtomicInteger())
            .incrementAndGet();
        if (message.dataAsUtf8().equals("unparseable")) {
          throw new PoisonMessageException("order " + message.messageId() + " does not parse");
        }
      };

  @BeforeAll
  static void server() throws Exception {
    pubsub = EmbeddedPubSub.start();
    channel = ManagedChannelBuilder.forTarget(pubsub.hostPort()).usePlaintext().build();
    channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    topics =
        TopicAdminClient.create(
            TopicAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
    subscriptions =
        SubscriptionAdminClient.create(
            SubscriptionAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
  }

  @AfterAll
  static void stopServer() throws Exception {
    topics.close();
    subscriptions.close();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    pubsub.close();
  }

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    guard.close();
  }

  @Test
  void the_outcome_table_on_a_plain_subscriber_with_exactly_once_delivery() throws Exception {
    TopicName topic = topic("orders");
    TopicName deadTopic = topic("orders-dead");
    SubscriptionName subscription = subscription(topic, true);
    SubscriptionName deadLetters = subscription(deadTopic, false);
    Publisher deadLetterPublisher =
        Publisher.newBuilder(deadTopic)
            .setChannelProvider(channels)
            .setCredentialsProvider(NoCredentialsProvider.create())
            .setEnableMessageOrdering(true)
            .build();
    closing.add(
        () -> {
          deadLetterPublisher.shutdown();
          deadLetterPublisher.awaitTermination(10, TimeUnit.SECONDS);
        });
    // A crashed holder's claim on po-2, which lapses in a second.
    assertThat(store.claim(ClaimRequest.of("orders:po-2", Duration.ofSeconds(1), "crashed")))
        .isInstanceOf(ClaimResult.Won.class);

    GuardedReceiver receiver =
        GuardedReceiver.newBuilder("orders", handler)
            .guard(guard)
            .key(MessageKey.attribute("order_id").withNamespace("orders"))
            .deadLetters(DeadLetterPublisher.of(deadLetterPublisher))
            .subscriptionPath(subscription.toString())
            .workerId("test-worker")
            .listener(recorder())
            .build();
    Subscriber subscriber =
        start(subscription, Subscriber.newBuilder(subscription.toString(), receiver));
    closing.add(() -> stop(receiver, subscriber));

    publish(topic, "po-1", "order one");
    await().atMost(Duration.ofSeconds(20)).until(() -> outcomes.contains(Outcome.PROCESSED));
    publish(topic, "po-1", "order one again"); // a republish: new message id, same key
    publish(topic, "po-2", "order two"); // held by the crashed holder
    String poisonId = publish(topic, "po-3", "unparseable");
    String unkeyedId = publish(topic, null, "no order id");

    await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.size() == 5);
    assertThat(outcomes)
        .containsExactlyInAnyOrder(
            Outcome.PROCESSED,
            Outcome.DUPLICATE,
            Outcome.PARKED_THEN_PROCESSED,
            Outcome.DEAD_LETTERED,
            Outcome.DEAD_LETTERED);
    assertThat(runs)
        .as("each key's handler ran once; the unkeyed message never ran")
        .containsOnlyKeys("po-1", "po-2", "po-3")
        .allSatisfy((k, n) -> assertThat(n).hasValue(1));
    await().atMost(Duration.ofSeconds(10)).until(() -> ackResponses.size() == 5);
    assertThat(ackResponses).as("Pub/Sub confirmed every ack").containsOnly(AckResponse.SUCCESSFUL);

    List<ReceivedMessage> letters = pull(deadLetters, 2);
    Map<String, Map<String, String>> byOriginal = new ConcurrentHashMap<>();
    for (ReceivedMessage m : letters) {
      Map<String, String> a = m.getMessage().getAttributesMap();
      byOriginal.put(a.get(DeadLetterAttributes.MESSAGE_ID), a);
    }
    assertThat(byOriginal).containsOnlyKeys(poisonId, unkeyedId);
    assertThat(byOriginal.get(poisonId))
        .containsEntry(DeadLetterAttributes.ERROR_CLASS, PoisonMessageException.class.getName())
        .containsEntry(DeadLetterAttributes.SUBSCRIPTION, subscription.toString())
        .containsEntry(DeadLetterAttributes.WORKER_ID, "test-worker")
        .containsEntry(DeadLetterAttributes.ERROR_MESSAGE, "order " + poisonId + " does not parse")
        .containsEntry("order_id", "po-3");
    assertThat(byOriginal.get(unkeyedId))
        .containsEntry(DeadLetterAttributes.ERROR_CLASS, "no-key")
        .containsEntry(
            DeadLetterAttributes.ERROR_MESSAGE, "no key: attribute:order_id did not resolve");
    assertThat(store.claim(ClaimRequest.of("orders:po-3", Duration.ofSeconds(1), "republish")))
        .as("the poison message's claim was released: a corrected republish runs")
        .isInstanceOf(ClaimResult.Won.class);
  }

  @Test
  void the_plain_receiver_form_serves_a_subscription_without_exactly_once() throws Exception {
    TopicName topic = topic("refunds");
    SubscriptionName subscription = subscription(topic, false);
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder("refunds", handler)
            .guard(guard)
            .key(MessageKey.attribute("order_id").withNamespace("refunds"))
            .listener(recorder())
            .build();
    Subscriber subscriber =
        start(
            subscription,
            Subscriber.newBuilder(subscription.toString(), receiver.asMessageReceiver()));
    closing.add(() -> stop(receiver, subscriber));

    publish(topic, "po-9", "refund");
    await().atMost(Duration.ofSeconds(20)).until(() -> outcomes.size() == 1);
    publish(topic, "po-9", "refund again");
    await().atMost(Duration.ofSeconds(20)).until(() -> outcomes.size() == 2);
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE);
    assertThat(runs.get("po-9")).hasValue(1);
    assertThat(ackResponses).as("the plain form has no ack responses").isEmpty();
  }

  private ReceiverListener recorder() {
    return new ReceiverListener() {
      @Override
      public void settled(String subscription, Outcome outcome, Duration handlerTime) {
        outcomes.add(outcome);
      }

      @Override
      public void ackResponse(String subscription, AckResponse response) {
        ackResponses.add(response);
      }
    };
  }

  private static Subscriber start(SubscriptionName subscription, Subscriber.Builder builder) {
    Subscriber subscriber =
        builder
            .setChannelProvider(channels)
            .setCredentialsProvider(NoCredentialsProvider.create())
            .build();
    subscriber.startAsync().awaitRunning();
    return subscriber;
  }

  /** The graceful stop the receiver's documentation describes. */
  private static void stop(GuardedReceiver receiver, Subscriber subscriber) throws Exception {
    receiver.beginStop();
    subscriber.stopAsync();
    assertThat(receiver.stop(Duration.ofSeconds(10)).handlers()).isZero();
    subscriber.awaitTerminated(30, TimeUnit.SECONDS);
    receiver.close();
  }

  private static TopicName topic(String prefix) {
    TopicName name = TopicName.of("engine-test", prefix + "-" + NAMES.incrementAndGet());
    topics.createTopic(name);
    return name;
  }

  private static SubscriptionName subscription(TopicName topic, boolean exactlyOnce) {
    SubscriptionName name =
        SubscriptionName.of("engine-test", topic.getTopic() + "-sub-" + NAMES.incrementAndGet());
    subscriptions.createSubscription(
        Subscription.newBuilder()
            .setName(name.toString())
            .setTopic(topic.toString())
            .setAckDeadlineSeconds(10)
            .setEnableExactlyOnceDelivery(exactlyOnce)
            .build());
    return name;
  }

  /** Publishes one message with attribute {@code order_id} (none when null); its message id. */
  private static String publish(TopicName topic, String orderId, String data) {
    PubsubMessage.Builder m = PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(data));
    if (orderId != null) {
      m.putAttributes("order_id", orderId);
    }
    return topics.publish(topic, List.of(m.build())).getMessageIds(0);
  }

  /** Pulls until {@code count} messages came, within 20 s. */
  private static List<ReceivedMessage> pull(SubscriptionName subscription, int count) {
    List<ReceivedMessage> received = new CopyOnWriteArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              received.addAll(
                  subscriptions
                      .pull(
                          PullRequest.newBuilder()
                              .setSubscription(subscription.toString())
                              .setMaxMessages(count - received.size())
                              .build())
                      .getReceivedMessagesList());
              return received.size() >= count;
            });
    return received;
  }
}
