package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiFuture;
import com.google.cloud.pubsub.v1.AckReplyConsumerWithResponse;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The emulator enforces exactly-once delivery: once an ack id's deadline has lapsed (and the
 * message has been redelivered under a new one), acking the old id fails.
 */
class ExactlyOnceDeliveryTest {

  private record Delivery(PubsubMessage message, AckReplyConsumerWithResponse reply) {}

  @Test
  void ack_after_the_deadline_lapsed_is_not_successful() throws Exception {
    PubSubEmulator pubsub = TestServices.pubsub();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder()
                .setNamePrefix("eod")
                .setExactlyOnceDelivery(true)
                .build());
    List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    Subscriber subscriber =
        pubsub
            .newSubscriberWithAckResponse(
                fixture.subscription(),
                (message, reply) -> deliveries.add(new Delivery(message, reply)))
            // No lease extension: the receipt modack sets the deadline once and it lapses. The
            // client never sets less than 10 s; a small maximum keeps it at that instead of the
            // 60 s exactly-once default.
            .setMaxAckExtensionPeriodDuration(Duration.ZERO)
            .setMinDurationPerAckExtensionDuration(Duration.ofSeconds(1))
            .setMaxDurationPerAckExtensionDuration(Duration.ofSeconds(2))
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      String messageId = pubsub.publish(fixture.topic(), "charge card 42");

      // Hold the first delivery without acking until the emulator, its deadline lapsed, delivers
      // the message again under a new ack id.
      await().atMost(Duration.ofSeconds(60)).until(() -> deliveries.size() >= 2);
      Delivery first = deliveries.get(0);
      Delivery second = deliveries.get(1);
      assertThat(first.message().getMessageId()).isEqualTo(messageId);
      assertThat(second.message().getMessageId()).isEqualTo(messageId);

      ApiFuture<AckResponse> lateAck = first.reply().ack();
      assertThat(lateAck.get(30, TimeUnit.SECONDS)).isNotEqualTo(AckResponse.SUCCESSFUL);
      assertThat(lateAck.get()).isEqualTo(AckResponse.INVALID);

      ApiFuture<AckResponse> timelyAck = second.reply().ack();
      assertThat(timelyAck.get(30, TimeUnit.SECONDS)).isEqualTo(AckResponse.SUCCESSFUL);
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
  }
}
