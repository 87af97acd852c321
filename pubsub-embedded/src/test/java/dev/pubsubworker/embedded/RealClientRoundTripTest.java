package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiFuture;
import com.google.api.gax.batching.FlowControlSettings;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The real Publisher and Subscriber against the embedded server, via the JUnit extension. */
@EmbeddedPubSubTest
class RealClientRoundTripTest {

  private final PubSubTarget target;

  RealClientRoundTripTest(EmbeddedPubSub pubsub) {
    this.target = new PubSubTarget(pubsub.hostPort(), "round-trip");
  }

  @Test
  void a_nine_megabyte_message_round_trips_through_publisher_and_subscriber() throws Exception {
    TopicName topic = target.createTopic("large");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    byte[] payload = new byte[9 * 1024 * 1024];
    new Random(42).nextBytes(payload);
    Publisher publisher = target.publisher(topic).build();
    try {
      publisher
          .publish(PubsubMessage.newBuilder().setData(ByteString.copyFrom(payload)).build())
          .get(30, TimeUnit.SECONDS);
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }

    List<ByteString> received = new ArrayList<>();
    Subscriber subscriber =
        target
            .subscriber(
                subscription,
                (message, consumer) -> {
                  synchronized (received) {
                    received.add(message.getData());
                  }
                  consumer.ack();
                })
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                synchronized (received) {
                  return !received.isEmpty();
                }
              });
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
    assertThat(received.get(0).toByteArray()).isEqualTo(payload);
  }

  @Test
  void a_subscriber_with_flow_control_drains_a_backlog_and_every_message_is_acked_once()
      throws Exception {
    TopicName topic = target.createTopic("backlog");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    int count = 1_000;
    Publisher publisher = target.publisher(topic).build();
    try {
      List<ApiFuture<String>> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ids.add(
            publisher.publish(
                PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8("m" + i)).build()));
      }
      for (ApiFuture<String> id : ids) {
        id.get(30, TimeUnit.SECONDS);
      }
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }

    Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    Subscriber subscriber =
        target
            .subscriber(
                subscription,
                (message, consumer) -> {
                  deliveries
                      .computeIfAbsent(message.getMessageId(), k -> new AtomicInteger())
                      .incrementAndGet();
                  consumer.ack();
                })
            .setFlowControlSettings(
                FlowControlSettings.newBuilder().setMaxOutstandingElementCount(100L).build())
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> deliveries.size() >= count);
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
    assertThat(deliveries).hasSize(count);
    assertThat(deliveries.values()).allMatch(n -> n.get() == 1);
    assertThat(target.pullOnce(subscription)).isEmpty();
  }

  @Test
  void a_long_run_of_one_ordering_key_reaches_the_subscriber_in_order() throws Exception {
    TopicName topic = target.createTopic("ordered");
    SubscriptionName subscription =
        target.createSubscription(topic, Subscription.newBuilder().setEnableMessageOrdering(true));
    int count = 1_000;
    Publisher publisher = target.publisher(topic).setEnableMessageOrdering(true).build();
    try {
      List<ApiFuture<String>> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ids.add(
            publisher.publish(
                PubsubMessage.newBuilder()
                    .setData(ByteString.copyFromUtf8(Integer.toString(i)))
                    .setOrderingKey("one-key")
                    .build()));
      }
      for (ApiFuture<String> id : ids) {
        id.get(30, TimeUnit.SECONDS);
      }
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }

    List<Integer> received = new ArrayList<>();
    Subscriber subscriber =
        target
            .subscriber(
                subscription,
                (message, consumer) -> {
                  synchronized (received) {
                    received.add(Integer.parseInt(message.getData().toStringUtf8()));
                  }
                  consumer.ack();
                })
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                synchronized (received) {
                  return received.size() >= count;
                }
              });
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
    synchronized (received) {
      assertThat(received).hasSize(count).isSorted();
    }
  }
}
