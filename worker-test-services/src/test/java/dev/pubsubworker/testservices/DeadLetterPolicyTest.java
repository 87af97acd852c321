package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A message nacked on every delivery lands on the dead-letter topic after the maximum attempts. */
class DeadLetterPolicyTest {

  private static final int MAX_DELIVERY_ATTEMPTS = 5;

  @Test
  void message_nacked_max_attempts_times_lands_on_the_dead_letter_topic() throws Exception {
    PubSubEmulator pubsub = TestServices.pubsub();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder()
                .setNamePrefix("poison")
                .setDeadLetterPolicy(MAX_DELIVERY_ATTEMPTS)
                .build());
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    Subscriber subscriber =
        pubsub
            .newSubscriber(
                fixture.subscription(),
                (PubsubMessage message, AckReplyConsumer reply) -> {
                  attempts.add(Subscriber.getDeliveryAttempt(message));
                  reply.nack();
                })
            .build();
    subscriber.startAsync().awaitRunning();
    List<ReceivedMessage> deadLetters;
    try {
      pubsub.publish(fixture.topic(), "poison pill");

      deadLetters =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      pubsub.pull(
                          fixture.requireDeadLetterSubscription(), 10, Duration.ofSeconds(1)),
                  pulled -> !pulled.isEmpty());
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }

    assertThat(deadLetters).hasSize(1);
    assertThat(deadLetters.get(0).getMessage().getData().toString(StandardCharsets.UTF_8))
        .isEqualTo("poison pill");
    assertThat(attempts).containsExactly(1, 2, 3, 4, 5);
  }
}
