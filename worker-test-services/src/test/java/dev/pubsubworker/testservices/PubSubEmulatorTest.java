package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PubSubEmulatorTest {

  private final PubSubEmulator pubsub = TestServices.pubsub();

  @Test
  void published_message_arrives_through_streaming_pull_and_is_acked() throws Exception {
    SubscriptionFixture fixture =
        pubsub.createSubscription(SubscriptionSpec.newBuilder().setNamePrefix("stream").build());
    BlockingQueue<PubsubMessage> received = new LinkedBlockingQueue<>();
    Subscriber subscriber =
        pubsub
            .newSubscriber(
                fixture.subscription(),
                (PubsubMessage message, AckReplyConsumer reply) -> {
                  received.add(message);
                  reply.ack();
                })
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      String messageId =
          pubsub.publish(
              fixture.topic(),
              PubsubMessage.newBuilder()
                  .setData(ByteString.copyFromUtf8("hello"))
                  .putAttributes("key", "order-1")
                  .build());

      await().atMost(Duration.ofSeconds(30)).until(() -> !received.isEmpty());
      PubsubMessage message = received.take();
      assertThat(message.getMessageId()).isEqualTo(messageId);
      assertThat(message.getData().toString(StandardCharsets.UTF_8)).isEqualTo("hello");
      assertThat(message.getAttributesMap()).containsEntry("key", "order-1");
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void unary_pull_returns_published_messages_and_returns_empty_at_its_deadline() {
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    String first = pubsub.publish(fixture.topic(), "one");
    String second = pubsub.publish(fixture.topic(), "two");

    // One Pull may return fewer messages than are there: collect across pulls.
    Map<String, ReceivedMessage> pulled = new ConcurrentHashMap<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              pubsub
                  .pull(fixture.subscription(), 10, Duration.ofSeconds(2))
                  .forEach(received -> pulled.put(received.getMessage().getMessageId(), received));
              return pulled.size() >= 2;
            });
    assertThat(pulled.keySet()).containsExactlyInAnyOrder(first, second);
    assertThat(pulled.get(first).getMessage().getData().toStringUtf8()).isEqualTo("one");
    pubsub.acknowledge(
        fixture.subscription(), pulled.values().stream().map(ReceivedMessage::getAckId).toList());

    long started = System.nanoTime();
    assertThat(pubsub.pull(fixture.subscription(), 10, Duration.ofMillis(500))).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void subscription_options_are_applied() {
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setNamePrefix("options")
            .setAckDeadline(Duration.ofSeconds(42))
            .setExactlyOnceDelivery(true)
            .setMessageOrdering(true)
            .setDeadLetterPolicy(7)
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(5))
            .build();

    SubscriptionFixture fixture = pubsub.createSubscription(spec);

    com.google.pubsub.v1.Subscription created =
        pubsub.subscriptionAdmin().getSubscription(fixture.subscription());
    assertThat(created.getTopic()).isEqualTo(fixture.topic().toString());
    assertThat(created.getAckDeadlineSeconds()).isEqualTo(42);
    assertThat(created.getEnableExactlyOnceDelivery()).isTrue();
    assertThat(created.getEnableMessageOrdering()).isTrue();
    assertThat(created.getDeadLetterPolicy().getMaxDeliveryAttempts()).isEqualTo(7);
    assertThat(created.getDeadLetterPolicy().getDeadLetterTopic())
        .isEqualTo(fixture.deadLetterTopic().orElseThrow().toString());
    assertThat(created.getRetryPolicy().getMinimumBackoff().getSeconds()).isEqualTo(1);
    assertThat(created.getRetryPolicy().getMaximumBackoff().getSeconds()).isEqualTo(5);
    assertThat(fixture.subscription().getSubscription()).startsWith("options_");
    assertThat(
            pubsub
                .subscriptionAdmin()
                .getSubscription(fixture.requireDeadLetterSubscription())
                .getTopic())
        .isEqualTo(fixture.deadLetterTopic().orElseThrow().toString());
  }
}
